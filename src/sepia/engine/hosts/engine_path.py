"""Which engine runs one registered query: the row engine (``sepia.engine.query``) or the
columnar core (``sepia.engine.columnar``), chosen here, above both, so neither imports
the other's host.

``SEPIA_ENGINE_PATH`` is ``columnar`` (the default: wherever the core covers the query and
is the faster, i.e. its report policy is time-driven), ``columnar-always`` (wherever it
covers it) or ``rows`` (the row engine everywhere). ``explain`` prints the plan with the
path it takes.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from sepia.algebra import query as qa
from sepia.engine.background import Background
from sepia.engine.columnar.event_sequences import (
    EventSequence,
    event_sequence_uncovered,
    plan_event_sequence_uncovered,
)
from sepia.engine.columnar.occurrences import (
    PushedOccurrences,
    occurrences_uncovered,
    plan_occurrences_uncovered,
)
from sepia.engine.columnar.query import ColumnarQuery, plan_uncovered, uncovered
from sepia.engine.columnar.sequences import (
    PartitionedSequence,
    plan_sequence_uncovered,
    sequence_uncovered,
)
from sepia.engine.plan.explain import explain as plan_explain
from sepia.engine.plan.physical import EventPlan, PhysicalQuery, SequencePlan
from sepia.engine.query.continuous import ContinuousQuery
from sepia.engine.query.partition import PartitionedQuery, RegisteredQuery
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import Term

Engine = RegisteredQuery | PartitionedSequence | EventSequence | PushedOccurrences
"""What runs one registered query: a row engine or the columnar core's sequences."""
COLUMNAR = (ColumnarQuery, PartitionedSequence, EventSequence, PushedOccurrences)
"""The columnar core's engines (a session of these only may be fed columns)."""


def engine_path() -> str:
    """``SEPIA_ENGINE_PATH``: ``columnar`` (default: the columnar core wherever it covers
    a query and is the faster), ``columnar-always`` (wherever it covers one: tests) or
    ``rows`` (the row engine everywhere, to compare the two)."""
    chosen = os.environ.get("SEPIA_ENGINE_PATH", "columnar")
    if chosen not in ("columnar", "columnar-always", "rows"):
        raise ValueError(
            f"SEPIA_ENGINE_PATH must be columnar, columnar-always or rows, not {chosen!r}"
        )
    return chosen


def continuous_query(
    query: qa.Query,
    name: str,
    dictionary: Dictionary,
    background: Background,
    max_runs: int | None = None,
    rdfs: bool = False,
    owns: Callable[[Term], bool] | None = None,
) -> Engine:
    """The engine for one registered query: a query the columnar core covers runs there
    (``engine_path``: a window query, a SPAseq sequence of GPMs, with PARTITION BY or
    not, a pushed CQELS-CEP / RSEP-QL chain of SEQs, a pushed EP-SPARQL pattern), else
    on rows (PARTITION BY: one row engine per partition). ``owns``: the partition values
    kept (a bucket of the Spark job's), on either path (``PartitionedQuery.owns``)."""
    chosen = engine_path()
    if query.partition_by is not None:
        if chosen != "rows":
            host = ContinuousQuery(query, name, dictionary, background, max_runs, rdfs)
            if on_columns(host):
                return PartitionedSequence(host, owns)
        return PartitionedQuery(query, name, dictionary, background, max_runs, rdfs, owns)
    if chosen != "rows":
        columnar = ColumnarQuery(query, name, dictionary, background, max_runs, rdfs)
        if isinstance(columnar.physical.kind, SequencePlan):
            host = ContinuousQuery(query, name, dictionary, background, max_runs, rdfs)
            return PartitionedSequence(host) if on_columns(host) else host
        if isinstance(columnar.physical.kind, EventPlan):
            host = ContinuousQuery(query, name, dictionary, background, max_runs, rdfs)
            if occurrences_uncovered(host) is None:
                return PushedOccurrences(host)
            return EventSequence(host) if event_sequence_uncovered(host) is None else host
        if uncovered(columnar, costed=chosen == "columnar") is None:
            return columnar
    return ContinuousQuery(query, name, dictionary, background, max_runs, rdfs)


def on_columns(host: ContinuousQuery) -> bool:
    """Whether a SPAseq query planned in ``host`` runs on the columnar core (as
    ``continuous_query`` decides: the Spark job's route stage asks it too)."""
    return engine_path() != "rows" and sequence_uncovered(host) is None


def explain(physical: PhysicalQuery, dictionary: Dictionary) -> str:
    """``plan.explain`` saying which path the plan takes (``SEPIA_ENGINE_PATH`` as
    ``continuous_query`` reads it; RDFS entailment, a run option, aside)."""
    chosen = engine_path()
    if chosen == "rows":
        reason: str | None = "SEPIA_ENGINE_PATH=rows"
    elif physical.partition is not None or isinstance(physical.kind, SequencePlan):
        reason = plan_sequence_uncovered(physical)
    elif isinstance(physical.kind, EventPlan) and physical.kind.occurrences:
        reason = plan_occurrences_uncovered(physical)
    elif isinstance(physical.kind, EventPlan):
        reason = plan_event_sequence_uncovered(physical)
    else:
        reason = plan_uncovered(physical, costed=chosen == "columnar")
    return plan_explain(physical, dictionary, True if reason is None else reason)
