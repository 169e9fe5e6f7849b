"""The W3C SPARQL syntax suites: every positive test parses, every negative one is rejected
with a QueryError (never a crash). Counts per directory are printed and kept in
docs/conformance.md."""

from collections import Counter

import pytest
from syntax_manifest import W3C, SyntaxTest, syntax_tests

from sepia.lang import QueryError, parse_query
from w3c_suites import message

if not W3C.is_dir():  # fails the run under CI (tests/conftest.py)
    pytest.skip(message(), allow_module_level=True)
TESTS = syntax_tests()


def _id(test: SyntaxTest) -> str:
    return f"{test.directory}/{test.name}"


def _accepted(test: SyntaxTest) -> bool:
    try:
        parse_query(test.path.read_text(encoding="utf-8"), source=str(test.path))
    except QueryError:
        return False
    return True


@pytest.mark.parametrize("test", [t for t in TESTS if t.positive], ids=_id)
def test_positive_syntax_is_accepted(test: SyntaxTest):
    parse_query(test.path.read_text(encoding="utf-8"), source=str(test.path))


@pytest.mark.parametrize("test", [t for t in TESTS if not t.positive], ids=_id)
def test_negative_syntax_is_rejected(test: SyntaxTest):
    with pytest.raises(QueryError):
        parse_query(test.path.read_text(encoding="utf-8"), source=str(test.path))


def test_counts_per_directory(capsys):
    """Print passed/total per directory; the suites hold 302 query syntax tests."""
    totals, passed = Counter(), Counter()
    for test in TESTS:
        key = (test.directory, "positive" if test.positive else "negative")
        totals[key] += 1
        passed[key] += _accepted(test) == test.positive
    with capsys.disabled():
        print("\nW3C SPARQL syntax tests (passed/total):")
        for key in sorted(totals):
            print(f"  {key[0]:<16} {key[1]:<9} {passed[key]:>3}/{totals[key]}")
    assert sum(totals.values()) == 302
    assert passed == totals
