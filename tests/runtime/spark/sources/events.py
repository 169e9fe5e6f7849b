"""The events every source test sends, in TriG and in N-Quads, and the rows they must give.

Three documents: two elements at time 2, one at time 5, and one element with no time (an
error row; the reader reports it at the document's line 3 in TriG, line 1 in N-Quads).
"""

from __future__ import annotations

EX = "http://example.org/"
PROV_TIME = "<http://www.w3.org/ns/prov#generatedAtTime>"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"
PREFIXES = f"@prefix : <{EX}> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"

TRIG_DOCUMENTS = (
    PREFIXES
    + ":e1 { :diana :isNearby :a . } :e1 prov:generatedAtTime 2 .\n"
    + ":e2 { :eve :isNearby :b . } :e2 prov:generatedAtTime 2 .\n",
    PREFIXES + ":e3 { :carl :isNearby :a . } :e3 prov:generatedAtTime 5 .\n",
    PREFIXES + ":e4 { :x :isNearby :a . }\n",
)


def _quads(element: str, subject: str, place: str, time: int | None) -> str:
    graph = f"<{EX}{element}>"
    text = f"<{EX}{subject}> <{EX}isNearby> <{EX}{place}> {graph} .\n"
    return text + (f'{graph} {PROV_TIME} "{time}"^^{INTEGER} .\n' if time is not None else "")


NQUADS_DOCUMENTS = (
    _quads("e1", "diana", "a", 2) + _quads("e2", "eve", "b", 2),
    _quads("e3", "carl", "a", 5),
    _quads("e4", "x", "a", None),
)


def expected_rows(source: str, error_line: int) -> set[tuple]:
    """(file, seq, element, start, end, kind, s, p, o, line, has error) of the documents."""
    near = f"<{EX}isNearby>"

    def good(document: int, seq: int, element: str, time: int, who: str, place: str) -> tuple:
        return (f"{source}#{document:012d}", seq, EX + element, time, time, "abstract",
                f"<{EX}{who}>", near, f"<{EX}{place}>", None, False)

    error = (f"{source}#{2:012d}", None, EX + "e4", None, None, None, None, None, None,
             error_line, True)
    return {
        good(0, 0, "e1", 2, "diana", "a"),
        good(0, 1, "e2", 2, "eve", "b"),
        good(1, 0, "e3", 5, "carl", "a"),
        error,
    }


def comparable(row: tuple) -> tuple:
    """An ingest row (stream, file, ..., line, error) as `expected_rows` writes it."""
    return (*row[1:11], row[11] is not None)
