import pyoxigraph as ox
import pytest

from sepia.rdf import TimeKind, format_time, parse_time_literal

XSD = "http://www.w3.org/2001/XMLSchema#"


def lit(value: str, datatype: str) -> ox.Literal:
    return ox.Literal(value, datatype=ox.NamedNode(XSD + datatype))


def test_integer_time_is_abstract() -> None:
    t = parse_time_literal(lit("42", "integer"))
    assert (t.value, t.kind) == (42, TimeKind.ABSTRACT)
    assert format_time(42, TimeKind.ABSTRACT) == 42


def test_datetime_is_epoch_milliseconds_and_prints_back_as_utc() -> None:
    t = parse_time_literal(lit("2024-01-01T01:00:00.250+01:00", "dateTime"))
    assert t == parse_time_literal(lit("2024-01-01T00:00:00.250Z", "dateTime"))
    assert t.value == 1_704_067_200_250
    assert format_time(t.value, TimeKind.DATETIME) == "2024-01-01T00:00:00.250Z"


@pytest.mark.parametrize(
    ("term", "cause"),
    [
        (lit("3.5", "decimal"), "must be an xsd:integer or an xsd:dateTime"),
        (ox.Literal("monday"), "must be an xsd:integer"),
        (lit("yesterday", "dateTime"), "not a valid xsd:dateTime"),
        (ox.NamedNode("http://e/t"), "must be a literal"),
    ],
)
def test_bad_times_name_the_cause(term: ox.Literal, cause: str) -> None:
    with pytest.raises(ValueError, match=cause):
        parse_time_literal(term)
