"""A timeline drawn with matplotlib, saved as PNG or SVG.

Each mark's main artist carries the id ``KIND-N`` (an SVG file keeps it as the group's id),
so the marks of a saved picture can be counted: one per element, window bracket, evaluation
instant, result and member link of the scene.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sepia.rdf.time import TimeKind
from sepia.timeline.scene import Item, Scene
from sepia.timeline.text import Shortener

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

INSTALL = "drawing a PNG or SVG timeline needs matplotlib, which is not installed"
HINT = "pip install 'matplotlib>=3.8', or write the timeline as .html (it needs nothing)"


class MissingMatplotlib(RuntimeError):
    """matplotlib is not installed: the message says how to install it."""


def figure(scene: Scene) -> Figure:
    """The scene on one matplotlib figure (not shown, not registered with pyplot)."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
    except ImportError:
        raise MissingMatplotlib(INSTALL) from None
    low, high = scene.span
    pad = max(1.0, (high - low) * 0.03)
    fig = Figure(figsize=(11, 1.3 + 0.3 * scene.rows), layout="constrained")
    ax = fig.add_subplot()
    for item in scene.items:
        _draw(ax, item, item.ident)
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(scene.rows, -0.2)
    ax.set_yticks([])
    ax.set_xlabel("time")
    if scene.kind is TimeKind.DATETIME:  # epoch milliseconds: ISO 8601 ticks
        from matplotlib.ticker import FuncFormatter

        clock = Shortener((), scene.kind).time
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: clock(value)))
        ax.tick_params(axis="x", labelrotation=20, labelsize=7)
    ax.grid(axis="x", color="#eeeeee", zorder=0)
    ax.set_title(scene.title + (f" ({scene.note})" if scene.note else ""), fontsize=10)
    legend = [
        Line2D([], [], marker="o", ls="", color="#1f77b4", label="stream element"),
        Line2D([], [], lw=5, color="#d62728", alpha=0.6, label="window: what it shows at t"),
        Line2D([], [], lw=1, color="#d62728", label="present window (open, close]"),
        Line2D([], [], lw=1, ls=(0, (1, 2)), color="#555555", label="evaluation instant"),
        Line2D([], [], marker="D", ls="", color="#ff7f0e", label="result (bar: match interval)"),
        Line2D([], [], lw=1.4, color="#e377c2", label="member element of a match"),
    ]
    fig.legend(handles=legend, loc="outside lower center", ncol=3, fontsize=7, frameon=False)
    return fig


def save(scene: Scene, path: Path) -> Figure:
    """Write the scene to ``path`` (.png or .svg); the figure is returned for tests."""
    import matplotlib

    fig = figure(scene)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "sepia"}):
        metadata = {"Date": None} if path.suffix == ".svg" else {}
        fig.savefig(path, dpi=110, metadata=metadata)
    return fig


def _draw(ax: Axes, item: Item, gid: str) -> None:
    middle = (item.y0 + item.y1) / 2
    match item.kind:
        case "lane":
            shade = "#f6f6f6" if int(gid.rsplit("-", 1)[1]) % 2 == 0 else "white"
            ax.axhspan(item.y0, item.y1, color=shade, zorder=0, gid=gid)
            ax.annotate(item.label, (0, item.y0), xycoords=("axes fraction", "data"),
                        xytext=(-4, -2), textcoords="offset points", ha="right", va="top",
                        fontsize=8)  # fmt: skip
        case "element":
            if item.t0 == item.t1:
                ax.plot([item.t0], [middle], "o", color=item.color, ms=6, zorder=4, gid=gid)
            else:
                ax.add_patch(_box(item, gid, alpha=0.7))
            if item.label:
                ax.annotate(item.label, (item.t1, middle), xytext=(6, 0), fontsize=6.5,
                            textcoords="offset points", va="center")  # fmt: skip
        case "window":
            assert item.t is not None  # a window's evaluation instant
            ax.plot([item.t0, item.t1], [middle, middle], color=item.color, lw=1, gid=gid)
            ax.plot([item.t0, item.t0], [item.y0, item.y1], color=item.color, lw=0.8)
            ax.plot([item.t1, item.t1], [item.y0, item.y1], color=item.color, lw=1.6)
            ax.plot([item.t0, item.t], [middle, middle], color=item.color, lw=5, alpha=0.45,
                    solid_capstyle="butt")  # fmt: skip
            ax.plot([item.t], [middle], "v", color="#555555", ms=4)
        case "window-other":
            ax.plot([item.t0, item.t1], [middle, middle], color=item.color, lw=0.8, ls="--",
                    gid=gid)  # fmt: skip
        case "instant":
            ax.plot([item.t0, item.t0], [item.y0, item.y1], color="#444444", lw=1,
                    ls=(0, (1, 2)), zorder=1, gid=gid)  # fmt: skip
        case "result":
            assert item.t is not None  # a result's report time
            if item.t0 != item.t1:
                ax.add_patch(_box(item, gid + "-bar", alpha=0.45))
            hollow, differs = "dstream" in item.flags, "differs" in item.flags
            ax.plot([item.t], [middle], "D", ms=6, zorder=5, gid=gid,
                    color=item.color, mfc="white" if hollow else item.color,
                    mec="black" if differs else item.color, mew=2 if differs else 1)  # fmt: skip
            if item.label:
                ax.annotate(item.label, (item.t, middle), xytext=(7, 0), fontsize=6.5,
                            textcoords="offset points", va="center", zorder=6)  # fmt: skip
            if differs:
                ax.text(item.t, item.y0, "≠ ", fontsize=8, ha="right", va="top", color="black")
        case "link":
            ax.plot([item.t0, item.t0], [item.y0, item.y1], color=item.color, lw=1.0,
                    alpha=0.55, zorder=2, gid=gid)  # fmt: skip
            ax.plot([item.t0], [item.y1], "o", color=item.color, ms=3, zorder=4)


def _box(item: Item, gid: str, alpha: float) -> Rectangle:
    from matplotlib.patches import Rectangle

    return Rectangle((item.t0, item.y0), item.t1 - item.t0, item.y1 - item.y0,
                     color=item.color, alpha=alpha, zorder=3, gid=gid)  # fmt: skip
