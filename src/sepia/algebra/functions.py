"""The function library a query may call: SPARQL 1.1's builtins and the papers' extensions.

Each entry gives the arity range; the static checks of ``sepia.lang`` reject a call to a
name not listed here, or with the wrong number of arguments, before any data is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from sepia.rdf.vocabulary import XSD


@dataclass(frozen=True, slots=True)
class Arity:
    """How many arguments a function takes; ``most`` None means no upper bound."""

    least: int
    most: int | None

    def accepts(self, count: int) -> bool:
        """True when ``count`` arguments are allowed."""
        return count >= self.least and (self.most is None or count <= self.most)

    def describe(self) -> str:
        """The range as a person reads it: '2', '2 or 3', 'at least 0'."""
        if self.most is None:
            return f"at least {self.least}"
        if self.most == self.least:
            return str(self.least)
        return f"{self.least} to {self.most}"


def _fixed(count: int, *names: str) -> dict[str, Arity]:
    return {name: Arity(count, count) for name in names}


SPARQL_BUILTINS: dict[str, Arity] = {
    **_fixed(0, "RAND", "NOW", "UUID", "STRUUID"),
    **_fixed(
        1, "STR", "LANG", "DATATYPE", "BOUND", "IRI", "URI", "ABS", "CEIL", "FLOOR", "ROUND",
        "STRLEN", "UCASE", "LCASE", "ENCODE_FOR_URI", "YEAR", "MONTH", "DAY", "HOURS",
        "MINUTES", "SECONDS", "TIMEZONE", "TZ", "MD5", "SHA1", "SHA256", "SHA384", "SHA512",
        "ISIRI", "ISURI", "ISBLANK", "ISLITERAL", "ISNUMERIC",
    ),
    **_fixed(
        2, "LANGMATCHES", "CONTAINS", "STRSTARTS", "STRENDS", "STRBEFORE", "STRAFTER",
        "STRLANG", "STRDT", "SAMETERM",
    ),
    **_fixed(3, "IF"),
    "BNODE": Arity(0, 1),
    "CONCAT": Arity(0, None),
    "COALESCE": Arity(0, None),
    "REGEX": Arity(2, 3),
    "SUBSTR": Arity(2, 3),
    "REPLACE": Arity(3, 4),
}
"""SPARQL 1.1 Query, section 17.4 (grammar rule 121, BuiltInCall)."""

EXTENSION_FUNCTIONS: dict[str, Arity] = {
    "TIMESTAMP": Arity(3, 3),
    "GETDURATION": Arity(0, 0),
    "GETSTARTTIME": Arity(0, 0),
    "GETENDTIME": Arity(0, 0),
}
"""C-SPARQL's ``timestamp(?s, ?p, ?o)``; EP-SPARQL's interval accessors (its section 4.1)."""

BUILTINS: dict[str, Arity] = {**SPARQL_BUILTINS, **EXTENSION_FUNCTIONS}

CSPARQL_TIMESTAMP = "http://larkc.eu/csparql/sparql/jena/ext#timestamp"
"""``timestamp`` as the C-SPARQL engine's own examples spell it (``PREFIX f:`` its library)."""

XSD_CASTS: frozenset[str] = frozenset(
    XSD + name for name in ("boolean", "double", "float", "decimal", "integer", "dateTime",
                            "string")
)
"""The constructor functions of SPARQL 1.1, section 17.5."""

INTERVAL_FUNCTIONS: frozenset[str] = frozenset({"GETDURATION", "GETSTARTTIME", "GETENDTIME"})
"""Functions whose value is the interval of the event mapping a FILTER is applied to."""
