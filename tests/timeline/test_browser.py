"""The HTML timeline opened in headless Chromium: zoom and hover work, and a screenshot
shows each element and result mark where the drawing put it (its colour at its centre),
which checks the structure, not the pixels. Skipped where Chromium is not installed
(`make setup` installs Debian's chromium package through scripts/install-chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sepia.timeline import timeline, write

from .worked import worked

CHROMIUM = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: run scripts/install-chromium (Debian)"
)

PROBE = """<script>
(function () {
  const svg = document.getElementById("timeline");
  const out = {};
  const circle = document.querySelector("#element-0 circle");
  const before = { low: +svg.dataset.low, high: +svg.dataset.high, cx: +circle.getAttribute("cx") };
  const box = svg.getBoundingClientRect();
  out.box = { left: box.left, top: box.top };
  out.marks = {};
  for (const g of document.querySelectorAll("#element-0, #element-3, #result-0, #result-1")) {
    const shape = g.querySelector("circle, path");
    const r = shape.getBoundingClientRect();
    out.marks[g.id] = [r.left + r.width / 2, r.top + r.height / 2];
  }
  svg.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: box.left + 600,
                                              clientY: box.top + 50, bubbles: true }));
  out.zoom = { before, after: { low: +svg.dataset.low, high: +svg.dataset.high,
                                cx: +circle.getAttribute("cx") } };
  svg.dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
  out.reset = { low: +svg.dataset.low, high: +svg.dataset.high };
  const result = document.getElementById("result-1");
  result.dispatchEvent(new MouseEvent("mouseover", { clientX: 300, clientY: 200, bubbles: true }));
  const tip = document.getElementById("tip");
  out.hover = { hidden: tip.hidden, text: tip.textContent, tipOf: result.dataset.tip,
                hot: [...document.querySelectorAll(".hot")].map((e) => e.id).sort() };
  result.dispatchEvent(new MouseEvent("mouseout", { bubbles: true }));
  out.after = { hidden: tip.hidden, hot: document.querySelectorAll(".hot").length };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def chromium(*args: str) -> subprocess.CompletedProcess:
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
        "--force-device-scale-factor=1", "--window-size=1250,800",
    ]  # fmt: skip
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """E3's timeline: 5 elements, 4 matches (result-1 is [4, 8]: members @4 and @8)."""
    w = worked("e3-rsepql-landmark")
    path = tmp_path_factory.mktemp("browser") / "e3.html"
    write(timeline(w.runs, w.streams, w.background), path)
    return path


@pytest.fixture(scope="module")
def probed(page: Path, tmp_path_factory) -> dict:
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    done = chromium("--dump-dom", probe.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_wheel_zooms_around_the_cursor_and_double_click_resets(probed: dict) -> None:
    before, after = probed["zoom"]["before"], probed["zoom"]["after"]
    assert after["high"] - after["low"] == pytest.approx(0.8 * (before["high"] - before["low"]))
    assert after["cx"] != before["cx"]  # the marks moved with the view
    assert probed["reset"] == {"low": before["low"], "high": before["high"]}


def test_hover_shows_the_result_and_lights_its_members(probed: dict) -> None:
    hover = probed["hover"]
    assert not hover["hidden"]
    assert hover["text"] == hover["tipOf"] == "+ t=8 [4, 8]: ?x=:a2 ?y=:b2 ?z=:c2"
    # the match [4, 8] is made of element-1 (a2 :p b2 @4) and element-3 (b2 :q c2 @8)
    assert hover["hot"] == ["element-1", "element-3", "link-2", "link-3", "result-1"]
    assert probed["after"] == {"hidden": True, "hot": 0}


def test_screenshot_shows_the_marks_where_they_are_drawn(page: Path, probed: dict) -> None:
    from PIL import Image

    shot = page.with_name("shot.png")
    chromium(f"--screenshot={shot}", page.as_uri())
    image = Image.open(shot).convert("RGB")
    colours = {"element": (0x1F, 0x77, 0xB4), "result": (0xFF, 0x7F, 0x0E)}
    for ident, (x, y) in probed["marks"].items():
        pixel = image.getpixel((round(x), round(y)))
        expected = colours[ident.split("-")[0]]
        assert all(abs(a - b) <= 40 for a, b in zip(pixel, expected, strict=True)), (ident, pixel)
    # and the background between marks is not a mark's colour (the picture is not one blob)
    left, top = probed["box"]["left"], probed["box"]["top"]
    assert image.getpixel((round(left) + 20, round(top) + 5)) not in colours.values()
