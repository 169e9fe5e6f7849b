"""Compiled queries kept between runs (``sepia.lang.cache``): a hit is the query the
compiler gives, a change of code or options is a miss, a bad entry is compiled again."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sepia
from sepia.lang import QueryError, cache, parse_query, parser, static_warnings

QUERY = """PREFIX : <http://example.org/>
REGISTER RSTREAM :q AS SELECT ?s (COUNT(?o) AS ?n)
FROM NAMED WINDOW :w ON :s [RANGE PT5M STEP PT1M]
WHERE { WINDOW :w { ?s :p ?o FILTER(?o > 3) } } GROUP BY ?s"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder, and nothing kept in memory."""
    monkeypatch.setenv("SEPIA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_MEMORY", {})
    return tmp_path


def _no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the query was compiled")

    monkeypatch.setattr(parser, "parse_tree", refuse)


def test_a_query_compiled_once_is_read_back_without_the_compiler(folder, monkeypatch):
    compiled = parse_query(QUERY)
    assert len(list(folder.glob("*.pickle"))) == 1
    monkeypatch.setattr(cache, "_MEMORY", {})
    _no_compiler(monkeypatch)
    assert parse_query(QUERY) == compiled


def test_other_code_or_options_are_compiled_anew(folder, monkeypatch):
    parse_query(QUERY)
    monkeypatch.setattr(cache, "_MEMORY", {})
    relative = QUERY.replace("PREFIX : <http://example.org/>", "PREFIX : <rel/>")
    base = parse_query(relative, base_iri="http://one.org/")
    other = parse_query(relative, base_iri="http://two.org/")
    assert base != other  # the option is part of the key
    monkeypatch.setattr(cache, "_MEMORY", {})
    monkeypatch.setattr(cache, "code_digest", lambda: "another version of the compiler")
    _no_compiler(monkeypatch)
    with pytest.raises(AssertionError, match="compiled"):
        parse_query(QUERY)


def test_an_unreadable_entry_is_compiled_again(folder, monkeypatch):
    compiled = parse_query(QUERY)
    (entry,) = folder.glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    monkeypatch.setattr(cache, "_MEMORY", {})
    assert parse_query(QUERY) == compiled
    monkeypatch.setattr(cache, "_MEMORY", {})
    _no_compiler(monkeypatch)
    assert parse_query(QUERY) == compiled  # rewritten whole


def test_errors_are_not_kept(folder):
    for _ in range(2):
        with pytest.raises(QueryError, match="unexpected"):
            parse_query("SELEC * WHERE { ?s ?p ?o }")
    assert not list(folder.iterdir())


def test_the_compiler_imports_nothing_outside_the_digest():
    """The digest covers ``COMPILER``'s sources: code they import from elsewhere in Sepia
    would change compiled queries without changing the key."""
    root = Path(sepia.__file__).parent
    for package in cache.COMPILER:
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sepia."):
                    assert node.module.split(".")[1] in cache.COMPILER, (path, node.module)


def test_a_fresh_process_with_the_query_cached_never_imports_lark(folder):
    program = ("import sys; from sepia.lang import parse_query; "
               f"parse_query({QUERY!r}); print('lark' in sys.modules)")
    environment = {**os.environ, "SEPIA_CACHE_DIR": str(folder)}
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           env=environment, check=True).stdout.split() for _ in range(2)]
    assert runs == [["True"], ["False"]]


def test_static_warnings_are_kept_for_their_graphs(folder, monkeypatch):
    text = "SELECT * FROM <http://example.org/kb> WHERE { ?s ?p ?o }"
    warned = [str(w) for w in static_warnings(text)]
    assert len(warned) == 1 and "never fetched" in warned[0]
    monkeypatch.setattr(cache, "_MEMORY", {})
    _no_compiler(monkeypatch)
    assert [str(w) for w in static_warnings(text)] == warned
    with pytest.raises(AssertionError, match="compiled"):  # other graphs: another key
        static_warnings(text, graphs=["http://example.org/kb"])


def test_past_the_limit_the_oldest_tenth_goes(folder, monkeypatch):
    """KEEP = 20: the 21st entry removes the three oldest, the next writes remove none."""
    monkeypatch.setattr(cache, "KEEP", 20)
    for n in range(20):
        entry = folder / f"{n:02d}.pickle"
        entry.write_bytes(b"old")
        os.utime(entry, (1_000_000 + n, 1_000_000 + n))
    cache.compiled(("first",), lambda: 1)
    kept = sorted(p.name for p in folder.glob("*.pickle"))
    old = [name for name in kept if len(name) == len("00.pickle")]  # the new one: a digest
    assert len(kept) == 18 and old == [f"{n:02d}.pickle" for n in range(3, 20)]
    cache.compiled(("second",), lambda: 2)
    assert len(list(folder.glob("*.pickle"))) == 19
