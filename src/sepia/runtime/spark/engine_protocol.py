"""What the Spark job asks of an engine: one pure step over state rows (style.md point 7).

The host (`sepia.runtime.spark.host`) keeps one state per key in Spark's state store and calls
`step` when the key gets new elements or a timer it asked for fires. Everything the engine
remembers goes back out as rows of the tables it declares, so Spark checkpoints it and a
restarted job resumes from the last committed batch (architecture principle 3). The rows
are the truth: an engine may keep a live copy of a key's state between calls (to skip
rebuilding it), but only uses it when the rows it is given are the very ones it wrote
last (a replayed batch, a restart or another worker give it older or unknown rows).

Time contract: `horizon` is the last instant whose input is complete (Spark's watermark
minus one: every element stamped at or before it has arrived, later-stamped ones may still
come). A step emits the results with t <= horizon it has not emitted before, and never
again; `final` says the input has ended, so everything left is due. `wake_at` asks for a
call, with no new input, once the horizon reaches that instant (window closes, pending
matches); the host turns it into an event-time timer.

Storage contract: a step's `state` replaces the tables it names; `changed` sets or removes
entries of *map* tables (`maps`: string key -> value row, read as (key, *value) rows), so a
step writes the entries that changed (the terms it added or forgot, the parts of the
snapshot it touched), not the whole state; tables named in neither stay as they are
(`stored` says it exactly).
The state a step is given may read its tables lazily: an engine that does not look at a
table does not pay for reading it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.elements import ElementRow
from sepia.runtime.spark.units import Unit

State = dict[str, list[tuple]]
"""An engine's state: table name -> rows (tuples matching the table's declared schema)."""
StoredState = Mapping[str, list[tuple]]
"""The state a step is given (the host's may read each table when first looked up)."""


@dataclass(frozen=True, slots=True)
class Step:
    """What one step returns: the new state, the results now due, when to call again."""

    state: State
    results: list[Result]
    wake_at: int | None
    time_kind: TimeKind
    """How the results' times print (the kind of the elements the key has seen)."""
    order: list[str] | None = None
    """For a unit spread over several keys, each result's place among all its keys'
    results of a batch (within one time), then its line where places are equal
    (`result_lines.ordered_lines`); None: the key and the results' order give it."""
    changed: dict[str, dict[str, tuple | None]] = field(default_factory=dict)
    """Entries of map tables set to a value row, or removed (None)."""
    lines: list[str] | None = None
    """The results' jsonl lines (`time_kind`), where the engine rendered them already
    (with `order`: `result_lines.ordered_lines`); None: the host renders them."""


def stored(before: StoredState, step: Step) -> State:
    """The key's state after `step`: `step.state` replaces, `step.changed` sets and removes."""
    after = {name: list(rows) for name, rows in before.items()}
    after.update(step.state)
    for name, entries in step.changed.items():
        kept = {row[0]: row[1:] for row in after.get(name, [])}
        for key, value in entries.items():
            if value is None:
                kept.pop(key, None)
            else:
                kept[key] = value
        after[name] = [(key, *value) for key, value in kept.items()]
    return after


class ContinuousEngine(Protocol):
    """A unit's engine: one instance per unit and Python worker, shared by its keys."""

    tables: Mapping[str, str]
    """State table name -> Spark DDL schema of its rows."""
    maps: Mapping[str, str]
    """Map table name -> Spark DDL schema of its value: keys are strings, and the value is
    one string column (the host keeps every map table of a key in one map state)."""

    def step(
        self,
        key: str | None,
        state: StoredState,
        elements: Sequence[ElementRow],
        horizon: int,
        final: bool,
    ) -> Step:
        """Take a key's new elements (possibly none) and the horizon; return the next state."""
        ...


class EngineFactory(Protocol):
    """Builds a unit's engine on a worker; registered by name in `ENGINES` (host module)."""

    def __call__(
        self,
        unit: Unit,
        background: ox.Store | None,
        rdfs: bool,
        *,
        forget_terms: int | None,
        checked: bool,
    ) -> ContinuousEngine:
        """`forget_terms`: when a key's dictionary starts forgetting (`JobSpec.forget_terms`);
        `checked`: the driver found that this engine runs the unit (`host.job_spec`), so a
        worker need not find it again."""
        ...
