"""FILTERs beyond numbers on columns (``columnar.expressions`` with a ``Context``,
``columnar.terms``) against the expression evaluator (pyoxigraph): drawn expressions of
=, !=, sameTerm, BOUND, the isIRI family, IN / NOT IN, regex, STR, LANG, YEAR and
numeric comparisons under &&, || and !, over drawn rows of IRIs, blank nodes, plain and
language-tagged strings, xsd:string, booleans, integers, decimals, doubles, floats,
dateTimes, ill-typed and unknown-datatype literals and unbound slots: every answer the
vectors are sure of is the evaluator's (errors included), the FILTER keeps the
evaluator's rows, and what is claimed decided is decided (without the evaluator where
claimed so); hand-worked cases of SPARQL 1.1's RDFterm-equal and error rules."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.algebra import expression as ex
from sepia.engine.columnar.comparisons import vector_filtered
from sepia.engine.columnar.expressions import (
    ERROR,
    FALSE,
    TRUE,
    UNSURE,
    Columns,
    Context,
    compiled,
)
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.tables import NO_ID, Table, filtered
from sepia.engine.columnar.terms import (
    BLANK,
    BOOLEAN,
    DATETIME,
    IRI,
    LANG,
    NUMBER,
    OTHER,
    STRING,
    kind_of,
)
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.numbers import Terms

from ..generators import EX
from ..support import filter_plan, xsd

XSD = "http://www.w3.org/2001/XMLSchema#"


DECIDABLE = [
    ox.NamedNode(EX + "a"), ox.NamedNode(EX + "b"), ox.BlankNode("b1"), ox.BlankNode("b2"),
    ox.Literal("abc"), ox.Literal("ABC"), xsd("3", "string"), ox.Literal("bcd"),
    ox.Literal("abc", language="en"), ox.Literal("abc", language="fr"),
    ox.Literal("3", language="en-us"), xsd("true", "boolean"), xsd("false", "boolean"),
    xsd("3", "integer"), xsd("7", "integer"), xsd("3.0", "decimal"),
    xsd("2.5", "decimal"), xsd("-0.50", "decimal"),
]
"""Terms whose equalities among themselves ids and kinds decide (numbers by value)."""
HARD = [
    xsd("3.0E0", "double"), xsd("NaN", "double"), xsd("INF", "double"),
    xsd("2.5", "float"), xsd("2020-01-01T00:00:00Z", "dateTime"),
    xsd("2020-01-01T01:00:00+01:00", "dateTime"), xsd("2020-01-01T00:00:00", "dateTime"),
    xsd("x", "integer"), xsd("1.5", "integer"),
    ox.Literal("x", datatype=ox.NamedNode(EX + "dt")),
    xsd("2020-01-01", "date"), xsd("yes", "boolean"),
]
"""Doubles, floats, dateTimes (two of one instant), ill-typed and other literals."""
TERMS: list[ox.NamedNode | ox.BlankNode | ox.Literal | None] = [*DECIDABLE, *HARD, None]
CONSTANTS = [
    f"<{EX}a>", f"<{EX}absent>", '"abc"', '"abc"@en', '"abc"@EN', '"never"', "3", "3.0",
    "7", "2.5e0", "true", f'"2020-01-01T00:00:00Z"^^<{XSD}dateTime>', f'"x"^^<{EX}dt>',
    f'"3"^^<{XSD}string>',
]
"""``"abc"@EN`` is ``"abc"@en``; ``<...absent>`` and ``"never"`` are in no row."""
VARIABLES = st.sampled_from(["?a", "?b", "?c", "?d"])
"""?d is bound by no row: its column is missing."""
CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def operands() -> st.SearchStrategy[str]:
    """Term operands: variables, constants, per-term values of a variable."""
    calls = st.tuples(st.sampled_from(["STR", "LANG", "DATATYPE"]), VARIABLES).map(
        lambda t: f"{t[0]}({t[1]})")
    return st.one_of(VARIABLES, VARIABLES, st.sampled_from(CONSTANTS), calls)


def _one(texts: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, bool]]:
    """Atoms reading one variable at most (per-term: always decided)."""
    return texts.map(lambda t: (t, True))


def _reads_one(*parts: str) -> bool:
    """Whether the operands' texts name at most one variable between them."""
    return len({v for p in parts for v in ("?a", "?b", "?c", "?d") if v in p}) <= 1


def atoms() -> st.SearchStrategy[tuple[str, bool]]:
    """The boolean leaves, each with whether it reads at most one variable: equality,
    sameTerm, kind tests, IN, string and time functions, numeric comparisons and a bare
    variable's truth value."""
    term = operands()
    return st.one_of(
        st.tuples(term, st.sampled_from(["=", "!="]), term).map(
            lambda t: (f"({t[0]} {t[1]} {t[2]})", _reads_one(t[0], t[2]))),
        st.tuples(term, term).map(lambda t: (f"sameTerm({t[0]}, {t[1]})", _reads_one(*t))),
        _one(VARIABLES.map(lambda v: f"BOUND({v})")),
        _one(st.tuples(st.sampled_from(["isIRI", "isURI", "isBlank", "isLiteral", "isNumeric"]),
                       term).map(lambda t: f"{t[0]}({t[1]})")),
        st.tuples(term, st.booleans(), st.lists(term, min_size=1, max_size=3)).map(
            lambda t: (f"({t[0]} {'NOT IN' if t[1] else 'IN'} ({', '.join(t[2])}))",
                       _reads_one(t[0], *t[2]))),
        _one(VARIABLES.map(lambda v: f'regex(STR({v}), "^a", "i")')),
        _one(VARIABLES.map(lambda v: f'regex({v}, "b")')),
        _one(VARIABLES.map(lambda v: f"(YEAR({v}) = 2020)")),
        st.tuples(VARIABLES, st.sampled_from(["<", ">="]), VARIABLES).map(
            lambda t: (f"({t[0]} {t[1]} {t[2]})", t[0] == t[2])),
        st.tuples(VARIABLES, VARIABLES).map(
            lambda t: (f"(STRLEN(STR({t[0]})) > {t[1]})", t[0] == t[1])),
        _one(VARIABLES),
    )


def boolean() -> st.SearchStrategy[tuple[str, bool]]:
    """Atoms under &&, || and !; whether every atom reads at most one variable."""
    return st.recursive(atoms(), lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(
            lambda t: (f"({t[0][0]} {t[1]} {t[2][0]})", t[0][1] and t[2][1])),
        inner.map(lambda x: (f"!({x[0]})", x[1]))), max_leaves=4)


def _setting(condition: str, rows: list[tuple]) -> tuple:
    """The FILTER's evaluator, the slots, the table of ``rows`` (terms of ?a ?b ?c), the
    numbers of its ids and the compiled FILTER with its context."""
    codec, select, slots = filter_plan(condition)
    columns = {
        slots.index(n): np.array([NO_ID if r[k] is None else codec.encode(r[k]) for r in rows],
                                 dtype=np.int64)
        for k, n in enumerate("abc")
    }
    evaluator = select.condition
    context = Context(evaluator)
    decide = compiled(evaluator.expression, slots, context)
    return evaluator, slots, Table(columns, len(rows)), NumericIds(Terms(codec)), decide, context


def _answers(condition: str, rows: list[tuple], *, asked: list | None = None
             ) -> tuple[list[int], list[object]]:
    """The vectors' answer and the evaluator's value (true, false, None: an error) on
    each row; ``asked`` collects the per-term evaluators' calls made by the vectors."""
    evaluator, slots, table, numbers, decide, context = _setting(condition, rows)
    assert decide is not None, condition
    with _counting([] if asked is None else asked):
        mine = decide(Columns(table, numbers, context.kinds)).tolist()
    values = evaluator.values(table.rows(len(slots.names)))
    theirs = [{evaluator.truth: True, evaluator.falsity: False}.get(v) for v in values]
    return mine, theirs


@contextmanager
def _counting(asked: list) -> Iterator[None]:
    """Every batch of inputs any expression evaluator is asked meanwhile, into ``asked``."""
    original = ExpressionEvaluator.values

    def counted(self: ExpressionEvaluator, keys: list) -> list:
        asked.append(list(keys))
        return original(self, keys)

    ExpressionEvaluator.values = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        ExpressionEvaluator.values = original  # type: ignore[method-assign]


def _agree(mine: list[int], theirs: list[object], condition: str) -> None:
    expected = {TRUE: True, FALSE: False, ERROR: None}
    for n, (answer, value) in enumerate(zip(mine, theirs, strict=True)):
        assert answer == UNSURE or expected[answer] is value, (condition, n, answer, value)


ROWS = st.lists(st.tuples(*[st.sampled_from(TERMS)] * 3), min_size=1, max_size=8)


@settings(max_examples=250, deadline=None, suppress_health_check=CHECKS)
@given(boolean(), ROWS)
def test_sure_answers_are_the_evaluators(drawn, rows):
    """Every sure vector answer is the evaluator's; an expression whose leaves each read
    at most one variable is decided on every row; the FILTER keeps the evaluator's rows."""
    condition, per_term = drawn
    evaluator, slots, table, numbers, decide, _ = _setting(condition, rows)
    if decide is not None:
        mine, theirs = _answers(condition, rows)
        _agree(mine, theirs, condition)
        if per_term:
            assert UNSURE not in mine, condition
    width = len(slots.names)
    assert (vector_filtered(table, evaluator, slots, numbers).rows(width)
            == filtered(table, evaluator).rows(width))


def _pair_atoms() -> st.SearchStrategy[str]:
    """Atoms over two variables decided by ids and kinds over ``DECIDABLE`` terms."""
    two = st.tuples(VARIABLES, VARIABLES)
    return st.one_of(
        two.map(lambda t: f"({t[0]} = {t[1]})"), two.map(lambda t: f"({t[0]} != {t[1]})"),
        two.map(lambda t: f"sameTerm({t[0]}, {t[1]})"),
        two.map(lambda t: f"({t[0]} IN ({t[1]}, <{EX}a>, \"abc\"))"),
        st.tuples(VARIABLES, st.sampled_from(CONSTANTS[:8])).map(lambda t: f"({t[0]} = {t[1]})"),
        VARIABLES.map(lambda v: f"BOUND({v})"), VARIABLES.map(lambda v: f"isIRI({v})"),
        VARIABLES.map(lambda v: f"isLiteral({v})"), VARIABLES.map(lambda v: f"isNumeric({v})"),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(st.recursive(_pair_atoms(), lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"), inner.map(lambda x: f"!({x})")), max_leaves=3),
    st.lists(st.tuples(*[st.sampled_from([*DECIDABLE, None])] * 3), min_size=1, max_size=8))
def test_equality_of_decidable_terms_is_decided_on_columns(condition, rows):
    """Over IRIs, blank nodes, strings, language-tagged strings, booleans, integers,
    decimals and unbound slots, =, !=, sameTerm, IN, BOUND and the kind tests are decided
    on every row without asking any evaluator, and agree with the evaluator."""
    asked: list = []
    mine, theirs = _answers(condition, rows, asked=asked)
    _agree(mine, theirs, condition)
    assert UNSURE not in mine, condition
    assert asked == [], condition


@pytest.mark.parametrize(("left", "right", "answer"), [
    (ox.NamedNode(EX + "a"), ox.NamedNode(EX + "a"), TRUE),
    (ox.NamedNode(EX + "a"), ox.NamedNode(EX + "b"), FALSE),
    (ox.NamedNode(EX + "a"), ox.Literal("abc"), FALSE),  # RDFterm-equal: an IRI, a literal
    (ox.BlankNode("b1"), ox.BlankNode("b2"), FALSE),
    (ox.Literal("abc"), xsd("abc", "string"), TRUE),  # one term
    (ox.Literal("abc"), ox.Literal("abc", language="en"), FALSE),
    (ox.Literal("3"), xsd("3", "integer"), FALSE),  # pyoxigraph: known types differ
    (xsd("3", "integer"), xsd("3.0", "decimal"), TRUE),  # by value
    (xsd("true", "boolean"), xsd("false", "boolean"), FALSE),
    (xsd("NaN", "double"), xsd("NaN", "double"), UNSURE),  # NaN = NaN is false
    (xsd("2020-01-01T00:00:00Z", "dateTime"),
     xsd("2020-01-01T01:00:00+01:00", "dateTime"), UNSURE),  # one instant
    (ox.Literal("x", datatype=ox.NamedNode(EX + "dt")), ox.Literal("abc"), UNSURE),  # error
    (xsd("x", "integer"), xsd("x", "integer"), UNSURE),
    (None, ox.NamedNode(EX + "a"), ERROR),
])
def test_rdfterm_equal_by_hand(left, right, answer):
    """SPARQL 1.1's ``=`` (17.4.1.7) as pyoxigraph answers it: the vectors' answer, and
    the evaluator's where they are sure."""
    mine, theirs = _answers("?a = ?b", [(left, right, None)])
    assert mine == [answer]
    _agree(mine, theirs, "?a = ?b")


def test_per_term_functions_are_asked_once_per_distinct_id():
    """regex on one variable and a numeric bound on another: the regex is asked of the
    evaluator once per distinct ?a (two here, over six rows of three distinct pairs),
    the bound decided on columns; a second batch of known ids asks nothing."""
    a1, a2 = ox.Literal("apple"), ox.Literal("berry")
    rows = [(a1, xsd(str(n), "integer"), None) for n in (1, 5, 9)] + [
        (a2, xsd(str(n), "integer"), None) for n in (1, 5, 9)]
    condition = 'regex(?a, "^a") && ?b > 4'
    _, _, table, numbers, decide, context = _setting(condition, rows)
    asked: list = []
    with _counting(asked):
        first = decide(Columns(table, numbers, context.kinds)).tolist()
        again = decide(Columns(table, numbers, context.kinds)).tolist()
    assert first == again == [FALSE, TRUE, TRUE, FALSE, FALSE, FALSE]
    assert [len(keys) for keys in asked] == [2]


def test_errors_and_unbound_by_hand():
    """BOUND never errs; isIRI of an unbound is an error, so !isIRI(?d) is an error, and
    BOUND(?d) || isIRI(?d) is an error || false... an error; ?a IN () is left to the
    evaluator; NOT IN of a term found is false, of an error with a match elsewhere true
    for IN."""
    iri = ox.NamedNode(EX + "a")
    rows = [(iri, None, None)]
    expected = {"BOUND(?d)": [FALSE], "!isIRI(?d)": [ERROR], "BOUND(?d) || isIRI(?d)": [ERROR],
                "isIRI(?a) && !BOUND(?b)": [TRUE], f"?a NOT IN (<{EX}a>)": [FALSE],
                f"?a IN (?b, <{EX}a>)": [TRUE], "?a IN (?b, 3)": [ERROR],
                '?a = "abc" || ?b = 3': [ERROR], f"sameTerm(?a, <{EX}a>)": [TRUE]}
    for condition, answers in expected.items():
        mine, theirs = _answers(condition, rows)
        assert mine == answers, condition
        _agree(mine, theirs, condition)


def test_kinds_from_canonical_text():
    """A term's kind read from its N-Triples text: ill-formed literals of the known
    datatypes and literals of other datatypes are OTHER."""
    assert [kind_of(t) for t in (
        f"<{EX}a>", "_:b1", '"a\\"b"', '"a"@en', f'"true"^^<{XSD}boolean>',
        f'"1.5E0"^^<{XSD}double>', f'"2020-01-01T00:00:00Z"^^<{XSD}dateTime>',
        f'"x"^^<{XSD}integer>', f'"2020-01-01"^^<{XSD}date>', f'"1"^^<{EX}dt>')] == [
        IRI, BLANK, STRING, LANG, BOOLEAN, NUMBER, DATETIME, OTHER, OTHER, OTHER]


def test_time_functions_of_two_variables_compare_on_columns():
    """YEAR(?a) < YEAR(?b): each YEAR a per-term value (the evaluator asked once per
    distinct dateTime of its variable), compared as integers on columns; an unbound
    dateTime is an error, a string's YEAR an error too."""
    t2020, t2021 = (xsd(f"{y}-06-01T12:00:00Z", "dateTime") for y in (2020, 2021))
    rows = [(t2020, t2021, None), (t2021, t2020, None), (t2020, t2020, None),
            (t2020, None, None), (ox.Literal("2020"), t2021, None)] * 2
    asked: list = []
    mine, theirs = _answers("YEAR(?a) < YEAR(?b)", rows, asked=asked)
    assert mine == [TRUE, FALSE, FALSE, ERROR, ERROR] * 2
    _agree(mine, theirs, "YEAR(?a) < YEAR(?b)")
    assert sorted(len(keys) for keys in asked) == [3, 3]  # ?a: 2 dateTimes, "2020"; ?b


class _Host:
    """A query answering an extension function, holding its FILTER (as a C-SPARQL query
    holds the evaluator whose timestamp() it answers)."""

    def __init__(self) -> None:
        self.asked: list[ox.NamedNode | ox.BlankNode | ox.Literal] = []
        self.evaluator: ExpressionEvaluator | None = None

    def answer(self, term: ox.NamedNode | ox.BlankNode | ox.Literal) -> ox.Literal:
        self.asked.append(term)
        return xsd("true" if isinstance(term, ox.NamedNode) else "false", "boolean")


def test_functions_the_host_answers_stay_the_evaluators():
    """A function the host answers is not per term (it may read the host's state): the
    rows ``?b = ?c`` settles are decided on columns, the others asked of the FILTER's
    evaluator, which calls the host; and the compiled FILTER does not keep the host (nor
    the evaluator) alive."""
    f = ox.NamedNode(EX + "f")
    rows = [(ox.NamedNode(EX + "a"), ox.Literal("x"), ox.Literal("y")),
            (ox.NamedNode(EX + "a"), ox.Literal("x"), ox.Literal("x")),
            (ox.Literal("a"), ox.Literal("x"), ox.Literal("x"))]
    evaluator, slots, table, numbers, _, _ = _setting("?b = ?c", rows)
    expression = ex.Binary(ex.BinaryOperator.AND, ex.FunctionCall(f, (ox.Variable("a"),)),
                           evaluator.expression)  # the language names no such function
    host = _Host()
    hosted = ExpressionEvaluator(expression, slots, evaluator.dictionary,
                                 boolean=True, functions={f: host.answer})
    host.evaluator = hosted
    width = len(slots.names)
    assert vector_filtered(table, hosted, slots, numbers).rows(width) == table.take(
        np.array([1])).rows(width)
    assert len(host.asked) == 2  # the two rows where ?b = ?c
    gone = weakref.ref(host)
    del host, hosted
    gc.collect()
    assert gone() is None
