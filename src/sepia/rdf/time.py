"""Time in Sepia is an integer: abstract units, or epoch milliseconds for xsd:dateTime input.

The kind of time is remembered per run so results print in the input's own type
(integers stay integers, dateTimes come back as ISO 8601 UTC).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import pyoxigraph as ox

from sepia.rdf.vocabulary import XSD

INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
    )
)
DATETIME_TYPES = frozenset({XSD + "dateTime", XSD + "dateTimeStamp"})


class TimeKind(enum.Enum):
    """Abstract integer time units (the papers' examples) or wall-clock epoch milliseconds."""

    ABSTRACT = "abstract"
    DATETIME = "dateTime"


@dataclass(frozen=True, slots=True)
class TimeValue:
    """A parsed timestamp: the integer Sepia computes with, and where it came from."""

    value: int
    kind: TimeKind


def parse_time_literal(
    term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple,
) -> TimeValue:
    """Read a prov time object: an integer literal or an xsd:dateTime; anything else raises."""
    if not isinstance(term, ox.Literal):
        raise ValueError(f"time must be a literal, found {term}")
    datatype = term.datatype.value
    if datatype in INTEGER_TYPES:
        try:
            return TimeValue(int(term.value), TimeKind.ABSTRACT)
        except ValueError:
            raise ValueError(f"time {term} is not a valid integer") from None
    if datatype in DATETIME_TYPES:
        return TimeValue(parse_datetime_ms(term.value), TimeKind.DATETIME)
    raise ValueError(f"time {term} must be an xsd:integer or an xsd:dateTime")


def parse_datetime_ms(text: str) -> int:
    """Epoch milliseconds of an xsd:dateTime; a value with no zone is read as UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"time {text!r} is not a valid xsd:dateTime") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def format_time(value: int, kind: TimeKind) -> int | str:
    """A time as results print it: the integer itself, or ISO 8601 UTC with milliseconds."""
    if kind is TimeKind.ABSTRACT:
        return value
    return _iso_utc_ms(value)


@lru_cache(maxsize=4096)
def _iso_utc_ms(value: int) -> str:
    """Cached: a run's results repeat few distinct times (an instant's matches share
    theirs), and building the text was half of a Spark key's jsonl lines on W7."""
    moment = datetime.fromtimestamp(value / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
