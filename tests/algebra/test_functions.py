"""The function library's arities (SPARQL 1.1 section 17.4, EP-SPARQL, C-SPARQL)."""

from sepia.algebra.functions import BUILTINS, XSD_CASTS, Arity


def test_regex_takes_two_or_three_arguments():
    assert not BUILTINS["REGEX"].accepts(1)
    assert BUILTINS["REGEX"].accepts(2) and BUILTINS["REGEX"].accepts(3)
    assert BUILTINS["REGEX"].describe() == "2 to 3"


def test_extensions_are_in_the_library():
    assert BUILTINS["GETDURATION"] == Arity(0, 0)
    assert BUILTINS["TIMESTAMP"].describe() == "3"


def test_variadic_functions_have_no_upper_bound():
    assert BUILTINS["CONCAT"].accepts(7) and BUILTINS["COALESCE"].describe() == "at least 0"


def test_the_seven_xsd_constructors():
    assert len(XSD_CASTS) == 7
    assert "http://www.w3.org/2001/XMLSchema#dateTime" in XSD_CASTS
