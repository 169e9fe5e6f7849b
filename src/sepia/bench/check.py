"""Result counts checked against the reference evaluator (design/benchmarks.md, "Measures").

The reference evaluator (`sepia.semantics.evaluate`) is the judge, but it is slow (the
papers' definitions, literally), so it cannot evaluate a measured run's data. The check uses
the workload generated again at a small *check scale* with the same seed: the generators
draw their events from one seeded sequence, so this is the measured stream's first few
hundred elements (the background of W10, sized by the scale, is smaller too). On it the
reference and every system that ran are evaluated in the harness's process (each bounded by
a timer), and each measured row says whether its system's count there equals the
reference's: ``ok``, ``differs (ref N, got M)``, or ``not checked: why``. A system whose
count differs by design says why in the row's note (``System.counts_differ``).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from sepia.workloads.manifest import Manifest, Variant

CHECK_BUDGET_S = 30.0  # per evaluation: the reference, or one system on one variant
STOP_GRACE_S = 5.0  # for a system that stops itself at its deadline (rsp-js, Flink)


class TooSlow(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Verdict:
    """One system's count on one variant of the check data, next to the reference's."""

    reference: int | str  # the count, or why there is none
    system: int | str  # the same for the system (not run when the reference has none)

    @property
    def text(self) -> str:
        if isinstance(self.reference, str):
            return f"not checked: {self.reference}"
        if isinstance(self.system, str):
            return f"not checked: {self.system}"
        if self.system == self.reference:
            return "ok"
        return f"differs (ref {self.reference:,}, got {self.system:,})"


def reference_count(data: Path, manifest: Manifest, variant: Variant) -> int:
    """The variant's results by the reference evaluator, counted as the systems count."""
    from sepia.bench.systems.base import count_results
    from sepia.io.background import load_background
    from sepia.io.streams import read_stream
    from sepia.lang import parse_query
    from sepia.semantics import evaluate

    assert variant.query is not None
    query = parse_query((data / variant.query).read_text(encoding="utf-8"))
    streams = {s.iri: list(read_stream(data / s.path, s.iri)) for s in manifest.streams_of(variant)}
    graphs = manifest.background_of(variant)
    background = load_background([(g, data / p) for g, p in graphs]) or None
    results = evaluate(query, streams, background, name=variant.name, rdfs=variant.rdfs)
    return count_results(results)


def _alarm(_signal: int, _frame: FrameType | None) -> None:
    raise TooSlow


def _bounded(run: Any, budget: float) -> int | str:
    """``run()``'s count, or why there is none (an error, or longer than ``budget``)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        return int(run())
    except TooSlow:
        return f"took over {budget:g} s"
    except Exception as error:  # a refusal or a crash is the verdict, not the check's end
        return f"{type(error).__name__}: {error}".splitlines()[0]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_workload(data: Path, manifest: Manifest, systems: list[str],
                   budget: float = CHECK_BUDGET_S,
                   keep: Callable[[Variant], bool] = lambda v: True,
                   ) -> dict[tuple[str, str], Verdict]:
    """(system, variant) -> its verdict on the check data, for every variant with a query
    that ``keep`` keeps and every named system that can run it (systems without results, the
    floor, are left out)."""
    from sepia.bench.systems import system
    from sepia.workloads import workload

    spec = workload(manifest.workload)
    verdicts: dict[tuple[str, str], Verdict] = {}
    for variant in manifest.variants:
        if variant.query is None or not keep(variant):
            continue
        checked = [
            (name, chosen) for name, chosen in ((n, system(n)) for n in systems)
            if name != "floor" and not chosen.unavailable()
            and not chosen.cannot_express(spec, variant)
        ]
        if not checked:
            continue  # nothing to hold against the reference: it is not run
        reference = _bounded(lambda v=variant: reference_count(data, manifest, v), budget)
        for name, chosen in checked:
            # a peer's own start (a JVM) is allowed on top, and its own time-out (which ends
            # its processes) comes first
            allowed = budget + getattr(chosen, "startup_s", 0.0)
            count = "" if isinstance(reference, str) else _bounded(
                lambda c=chosen, v=variant: _complete_count(c, data, manifest, v, budget),
                allowed + STOP_GRACE_S)
            verdicts[name, variant.name] = Verdict(reference, count)
    return verdicts


def _complete_count(chosen: Any, data: Path, manifest: Manifest, variant: Variant,
                    budget: float) -> int:
    outcome = chosen.run(data, manifest, variant, time.perf_counter() + budget)
    if not outcome.complete or outcome.results is None:
        raise TooSlow
    return int(outcome.results)
