"""A timeline as one self-contained HTML file: an SVG drawing and a few lines of script for
zoom (mouse wheel, drag to pan, double-click or the buttons to reset) and hover (a mark's
content in a tooltip; a result also lights up its member elements). No network, no library.

Every mark is a ``<g class="mark KIND">`` whose shapes carry their times in ``data-a`` /
``data-b``; zooming only moves shapes along x, so the file's marks are the scene's marks.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files
from pathlib import Path

from sepia.timeline.scene import Item, Scene

LEFT, RIGHT, TOP, ROW, AXIS = 170, 30, 20, 24, 34
WIDTH = 1200
LAYERS = {"instant": 0, "link": 1, "window-other": 2, "window": 3, "element": 4, "result": 5}
"""Later kinds are drawn over earlier ones: marks stay visible over the lines reaching them."""


def page(scene: Scene) -> str:
    """The HTML text of the scene."""
    low, high = scene.span
    pad = max(1.0, (high - low) * 0.03)
    view = (low - pad, high + pad)
    height = TOP + scene.rows * ROW + AXIS
    lanes = [_lane(item) for item in scene.items if item.kind == "lane"]
    drawn = sorted((i for i in scene.items if i.kind != "lane"), key=lambda i: LAYERS[i.kind])
    marks = [_mark(item, view) for item in drawn]
    title = escape(scene.title or "Sepia timeline") + (
        f" <small>({escape(scene.note)})</small>" if scene.note else ""
    )
    script = files("sepia.timeline").joinpath("timeline.js").read_text(encoding="utf-8")
    style = files("sepia.timeline").joinpath("timeline.css").read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(scene.title or "timeline")}</title>
<style>{style}</style></head>
<body>
<h1>{title}</h1>
<p class="help">Mouse wheel: zoom in time. Drag: move. Double-click or
<button id="reset">reset</button> <button id="zoom-in">+</button>
<button id="zoom-out">−</button>. Hover a mark: its content;
a result lights up its member elements.</p>
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}"
 data-low="{view[0]}" data-high="{view[1]}" data-left="{LEFT}" data-right="{WIDTH - RIGHT}"
 data-axis="{height - AXIS:.0f}">
<defs><clipPath id="plot"><rect x="{LEFT}" y="0" width="{WIDTH - LEFT - RIGHT}"
 height="{height:.0f}"/></clipPath></defs>
<g class="lanes">{"".join(lanes)}</g>
<g class="marks" clip-path="url(#plot)">{"".join(marks)}</g>
<g class="axis" transform="translate(0,{height - AXIS:.0f})"></g>
</svg>
<div class="legend"><span class="k element">●</span> stream element
<span class="k window">▬</span> window: present window (open, close], thick: what it shows at t
<span class="k instant">┆</span> evaluation instant
<span class="k result">◆</span> result (bar: match interval; hollow: DStream; ringed: differs)
<span class="k link">│</span> member element of a match</div>
<div id="tip" hidden></div>
<script>{script}</script>
</body></html>
"""


def write_page(scene: Scene, path: Path) -> None:
    path.write_text(page(scene), encoding="utf-8")


def _x(t: float, view: tuple[float, float]) -> float:
    return LEFT + (t - view[0]) / (view[1] - view[0]) * (WIDTH - LEFT - RIGHT)


def _y(row: float) -> float:
    return TOP + row * ROW


def _lane(item: Item) -> str:
    shade = "even" if int(item.ident.rsplit("-", 1)[1]) % 2 == 0 else "odd"
    return (
        f'<g class="lane {shade}"><rect x="0" y="{_y(item.y0):.1f}" width="{WIDTH}" '
        f'height="{(item.y1 - item.y0) * ROW:.1f}"/><text x="{LEFT - 8}" '
        f'y="{_y(item.y0) + 15:.1f}" text-anchor="end">{escape(item.label)}</text></g>'
    )


def _mark(item: Item, view: tuple[float, float]) -> str:
    a, b = item.t0, item.t1
    y0, y1 = _y(item.y0), _y(item.y1)
    mid = (y0 + y1) / 2
    ident = f'id="{item.ident}"'
    tip = f' data-tip="{escape(item.tip)}"' if item.tip else ""
    flag = "".join(f" {f}" for f in sorted(item.flags))
    shapes: list[str] = []
    match item.kind:
        case "element":
            if a == b:
                shapes.append(_circle(a, mid, 5, view, item.color))
            else:
                shapes.append(_rect(a, b, y0, y1, view, item.color))
            if item.label:
                shapes.append(_text(b, mid + 4, item.label, view, "label", dx=8))
        case "window":
            shapes += [
                _line(a, b, mid, mid, view, "span"),
                _line(a, a, y0, y1, view, "open"),
                _line(b, b, y0, y1, view, "close"),
                _rect(a, item.t or a, mid - 3, mid + 3, view, None, "shown"),
            ]
        case "window-other":
            shapes.append(_line(a, b, mid, mid, view, "other"))
        case "instant":
            shapes.append(_line(a, a, y0, y1, view, "instant"))
        case "result":
            if a != b:
                shapes.append(_rect(a, b, y0, y1, view, None, "bar"))
            shapes.append(
                f'<path class="diamond" d="M0,-6L6,0L0,6L-6,0Z" data-a="{item.t}" '
                f'data-y="{mid:.1f}" transform="translate({_x(item.t or a, view):.1f},{mid:.1f})"/>'
            )
            if item.label:
                shapes.append(_text(item.t or a, mid + 4, item.label, view, "label", dx=9))
        case "link":
            shapes.append(_line(a, a, y0, y1, view, "link"))
    extra = f' data-lights="{" ".join(item.lights)}"' if item.lights else ""
    return f'<g {ident} class="mark {item.kind}{flag}"{tip}{extra}>{"".join(shapes)}</g>'


def _circle(a: float, y: float, r: float, view: tuple[float, float], color: str) -> str:
    return f'<circle data-a="{a}" cx="{_x(a, view):.1f}" cy="{y:.1f}" r="{r}" fill="{color}"/>'


def _rect(a, b, y0, y1, view, color: str | None, cls: str = "") -> str:
    fill = f' fill="{color}"' if color else ""
    klass = f' class="{cls}"' if cls else ""
    x0, x1 = _x(a, view), _x(b, view)
    return (
        f'<rect{klass} data-a="{a}" data-b="{b}" x="{x0:.1f}" y="{y0:.1f}" '
        f'width="{max(x1 - x0, 0):.1f}" height="{y1 - y0:.1f}"{fill}/>'
    )


def _line(a, b, y0, y1, view, cls: str) -> str:
    return (
        f'<line class="{cls}" data-a="{a}" data-b="{b}" x1="{_x(a, view):.1f}" '
        f'x2="{_x(b, view):.1f}" y1="{y0:.1f}" y2="{y1:.1f}"/>'
    )


def _text(a, y, text: str, view, cls: str, dx: float = 0) -> str:
    return (
        f'<text class="{cls}" data-a="{a}" data-dx="{dx}" x="{_x(a, view) + dx:.1f}" '
        f'y="{y:.1f}">{escape(text)}</text>'
    )
