"""The layout of a timeline, shared by the matplotlib and the HTML drawings: lanes from top
to bottom (one per stream, then for each query or setting one per window and one for its
results), and the marks in them, each placed by time (x) and row (y, in row units from the
top). Both drawings draw exactly these marks, so a test can count them in either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sepia.timeline.model import Bracket, Element, Mark, Timeline

LABELS_UP_TO = 40
"""Elements are labelled in the picture when there are at most this many (hover always)."""
OTHER_WINDOWS_UP_TO = 3
"""The other windows holding an instant are drawn (dashed) when there are at most this many."""

PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22"]


@dataclass(frozen=True, slots=True)
class Item:
    """One mark: ``kind`` is lane, element, window, window-other, instant, result or link.

    ``t0``..``t1`` is its extent in time (equal for a point) and ``y0``..``y1`` in rows;
    a window's ``t`` is the evaluation instant (what it shows is (t0, t]); a result's ``t``
    its report time. ``tip`` is the hover text, ``label`` the text written beside it.
    """

    kind: str
    t0: float
    t1: float
    y0: float
    y1: float
    t: float | None = None
    tip: str = ""
    label: str = ""
    color: str = "#333333"
    flags: frozenset[str] = frozenset()
    """A result's: "dstream" (op "-"), "differs" (not every compared setting gave it)."""
    ident: str = ""  # KIND-N, N counting the marks of that kind from 0
    lights: tuple[str, ...] = ()  # a result's member elements and links, lit on hover


@dataclass(slots=True)
class Scene:
    items: list[Item]
    rows: float
    span: tuple[int, int]
    title: str
    note: str

    def count(self, kind: str) -> int:
        return sum(item.kind == kind for item in self.items)


class _Items(list):
    """Items numbered by kind as they are added (``KIND-N``)."""

    def __init__(self) -> None:
        super().__init__()
        self.counters: dict[str, int] = {}

    def add(self, item: Item, lights: tuple[str, ...] = ()) -> str:
        number = self.counters.get(item.kind, 0)
        self.counters[item.kind] = number + 1
        ident = f"{item.kind}-{number}"
        self.append(replace(item, ident=ident, lights=lights))
        return ident


def scene(timeline: Timeline) -> Scene:
    """Lay out ``timeline``: streams first, then each lane's windows and results."""
    items = _Items()
    y = 0.0
    labelled = len(timeline.elements) <= LABELS_UP_TO
    where: dict[int, tuple[float, float, str]] = {}
    reach = max(timeline.span[1] - timeline.span[0], 1) * CHARACTER  # of a label character
    for n, (iri, elements) in enumerate(timeline.streams.items()):
        color = PALETTE[n % len(PALETTE)]
        rows = _pack([(e.start, e.end + reach * labelled * (len(_label(e)) + 3)) for e in elements])
        height = max(rows, default=0) + 1
        items.add(Item("lane", *timeline.span, y, y + height, label=_short_iri(iri)))
        for e, row in zip(elements, rows, strict=True):
            top = y + row
            where[e.number] = (e.end, top + 0.5, items.add(_element(e, top, color, labelled)))
        y += height
    for lane in timeline.lanes:
        first = y
        for window, brackets in lane.brackets.items():
            height = max(len(brackets), 1)
            items.add(Item("lane", *timeline.span, y, y + height, label=f"{lane.name} {window}"))
            for k, b in enumerate(brackets):
                for item in _bracket(b, y + k):
                    items.add(item)
            y += height
        rows = _pack([m.interval or (m.t, m.t) for m in lane.marks])
        height = max(rows, default=0) + 1
        items.add(Item("lane", *timeline.span, y, y + height, label=lane.name))
        room = _room(lane.marks, rows, timeline.span)
        for mark, row, fits in zip(lane.marks, rows, room, strict=True):
            shown = [where[n] for n in mark.members if n in where]
            links = tuple(items.add(_link(at, mark, y + row)) for at in shown)
            item = _result(mark, y + row)
            item = item if fits else replace(item, label="")
            items.add(item, tuple(at[2] for at in shown) + links)
        y += height
        for t in lane.instants:
            items.add(Item("instant", t, t, first, y, t=t, tip=f"{lane.name}: evaluation at {t}"))
    return Scene(list(items), y, timeline.span, timeline.title, timeline.note)


def _element(e: Element, top: float, color: str, labelled: bool) -> Item:
    stamp = f"{e.start}" if e.start == e.end else f"[{e.start}, {e.end}]"
    label = _label(e) if labelled else ""
    return Item("element", e.start, e.end, top + 0.2, top + 0.8, t=e.end,
                tip=f"@{stamp} {e.text}", label=label, color=color)  # fmt: skip


def _label(e: Element) -> str:
    return e.text if len(e.text) <= 32 else e.text[:31] + "…"


def _bracket(b: Bracket, top: float) -> list[Item]:
    """The present window at b.t, and the other windows holding b.t below it (when few)."""
    present = Item("window", b.opening, b.close, top + 0.15, top + 0.6, t=b.t,
                   tip=f"{b.window} at {b.t}: present window ({b.opening}, {b.close}], "
                   f"shows ({b.opening}, {b.t}]", color="#d62728")  # fmt: skip
    if len(b.others) > OTHER_WINDOWS_UP_TO:
        return [present]
    return [present] + [
        Item("window-other", o, c, top + 0.68 + 0.1 * k, top + 0.68 + 0.1 * k, t=b.t,
             color="#999999", tip=f"{b.window} at {b.t}: window ({o}, {c}] also holds {b.t}")
        for k, (o, c) in enumerate(b.others)
    ]  # fmt: skip


def _result(mark: Mark, top: float) -> Item:
    start, end = mark.interval or (mark.t, mark.t)
    color = "#d62728" if mark.op == "-" else "#ff7f0e"
    flags = frozenset(["differs"] * mark.differs + ["dstream"] * (mark.op == "-"))
    label = mark.label if len(mark.label) <= 60 else mark.label[:59] + "…"
    return Item("result", start, end, top + 0.2, top + 0.8, t=mark.t, tip=mark.text,
                label=label, color=color, flags=flags)  # fmt: skip


def _link(element: tuple[float, float, str], mark: Mark, top: float) -> Item:
    t, y, _ = element
    return Item("link", t, t, y, top + 0.5, t=mark.t, color="#e377c2")


CHARACTER = 1 / 170
"""A label character's width as a share of the time axis (6.5 pt on an 11 inch figure)."""


def _room(marks: list[Mark], rows: list[int], span: tuple[int, int]) -> list[bool]:
    """Whether each result's label fits before the next mark that starts in its row."""
    width = max(span[1] - span[0], 1) * CHARACTER
    starts = [(m.interval or (m.t, m.t))[0] for m in marks]
    fits = []
    for k, mark in enumerate(marks):
        end = mark.t + (len(mark.label[:60]) + 3) * width
        fits.append(not any(
            rows[j] == rows[k] and j != k and mark.t < starts[j] <= end for j in range(len(marks))
        ))  # fmt: skip
    return fits


def _pack(extents: list[tuple[float, float]]) -> list[int]:
    """A row for each extent, the lowest free one (extents sharing a time never share a row)."""
    taken: list[list[tuple[float, float]]] = []
    rows = []
    for start, end in extents:
        free = (k for k, row in enumerate(taken) if all(b < start or a > end for a, b in row))
        row = next(free, len(taken))
        if row == len(taken):
            taken.append([])
        taken[row].append((start, end))
        rows.append(row)
    return rows


def _short_iri(iri: str) -> str:
    return iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri
