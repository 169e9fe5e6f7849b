"""Stream fuzzer: seeded corruptions of a valid stream (truncation, bytes flipped, lines
dropped, duplicated or swapped, times shifted; TriG, N-Quads, gzip), each read in skip and
stop mode under a deadline. Every variant: no exception but a located StreamError, and in
skip mode every element the corruption did not touch is read, unchanged and in order; where
the damage is certain (a cut, a dropped or moved line, a time moved back) exactly the clean
elements minus the damaged ones are read."""

from __future__ import annotations

import gzip
import io
import random

import pytest
from tests.fuzz import deadline

from sepia.io.streams import StreamError, read_stream

E = "http://example.org/"
S = E + "s"
GEN = "<http://www.w3.org/ns/prov#generatedAtTime>"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
HEADER = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
COUNT = 30
KINDS = ("truncate", "flip", "drop", "duplicate", "swap", "shift")


def element_lines(n: int, syntax: str) -> list[str]:
    if syntax == "nq":
        return [f"<{E}s{n}> <{E}p> <{E}o> <{E}e{n}> .\n", f'<{E}e{n}> {GEN} "{n}"^^{INT} .\n']
    return [f":e{n} {{ :s{n} :p :o }} :e{n} prov:generatedAtTime {n} .\n"]


def corrupt(seed: int) -> tuple[str, bytes, str, set[int], bool]:
    """(syntax, file bytes, kind, damaged element numbers, whether exactly those are lost)."""
    chooser = random.Random(seed)
    syntax = chooser.choice(["trig", "nq", "trig.gz"])
    plain = syntax.removesuffix(".gz")
    owners: list[int | None] = [None, None] if plain == "trig" else []
    lines: list[str] = ["@prefix : <http://example.org/> .\n",
                        "@prefix prov: <http://www.w3.org/ns/prov#> .\n"][: len(owners)]
    for n in range(COUNT):
        for line in element_lines(n, plain):
            lines.append(line)
            owners.append(n)
    kind = chooser.choice(KINDS)
    first = len(lines) - len([o for o in owners if o is not None])
    at = chooser.randrange(first, len(lines) - 1)
    victim = owners[at]
    assert victim is not None
    exact = True
    if kind == "truncate":
        cut = chooser.randrange(1, len(lines[at]) - 1)  # inside the line: never a clean cut
        damaged = set(range(victim, COUNT))
        lines = [*lines[:at], lines[at][:cut]]
    elif kind == "flip":
        position = chooser.randrange(len(lines[at]) - 1)
        text = lines[at]
        lines[at] = text[:position] + chooser.choice("x{}<>\"._:# 9") + text[position + 1:]
        damaged, exact = {victim}, False
    elif kind == "drop":
        del lines[at]
        damaged = {victim}
    elif kind == "duplicate":
        lines.insert(at, lines[at])
        damaged, exact = {victim}, False
    elif kind == "swap":  # two whole elements trade places: the later one comes first
        size = 2 if plain == "nq" else 1
        start = first + victim * size
        if victim + 1 >= COUNT:
            victim, start = victim - 1, start - size
        pair = slice(start, start + 2 * size)
        lines[pair] = lines[start + size:pair.stop] + lines[start:start + size]
        damaged = {victim}  # out of order once the later one is read
    else:  # "shift": the element's time moved back before its predecessors'
        target = at if plain == "trig" else first + victim * 2 + 1
        damaged = {victim} if victim > 0 else set()
        lines[target] = lines[target].replace(f" {victim} .", " -1 .").replace(
            f'"{victim}"^^', '"-1"^^') if victim > 0 else lines[target]
    data = "".join(lines).encode()
    return syntax, gzip.compress(data) if syntax.endswith(".gz") else data, kind, damaged, exact


def read(data: bytes, name: str, mode: str) -> tuple[list, list[StreamError]]:
    errors: list[StreamError] = []
    options = {"on_error": "skip", "errors": errors.append} if mode == "skip" else {}
    elements = []
    try:
        for element in read_stream(io.BytesIO(data), S, name=name, **options):  # type: ignore[arg-type]
            elements.append(element)
    except StreamError as error:
        errors.append(error)
    return elements, errors


def check(seed: int) -> None:
    syntax, data, kind, damaged, exact = corrupt(seed)
    name = f"s.{syntax}"
    with deadline(10, f"seed {seed} ({kind}, {syntax})"):
        elements, errors = read(data, name, "skip")
        stopped, stop_errors = read(data, name, "stop")
    expected = [(f"{E}e{n}", n) for n in range(COUNT) if n not in damaged]
    read_whole = [(e.graph, e.end) for e in elements]
    if exact:
        assert read_whole == expected, (seed, kind, syntax)
    else:  # a flipped byte may still parse, a duplicate is read twice: only those differ
        assert [pair for pair in read_whole if pair in expected] == expected, (seed, kind)
    for element in elements:
        if element.end not in damaged and element.graph == f"{E}e{element.end}":
            (triple,) = element.triples
            assert triple.subject.value == f"{E}s{element.end}"
    for error in errors + stop_errors:
        assert error.file == name and error.line >= 1 and error.reason, (seed, str(error))
    assert len(stop_errors) <= 1
    assert [(e.graph, e.end) for e in stopped] == [(e.graph, e.end) for e in elements][
        : len(stopped)]


@pytest.mark.parametrize("seed", range(60))
def test_stream_fuzz(seed: int) -> None:
    check(seed)


@pytest.mark.slow
def test_stream_fuzz_long() -> None:
    for seed in range(60, 3000):
        check(seed)
