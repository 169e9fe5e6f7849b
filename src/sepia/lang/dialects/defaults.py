"""Which dialect a query is written in, and what it implies when the query does not say
(language.md section 3, after the RSP-QL paper's comparison of C-SPARQL and CQELS):

- C-SPARQL and RSP-QL REGISTER syntax: report ON WINDOW CLOSE AND NON EMPTY, RStream
  (unless REGISTER names another operator);
- CQELS syntax (named windows or inline STREAM, no REGISTER): ON CONTENT CHANGE, IStream;
- event-pattern queries (SPAseq, EP-SPARQL, RSEP-QL MATCH, CQELS-CEP SEQ): push each match
  once, when its last event arrives;
- a query without streams: evaluated once.
"""

from __future__ import annotations

from collections.abc import Callable

from sepia.algebra.pattern import GraphPattern
from sepia.algebra.query import (
    Dialect,
    DStream,
    IStream,
    QueryExpression,
    Registration,
    RegistrationKind,
    RStream,
)
from sepia.algebra.report import (
    ContentChange,
    NonEmpty,
    Once,
    PushMatches,
    Report,
    ReportPolicy,
    WindowClose,
)

_BY_FEATURE = (
    ("spaseq", Dialect.SPASEQ),
    ("epsparql", Dialect.EPSPARQL),
    ("cqels-cep", Dialect.CQELS_CEP),
    ("rsepql", Dialect.RSEPQL),
    ("register-r2s", Dialect.RSPQL),
    ("register-csparql", Dialect.CSPARQL),
    ("csparql-stream", Dialect.CSPARQL),
    ("timestamp", Dialect.CSPARQL),
    ("named-window", Dialect.CQELS),
    ("inline-stream", Dialect.CQELS),
    ("nested-path", Dialect.CQELS_CEP),
)
_OPERATORS: dict[RegistrationKind, Callable[[GraphPattern], QueryExpression]] = {
    RegistrationKind.RSTREAM: RStream,
    RegistrationKind.ISTREAM: IStream,
    RegistrationKind.DSTREAM: DStream,
}


def dialect(features: set[str]) -> Dialect:
    """The first dialect whose own syntax the query uses."""
    return next((d for feature, d in _BY_FEATURE if feature in features), Dialect.SPARQL)


def default_report(features: set[str], has_windows: bool) -> ReportPolicy:
    """The report policy of a query without a REPORT clause."""
    if "event" in features:
        return PushMatches()
    if not has_windows:
        return Once()
    if dialect(features) is Dialect.CQELS:
        return Report((ContentChange(),))
    return Report((WindowClose(), NonEmpty()))


def streaming_operator(
    pattern: GraphPattern, features: set[str], registration: Registration | None, has_windows: bool
) -> QueryExpression:
    """The pattern under the streaming operator the registration or the dialect implies."""
    if registration is not None:
        return _OPERATORS.get(registration.kind, RStream)(pattern)
    if "event" in features or not has_windows:
        return pattern
    if dialect(features) is Dialect.CQELS:
        return IStream(pattern)
    return RStream(pattern)
