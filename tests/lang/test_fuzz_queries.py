"""Query fuzzer: token deletions, swaps and insertions over every example and paper query,
plus deep nesting, each compiled and planned for the local engine under a deadline. Every
variant either compiles or is one located QueryError (or, at planning, Unsupported, which
the command line reports as such): never another exception, never a hang."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from tests.fuzz import deadline

from sepia.engine.hosts.session import Session
from sepia.engine.plan.planner import Unsupported
from sepia.lang import QueryError, parse_query

ROOT = Path(__file__).parents[2]
QUERIES = sorted([*ROOT.glob("examples/*/*.rq"), *(ROOT / "tests/lang/papers").glob("*.rq")])
TOKEN = re.compile(r'<[^>\s]*>|"(?:[^"\\]|\\.)*"|[?$]?\w[\w:.-]*|\S')
EXTRA = ["{", "}", "(", ")", ".", ";", ",", "UNION", "OPTIONAL", "SEQ", "WINDOW", "RANGE",
         "STEP", "0", "99999999999999999999", "FILTER", "SELECT", "*", "?x", "<urn:x>", '"',
         "MATCH", "WITHIN", "PARTITION", "BY", "NOT", "EXISTS", "|", "/", "^", "+"]


def mutate(text: str, chooser: random.Random) -> str:
    tokens = TOKEN.findall(text)
    for _ in range(chooser.randint(1, 3)):
        at = chooser.randrange(len(tokens))
        match chooser.choice(["delete", "swap", "insert"]):
            case "delete" if len(tokens) > 1:
                del tokens[at]
            case "swap":
                other = chooser.randrange(len(tokens))
                tokens[at], tokens[other] = tokens[other], tokens[at]
            case _:
                tokens.insert(at, chooser.choice(EXTRA + tokens))
    return " ".join(tokens)


def nested(depth: int, kind: str) -> str:
    prefix = "PREFIX : <http://example.org/>\nREGISTER RSTREAM :q AS SELECT * FROM NAMED " \
        "WINDOW :w ON :s [RANGE 5 STEP 1] WHERE { "
    body = {
        "groups": "{" * depth + "WINDOW :w { ?s :p ?o }" + "}" * depth,
        "union": " UNION ".join(["{ WINDOW :w { ?s :p ?o } }"] * depth),
        "parentheses": "WINDOW :w { ?s :p ?o } FILTER(" + "(" * depth + "?o" + ")" * depth + ")",
        "paths": "WINDOW :w { ?s " + "(" * depth + ":p" + ")" * depth + " ?o }",
        "optional": "WINDOW :w { ?s :p ?o }" + " OPTIONAL { ?s :p ?o" * depth + " }" * depth,
    }[kind]
    return prefix + body + " }"


def compile_and_plan(text: str, what: str, seconds: float = 10) -> None:
    with deadline(seconds, what):
        try:
            query = parse_query(text, source="fuzz.rq")
        except QueryError as error:
            assert str(error).startswith("fuzz.rq:"), what
            return
        try:
            Session(None).register(query, "q")
        except (Unsupported, QueryError):
            return


def check(seed: int) -> None:
    chooser = random.Random(seed)
    path = chooser.choice(QUERIES)
    text = mutate(path.read_text(encoding="utf-8"), chooser)
    compile_and_plan(text, f"seed {seed} on {path.name}: {text!r}")


@pytest.mark.parametrize("seed", range(40))
def test_query_fuzz(seed: int) -> None:
    check(seed)


@pytest.mark.parametrize("kind", ["groups", "union", "parentheses", "paths", "optional"])
@pytest.mark.parametrize("depth", [10, 149, 151, 600])
def test_deep_nesting_compiles_or_is_a_located_error(kind: str, depth: int) -> None:
    compile_and_plan(nested(depth, kind), f"{kind} {depth} deep")


@pytest.mark.slow
def test_query_fuzz_long() -> None:
    for seed in range(40, 2000):
        check(seed)
    for kind in ("groups", "union", "parentheses", "paths", "optional"):
        compile_and_plan(nested(3000, kind), f"{kind} 3000 deep", 60)  # UNION: ~11 s
