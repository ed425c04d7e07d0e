"""The report's figures, drawn with matplotlib as SVG and embedded as data URIs (no file to fetch, and
no clash between the ids of several figures in one page).

Length generalisation: per task, the fraction of instances exact at each tested length, one colour
per system and one line per seed. Training: per task, the loss and the closed-loop robust length
against iterations, one line per seed (the run's metrics.jsonl), and the model each run delivers
(fine-tuned where it was: what `dfst eval RUN` scores) as a star at its end.
"""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

from dfst.results import Result  # noqa: E402
from dfst.results.plots import LG_AXIS, draw_delivered, draw_training_run  # noqa: E402

# Text stays text (a much smaller file than glyph paths), and the ids and date are fixed, so the
# same results give the same page.
SVG_STYLE = {"svg.fonttype": "none", "svg.hashsalt": "dfst-report", "font.size": 8}


def lg_figure(task: str, results: list[Result]) -> str | None:
    """Exact fraction against N (log axis), per system and seed; None when no result has levels."""
    tested = [r for r in results if r.levels]
    if not tested:
        return None
    with plt.rc_context(SVG_STYLE):
        fig, ax = plt.subplots(figsize=(5.6, 3.4), dpi=100)
        colours = _colours([r.system for r in tested])
        for r in tested:
            n = [lv["digits"] for lv in r.levels]
            exact = [lv["exact"] / max(lv["instances"], 1) for lv in r.levels]
            ax.plot(n, exact, "o-", color=colours[r.system], lw=1, ms=3, alpha=0.75)
        for system, colour in colours.items():
            ax.plot([], [], "o-", color=colour, label=system)  # one legend entry per system
        ax.set(xscale="log", ylim=(-0.05, 1.05), xlabel="operand digits N",
               ylabel="fraction of instances exact", title=f"{task}: length generalisation (a line per seed)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, loc="lower left")
        return svg_data_uri(fig)


def training_figure(task: str, runs: dict[str, list[dict]],
                    delivered: dict[str, Result] | None = None) -> str | None:
    """Loss (log) and the weights' robust length (log, a model failing at the first tested length
    drawn at 1) against iterations, a line per run (by label); `delivered`: the model each run
    delivers (RUN/model, what `dfst eval RUN` scores), a star at its last iteration. None when no run
    logged anything."""
    if not any(runs.values()):
        return None
    delivered = delivered or {}
    with plt.rc_context(SVG_STYLE):
        fig, (ax_loss, ax_lg) = plt.subplots(1, 2, figsize=(8.4, 3.0), dpi=100)
        for label, records in runs.items():
            line, _ = draw_training_run(ax_loss, ax_lg, label, records)
            if label in delivered:
                draw_delivered(ax_lg, delivered[label], line.get_color())
        ax_loss.set(yscale="log", xlabel="iteration", ylabel="training loss", title=f"{task}: training")
        ax_lg.set(yscale="log", xlabel="iteration", ylabel=LG_AXIS,
                  title="during training, before any fine-tuning (lines);\n"
                        "the model each run delivers (stars)"
                  if delivered else "closed-loop evaluation during training")
        ax_lg.margins(y=0.15)
        for ax in (ax_loss, ax_lg):
            ax.grid(True, which="both", alpha=0.3)
        ax_loss.legend(fontsize=6, ncol=2)
        return svg_data_uri(fig)


def _colours(systems: list[str]) -> dict[str, str]:
    """A colour per system, in order of appearance."""
    order = list(dict.fromkeys(systems))
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {s: palette[i % len(palette)] for i, s in enumerate(order)}


def svg_data_uri(fig) -> str:
    """The figure as an SVG data URI; the figure is closed."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode()
