"""Figures from reports; every figure comes from a command (`dfst eval` writes eval.png)."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

from dfst.io.outputs import plot_metadata, write_atomic  # noqa: E402
from dfst.results.schema import Result  # noqa: E402
from dfst.results.wording import lg_cell, lg_words  # noqa: E402

FORMATS = (".png", ".svg", ".pdf")  # what a figure can be written as; the suffix decides


def plot_length_generalisation(report: dict, path: str | Path) -> Path:
    """Exact-match accuracy against N (log axis): all instances, and random pairs with 95% Wilson bars."""
    levels = report["levels"]
    n = [lv["digits"] for lv in levels]
    overall = [lv["exact"] / max(lv["instances"], 1) for lv in levels]
    rand = [lv["random_exact"] / max(lv["random"], 1) for lv in levels]  # 0 pairs: plotted as 0
    err = [[max(0.0, r - lv["wilson_low"]) for r, lv in zip(rand, levels)],  # clip float rounding
           [max(0.0, lv["wilson_high"] - r) for r, lv in zip(rand, levels)]]
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    ax.plot(n, overall, "o-", label="hard + random (robust)", color="tab:blue")
    ax.errorbar(n, rand, yerr=err, fmt="s--", capsize=3, label="random pairs, 95% Wilson", color="tab:orange")
    ax.set_xscale("log")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("operand digits N")
    ax.set_ylabel("exact-match accuracy")
    ax.set_title(f"{report['task']}: {lg_words(report['robust_max_digits'], levels)} "
                 f"({report['mode']}, stopped: {report['stopped_by']})", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, Path(path))


def plot_training_runs(series: dict[str, list[dict]], path: str | Path,
                       delivered: dict[str, Result] | None = None) -> Path:
    """Per run against iterations: teacher-forced loss (log), closed-loop robust length (log, a model
    that fails at the first tested length drawn at 1) of the weights during training (solid) and of
    the automaton read off them (dashed, where one was), and the fraction of instances exact at the
    shortest evaluation length. `delivered`: per run (same keys), the result of the model it
    delivers (`dfst.results.store.read_run_result`), drawn as a star at its last iteration: the
    fine-tuned weights of a fine-tuned run, whose training line is then the weights before."""
    fig, (ax_loss, ax_lg, ax_exact) = plt.subplots(1, 3, figsize=(14, 4), dpi=110)
    delivered = delivered or {}
    for name, records in series.items():
        line, evals = draw_training_run(ax_loss, ax_lg, name, records)
        if name in delivered:
            draw_delivered(ax_lg, delivered[name], line.get_color())
        steps = [r["iteration"] for r in evals]
        read_off = [(r["iteration"], r["eval"]["extracted"]) for r in evals if r["eval"].get("extracted")]
        ax_lg.plot([i for i, _ in read_off], [max(1, e["robust_max_digits"]) for _, e in read_off], "s--",
                   lw=1, ms=3, color=line.get_color(), alpha=0.7)
        first = [r["eval"]["levels"][0] for r in evals]
        ax_exact.plot(steps, [lv["exact"] / lv["instances"] for lv in first], "o-", label=name, lw=1, ms=3,
                      color=line.get_color())
    evaluated = (r for records in series.values() for r in records if "eval" in r)
    shortest = next((r["eval"]["levels"][0]["digits"] for r in evaluated), "?")
    ax_loss.set(yscale="log", xlabel="iteration", ylabel="training loss")
    ax_lg.set(yscale="log", xlabel="iteration", ylabel=LG_AXIS)
    ax_lg.margins(y=0.15)  # room for the stars' labels
    ax_lg.set_title("weights during training, before any fine-tuning (solid), automaton read off\n"
                    "(dashed); the model the run delivers, RUN/model (star)" if delivered
                    else "weights (solid), automaton read off (dashed)", fontsize=9)
    ax_exact.set(ylim=(-0.05, 1.05), xlabel="iteration", ylabel=f"fraction exact at {shortest} digits")
    for ax in (ax_loss, ax_lg, ax_exact):
        ax.grid(True, which="both", alpha=0.3)
    ax_exact.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return save_figure(fig, Path(path))


# the robust-length axis: log, with a model that fails at the first tested length at its bottom, 1
LG_AXIS = "robust to N digits (1: fails at first length)"


def draw_delivered(ax_lg, result: Result, colour: str) -> None:
    """The model a run delivers (RUN/model, what `dfst eval RUN` scores) as a star at the run's last
    iteration, labelled with its robust length, which weights they are and who measured them."""
    if result.robust_lg is None:
        return
    x, y = result.details["iterations"], max(1, result.robust_lg)
    ax_lg.plot([x], [y], "*", ms=12, color=colour, markeredgecolor="black", markeredgewidth=0.5)
    tested = (result.details.get("tested_by") or "the run").split(" (")[0]
    ax_lg.annotate(f"{result.details.get('model', 'model')}: {lg_cell(result.robust_lg, result.levels)} "
                   f"({tested})", (x, y), textcoords="offset points", xytext=(-6, 5), ha="right", va="bottom",
                   fontsize=7, color=colour)


def draw_training_run(ax_loss, ax_lg, label: str, records: list[dict]) -> tuple:
    """One run's metrics.jsonl records against iterations: the loss (NaN left out) on `ax_loss`, the
    weights' closed-loop robust length (0 drawn at 1) on `ax_lg` in the same colour; returns the loss
    line and the evaluated records. `dfst plot` and the HTML report draw a run so."""
    logged = [r for r in records if "loss" in r and r["loss"] == r["loss"]]
    line, = ax_loss.plot([r["iteration"] for r in logged], [r["loss"] for r in logged], label=label, lw=1)
    evals = [r for r in records if "eval" in r]
    ax_lg.plot([r["iteration"] for r in evals], [max(1, r["eval"]["robust_max_digits"]) for r in evals], "o-",
               lw=1, ms=3, color=line.get_color())
    return line, evals


def save_figure(fig, path: Path) -> Path:
    """Render to memory, then write atomically, with dfst's marker in the file's metadata; closes
    `fig`. Every figure dfst writes goes through here."""
    suffix = path.suffix.lower()
    buf = io.BytesIO()
    fig.savefig(buf, format=suffix.lstrip(".") or "png", metadata=plot_metadata(suffix))
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path
