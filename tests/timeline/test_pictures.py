"""Every worked example drawn in the three formats: each picture holds exactly the marks of
its run. The counts are worked out by hand from the examples' READMEs, not read back from
the code that draws them: elements per stream file, one window bracket per named window and
evaluation instant, the instants of each report policy, one result mark per expected.jsonl
line, one link per member element of each event match."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from sepia.timeline import scene, timeline, write
from sepia.timeline.drawing import save

from .worked import NAMES, worked

# example: (elements, window brackets, instants, results, links)
EXPECTED = {
    # E1: 7 elements; w1 and w2 at the two instants 8 and 16 (window close AND non-empty
    # of w2); three answers; no event match.
    "e1-shops-coupons": (7, 2 * 2, 2, 3, 0),
    # E2: 4 delays; push-based: evaluated at each arrival 10, 12, 14, 16, one bracket of W
    # each; one match [10, 16] made of a1's delays at 10 and 16.
    "e2-subway-delays": (4, 4, 4, 1, 2),
    # E3: 5 graphs; arrivals 2, 4, 6, 8, 10, brackets of w1 and w2 at each; 4 matches of
    # two events each.
    "e3-rsepql-landmark": (5, 5 * 2, 5, 4, 4 * 2),
    # E4: 2 power + 3 weather events; no window; each of the 3 queries evaluated at the 5
    # arrivals; 4 + 2 + 1 matches of two events.
    "e4-spaseq-selection": (5, 0, 3 * 5, 7, 7 * 2),
    # E5: 6 price occurrences, one per arrival instant; one match of 3 occurrences.
    "e5-epsparql-drop-rise": (6, 0, 6, 1, 3),
    # E6: 6 observations; query.rq closes at 5, 10, 15; alarm-then-traffic at each of the
    # 6 arrivals; 2 + 2 results; the 2 alarm matches have two events each.
    "e6-smart-city-rdfs": (6, 3 + 6, 3 + 6, 4, 2 * 2),
}
KINDS = ("element", "window", "instant", "result", "link")


def test_every_example_is_covered() -> None:
    assert sorted(EXPECTED) == NAMES


@pytest.fixture(scope="module", params=NAMES)
def laid(request):
    w = worked(request.param)
    assert len(w.results) == len(w.expected)  # the reference gives the expected answer
    return request.param, w, scene(timeline(w.runs, w.streams, w.background))


def test_scene_holds_the_runs_marks(laid) -> None:
    name, _, drawn = laid
    assert tuple(drawn.count(kind) for kind in KINDS) == EXPECTED[name]


def _ids(text: str) -> Counter:
    """Marks in a written SVG / HTML file, by the id each mark carries (KIND-N)."""
    found = re.findall(r'id="(element|window|instant|result|link)-\d+"', text)
    return Counter(found)


@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_written_file_holds_the_marks(laid, suffix: str, tmp_path: Path) -> None:
    name, w, _ = laid
    path = tmp_path / f"{name}{suffix}"
    write(timeline(w.runs, w.streams, w.background), path)
    ids = _ids(path.read_text(encoding="utf-8"))
    assert tuple(ids[kind] for kind in KINDS) == EXPECTED[name]


def test_png_figure_holds_the_marks(laid, tmp_path: Path) -> None:
    name, _, drawn = laid
    path = tmp_path / f"{name}.png"
    figure = save(drawn, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gids = Counter(
        gid.split("-")[0] if not gid.startswith("window-other") else "window-other"
        for artist in figure.findobj()
        if (gid := artist.get_gid()) and re.fullmatch(r"[a-z-]+-\d+", gid)
    )
    assert tuple(gids[kind] for kind in KINDS) == EXPECTED[name]


def test_e1_brackets_are_the_present_windows() -> None:
    """E1 README: at 8 w1's present window is (3, 8] (of (3,8], (5,10], (7,12] holding 8)
    and w2's (6, 8]; at 16, (11, 16] and (14, 16]."""
    w = worked("e1-shops-coupons")
    (lane,) = timeline(w.runs, w.streams, w.background).lanes
    brackets = {
        k: [(b.t, b.opening, b.close, b.others) for b in v] for k, v in lane.brackets.items()
    }
    assert brackets == {
        ":w1": [(8, 3, 8, ((5, 10), (7, 12))), (16, 11, 16, ((13, 18), (15, 20)))],
        ":w2": [(8, 6, 8, ()), (16, 14, 16, ())],
    }
    assert lane.instants == [8, 16]


def test_members_follow_the_sequences() -> None:
    """E3: the match [4, 8] is a2 :p b2 @4 then b2 :q c2 @8, not the a2 :p b2 repeated @6
    (which is the match [6, 8]); E5: acme 100@1, 60@3, 110@5."""
    e3 = worked("e3-rsepql-landmark")
    (lane,) = timeline(e3.runs, e3.streams, e3.background).lanes
    assert [(m.interval, m.members) for m in lane.marks] == [
        ((2, 6), (0, 2)), ((4, 8), (1, 3)), ((6, 8), (2, 3)), ((2, 10), (0, 4)),
    ]  # fmt: skip
    e5 = worked("e5-epsparql-drop-rise")
    shown = timeline(e5.runs, e5.streams, e5.background)
    (mark,) = shown.lanes[0].marks
    texts = [shown.elements[n].text for n in mark.members]
    assert texts == [":acme :price 100", ":acme :price 60", ":acme :price 110"]


def test_time_range_cuts_the_picture() -> None:
    """E3 from 5 to 8: elements @6 and @8, the brackets and results of instants 6 and 8."""
    w = worked("e3-rsepql-landmark")
    drawn = scene(timeline(w.runs, w.streams, w.background, span=(5, 8)))
    assert (drawn.count("element"), drawn.count("window"), drawn.count("result")) == (2, 4, 3)
