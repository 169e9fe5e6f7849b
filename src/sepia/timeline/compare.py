"""`sepia compare`: the same queries over the same inputs under several settings, and
which results differ between them.

A setting changes one compiled query in one respect, the way the papers vary it: the report
policy (SECRET's content change ``cc``, window close ``wc``, non-empty ``nc``, periodic
``p``; RSP-QL Definition 23), the streaming operator (RStream / IStream / DStream,
Definitions 20-22), the selection and consumption policy of event sequences (RSEP-QL
Table 1), SPAseq's contiguity (Definitions 10-12), or the engine that evaluates it
(reference, local, spark: a built-in differential check), or the defaults a dialect gives a query
without REPORT clause (C-SPARQL and RSP-QL: window close AND non-empty, RStream; CQELS:
content change, IStream). Several axes given together make every
combination. Results are compared as their jsonl lines without the ``match`` id (engines
name Kleene matches their own way).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.rdf.results import Result, result_to_json
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery

Change = Callable[[qa.Query], qa.Query]
OPERATORS: dict[str, type[qa.StreamOperator]] = {
    "rstream": qa.RStream, "istream": qa.IStream, "dstream": qa.DStream
}
CONTIGUITY = {
    "strict": ev.SelectionPolicy.STRICT_CONTIGUITY,
    "next": ev.SelectionPolicy.SKIP_TILL_NEXT,
    "any": ev.SelectionPolicy.SKIP_TILL_ANY,
}
"""SPAseq's ``,`` ``;`` ``:``."""
EVENT_POLICIES = ("unrestricted", "chronological", "recent", "naive")
DIALECT_DEFAULTS = {"csparql": ("wc+nc", "rstream"), "rspql": ("wc+nc", "rstream"),
                    "cqels": ("cc", "istream")}  # fmt: skip
"""What a query without REPORT clause gets from its dialect (language.md section 3, after
the RSP-QL paper's table): report policy and streaming operator."""
ENGINES = ("reference", "local", "spark")


class SettingError(ValueError):
    """A setting that does not exist or does not apply to the query."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One way to run the queries: its name, the engine, how it changes each query."""

    name: str
    engine: str = "reference"
    changes: tuple[Change, ...] = ()

    def apply(self, query: qa.Query) -> qa.Query:
        for change in self.changes:
            query = change(query)
        return query


def settings(
    report: Sequence[str] = (),
    operator: Sequence[str] = (),
    event_policy: Sequence[str] = (),
    contiguity: Sequence[str] = (),
    engine: Sequence[str] = (),
    dialect: Sequence[str] = (),
) -> list[Setting]:
    """Every combination of the values given on each axis (an axis not given: unchanged)."""
    axes: list[list[tuple[str, Change | str]]] = [
        [(name, _report(name)) for name in report],
        [(name, _operator(name)) for name in operator],
        [(name, _event_policy(name)) for name in event_policy],
        [(name, _contiguity(name)) for name in contiguity],
        [(name, _engine(name)) for name in engine],
        [(name, _dialect(name)) for name in dialect],
    ]
    chosen = [axis for axis in axes if axis]
    if not chosen:
        raise SettingError("give at least one axis to compare: --report, --operator, "
                           "--event-policy, --contiguity, --engine or --dialect")  # fmt: skip
    made = []
    for combination in itertools.product(*chosen):
        engines = [value for _, value in combination if isinstance(value, str)]
        changes = tuple(value for _, value in combination if not isinstance(value, str))
        name = "/".join(name for name, _ in combination)
        made.append(Setting(name, engines[0] if engines else "reference", changes))
    return made


def run_setting(
    setting: Setting,
    queries: Sequence[NamedQuery],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    until: int | None = None,
) -> list[Result]:
    """Every result of the queries under ``setting``."""
    pairs = [(q.name, setting.apply(q.query)) for q in queries]
    rdfs = any(q.entailment is qa.Entailment.RDFS for _, q in pairs)
    if setting.engine == "spark":
        _check_spark(setting, queries, until)
        from sepia.timeline.spark import spark_results

        return spark_results(queries, streams, background, rdfs)
    if setting.engine == "local":
        from sepia.runtime.local import run

        return list(run(pairs, streams, background, until=until, rdfs=rdfs))
    from sepia.semantics.network import evaluate_network

    return evaluate_network(pairs, streams, background, until=until)


def _check_spark(setting: Setting, queries: Sequence[NamedQuery], until: int | None) -> None:
    """What the Spark API cannot be given: it takes each query's text as written (no
    setting can change it), runs to the end of the input, one query per job (no query
    network: a query reading another's results)."""
    if setting.changes:
        raise SettingError(f"setting {setting.name}: --engine spark runs each query's text as "
                           "written, so it combines with no other axis; compare the engines "
                           "alone, or edit the query file")  # fmt: skip
    if until is not None:
        raise SettingError("--engine spark runs to the end of the input: drop --until")
    if len(queries) > 1 and any(q.query.output_stream is not None for q in queries):
        raise SettingError("--engine spark runs one query per job: a query network (a query "
                           "registering a stream) cannot be compared on Spark")  # fmt: skip


def key(result: Result, kind: TimeKind = TimeKind.ABSTRACT) -> str:
    """What two settings' results are compared by: the jsonl line without ``match``."""
    line = result_to_json(result, kind)
    line.pop("match", None)
    return json.dumps(line, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Row:
    """One result line and how many times each setting gave it at its time."""

    query: str
    t: int
    key: str
    result: Result
    counts: tuple[int, ...]

    @property
    def differs(self) -> bool:
        return len(set(self.counts)) > 1


def compare(results: Mapping[str, Sequence[Result]]) -> list[Row]:
    """The rows of all settings' results (setting name -> results), in time order, each
    with the count per setting in the order of ``results``."""
    counted = {name: Counter(key(r) for r in rs) for name, rs in results.items()}
    first: dict[str, Result] = {}
    for rs in results.values():
        for r in rs:
            first.setdefault(key(r), r)
    rows = [
        Row(r.query, r.t, k, r, tuple(c[k] for c in counted.values())) for k, r in first.items()
    ]
    return sorted(rows, key=lambda row: (row.t, row.query, row.key))


def differing(rows: Sequence[Row]) -> set[str]:
    """The keys of results not every setting gave (as often)."""
    return {row.key for row in rows if row.differs}


def _report(name: str) -> Change:
    strategies: list[Callable[[qa.Query], rp.Strategy]] = []
    for part in name.split("+"):
        match part:
            case "cc":
                strategies.append(lambda q: rp.ContentChange())
            case "wc":
                strategies.append(lambda q: rp.WindowClose())
            case "nc":
                strategies.append(lambda q: rp.NonEmpty())
            case _ if part.startswith("p"):
                strategies.append(_periodic(part))
            case _:
                raise SettingError(f"--report {name}: {part!r} is not one of cc, wc, nc, p, pN "
                                   "(join several with +, e.g. wc+nc)")  # fmt: skip

    def change(query: qa.Query) -> qa.Query:
        if not isinstance(query.report, rp.Report):
            raise SettingError(f"--report {name}: an event or one-time query has no report policy")
        return dataclasses.replace(query, report=rp.Report(tuple(s(query) for s in strategies)))

    return change


def _periodic(part: str) -> Callable[[qa.Query], rp.Strategy]:
    """``pN``: every N; ``p``: every slide of the query's first sliding window."""
    given = part[1:].lstrip("=")
    if given and not given.isdigit():
        raise SettingError(f"--report {part}: a period is p or pN with N a positive integer")

    def strategy(query: qa.Query) -> rp.Strategy:
        if given:
            return rp.Periodic(int(given))
        slides = [w.spec.slide for w in query.dataset.windows if isinstance(w.spec, ds.Sliding)]
        if not slides:
            raise SettingError("--report p: the query has no sliding window; give pN")
        return rp.Periodic(slides[0])

    return strategy


def _operator(name: str) -> Change:
    operator = OPERATORS.get(name.lower())
    if operator is None:
        raise SettingError(f"--operator {name}: one of {', '.join(OPERATORS)}")
    return lambda query: dataclasses.replace(query, expression=operator(query.pattern))


def _event_policy(name: str) -> Change:
    if name.lower() not in EVENT_POLICIES:
        raise SettingError(f"--event-policy {name}: one of {', '.join(EVENT_POLICIES)}")
    policy = ev.SelectionPolicy(name.lower())
    return lambda query: dataclasses.replace(query, event_policy=policy)


def _contiguity(name: str) -> Change:
    policy = CONTIGUITY.get(name.lower())
    if policy is None:
        raise SettingError(f"--contiguity {name}: one of {', '.join(CONTIGUITY)} (SPAseq , ; :)")

    def change(query: qa.Query) -> qa.Query:
        if _with_contiguity(query.expression, ev.SelectionPolicy.UNRESTRICTED) == query.expression:
            raise SettingError(f"--contiguity {name}: the query has no SPAseq sequence")
        changed = _with_contiguity(query.expression, policy)
        assert isinstance(changed, type(query.expression))  # the walk keeps each node's kind
        return dataclasses.replace(query, expression=changed)

    return change


def _with_contiguity(node: object, policy: ev.SelectionPolicy) -> object:
    """``node`` with every SPAseq sequence's strategy set to ``policy``."""
    if isinstance(node, ev.Seq) and node.policy in CONTIGUITY.values():
        node = dataclasses.replace(node, policy=policy)
    if isinstance(node, tuple):
        return tuple(_with_contiguity(x, policy) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        parts = {f.name: _with_contiguity(getattr(node, f.name), policy)
                 for f in dataclasses.fields(node)}  # fmt: skip
        return dataclasses.replace(node, **parts)
    return node


def _dialect(name: str) -> Change:
    """The report policy and streaming operator the dialect gives a query without its own."""
    defaults = DIALECT_DEFAULTS.get(name.lower())
    if defaults is None:
        raise SettingError(f"--dialect {name}: one of {', '.join(DIALECT_DEFAULTS)}")
    report, operator = _report(defaults[0]), _operator(defaults[1])
    return lambda query: operator(report(query))


def _engine(name: str) -> str:
    if name.lower() not in ENGINES:
        raise SettingError(f"--engine {name}: one of {', '.join(ENGINES)}")
    return name.lower()
