"""A whole query: (SE, SDS, ET, QF) of RSP-QL (seed 004, Definition 11) and RSEP-QL (seed 001,
Definition 5), with the parts the other dialects add (SPAseq WITHIN, PARTITION BY, the
RSEP-QL event policy, a REGISTER name so other queries can read the output stream).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.algebra.dataset import Dataset
from sepia.algebra.event import SelectionPolicy
from sepia.algebra.pattern import (
    Distinct,
    GraphPattern,
    OrderBy,
    Project,
    Reduced,
    Slice,
    TriplePattern,
)
from sepia.algebra.report import ReportPolicy
from sepia.rdf.time import TimeKind


class Unsupported(ValueError):
    """A construct an evaluator cannot run, or SPARQL 1.1 text cannot say (the message
    names it)."""


@dataclass(frozen=True, slots=True)
class RStream:
    """RStream (seed 004, Definition 20): every answer of each evaluation is streamed out."""

    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class IStream:
    """IStream (Definition 21): answers new since the previous evaluation (bag difference)."""

    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class DStream:
    """DStream (Definition 22): answers gone since the previous evaluation (bag difference)."""

    inner: GraphPattern


StreamOperator = RStream | IStream | DStream
QueryExpression = GraphPattern | StreamOperator
"""The algebraic expression SE: a graph pattern, possibly under a streaming operator."""


@dataclass(frozen=True, slots=True)
class Select:
    """SELECT: the projection itself is the ``Project`` node of the expression."""


@dataclass(frozen=True, slots=True)
class Construct:
    """CONSTRUCT { template }: each solution instantiates the template (blank nodes fresh)."""

    template: tuple[TriplePattern, ...]


@dataclass(frozen=True, slots=True)
class Ask:
    """ASK: whether some solution exists."""


@dataclass(frozen=True, slots=True)
class Describe:
    """DESCRIBE: resources are IRIs or variables (``*``: none named), each described by its
    concise bounded description (``sepia.rdf.describe``)."""

    resources: tuple[ox.NamedNode | ox.Variable, ...]


QueryForm = Select | Construct | Ask | Describe


class RegistrationKind(enum.Enum):
    """The REGISTER forms of language.md section 1."""

    RSTREAM = "RSTREAM"
    ISTREAM = "ISTREAM"
    DSTREAM = "DSTREAM"
    QUERY = "QUERY"
    STREAM = "STREAM"


@dataclass(frozen=True, slots=True)
class Registration:
    """``REGISTER ... <out> AS``: the name of the output stream (or C-SPARQL query name)."""

    kind: RegistrationKind
    name: str


@dataclass(frozen=True, slots=True)
class Within:
    """SPAseq ``WITHIN w``: every match spans at most ``width`` (to - from <= w); with
    ``tumbling`` it is Definition 16's tumbling windows [k*w, (k+1)*w) instead."""

    width: int
    tumbling: bool = False


class Dialect(enum.Enum):
    """The query language a query was written in, as recognised by its syntax."""

    SPARQL = "SPARQL 1.1"
    CSPARQL = "C-SPARQL"
    CQELS = "CQELS-QL"
    CQELS_CEP = "CQELS-CEP"
    RSPQL = "RSP-QL"
    RSEPQL = "RSEP-QL"
    EPSPARQL = "EP-SPARQL"
    SPASEQ = "SPAseq"


class Entailment(enum.Enum):
    """Which entailment regime the query's graphs are read under (`ENTAILMENT rdfs`)."""

    NONE = "none"
    RDFS = "rdfs"


@dataclass(frozen=True, slots=True)
class Query:
    """One compiled query; every dialect arrives here in the same shape."""

    form: QueryForm
    expression: QueryExpression
    dataset: Dataset
    report: ReportPolicy
    dialect: Dialect
    registration: Registration | None = None
    within: Within | None = None
    partition_by: ox.Variable | None = None
    event_policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED
    time_kind: TimeKind | None = None
    entailment: Entailment = Entailment.NONE
    base: str | None = None  # the BASE in force at the end of the prologue, for IRI()
    prefixes: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def output_stream(self) -> str | None:
        """The stream a registered CONSTRUCT query produces (RSTREAM / ISTREAM / DSTREAM
        <s>, or C-SPARQL's REGISTER STREAM): what query networks feed to other queries."""
        registration = self.registration
        if registration is None or not isinstance(self.form, Construct):
            return None
        return None if registration.kind is RegistrationKind.QUERY else registration.name

    @property
    def order(self) -> tuple[tuple[str, bool], ...]:
        """The ORDER BY keys each evaluation's rows are written in, as (variable, descending):
        the leading keys that are variables the SELECT keeps (a key on an expression or on
        a variable projected away, and the keys after it, cannot be read from the rows)."""
        node, kept = self.pattern, None
        while not isinstance(node, OrderBy):
            match node:
                case Slice(inner) | Distinct(inner) | Reduced(inner):
                    node = inner
                case Project(inner, variables):
                    node, kept = inner, {v.value for v in variables}
                case _:
                    return ()
        keys = []
        for condition in node.conditions:
            variable = condition.expression
            dropped = kept is not None and isinstance(variable, ox.Variable) and (
                variable.value not in kept)
            if not isinstance(variable, ox.Variable) or dropped:
                break
            keys.append((variable.value, condition.descending))
        return tuple(keys)

    @property
    def pattern(self) -> GraphPattern:
        """The graph pattern under the streaming operator, if there is one."""
        match self.expression:
            case RStream(inner) | IStream(inner) | DStream(inner):
                return inner
            case _:
                return self.expression
