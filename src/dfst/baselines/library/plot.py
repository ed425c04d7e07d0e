"""The experiments' figures: (b) test accuracy by depth beside the seed's Table 1; (a) tables vs circuits."""

from __future__ import annotations

from pathlib import Path

from dfst.results.plots import plt, save_figure  # matplotlib with the file-only backend


def plot_depth(result: dict, path: Path) -> Path:
    """Accuracy (%) against recursion depth, ours and the seed's, written atomically with dfst's marker."""
    rows = result["rows"]
    depths = [r["config"]["depth"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(depths, [r["test_accuracy"][-1] for r in rows], "o-", label=f"dfst, base {result['base']}")
    from dfst.baselines.library.experiment import SEED_TABLE_1

    for seed_base, row in SEED_TABLE_1.items():  # the seed's rows, at its bases (ours may be smaller)
        ax.plot(range(1, 7), row, "s--", alpha=0.6, label=f"seed 002, Table 1 (base {seed_base})")
    ax.set(xlabel="recursion depth", ylabel="test accuracy (%)", ylim=(-2, 102),
           title=f"fib, base {result['base']}: depth vs trainability")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_ops(result: dict, path: Path) -> Path:
    """Experiment (a): test accuracy against epochs for each arm, and accuracy against operand width."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.2))
    colours = {"table": "tab:blue", "circuit": "tab:orange"}
    for arm in result["arms"]:  # one line per seed; the first of each arm carries the legend
        history, first = arm["test_accuracy"], arm["seed"] == result["config"]["seed"]
        label = arm["arm"] if first else None
        style = {"color": colours[arm["arm"]], "alpha": 0.7, "label": label}
        left.plot(range(1, len(history) + 1), history, **style)
        runs = [(row["width"], row["accuracy"]) for row in arm["length"] if row["accuracy"] is not None]
        right.plot(*zip(*runs), "o-", **style)
    left.set(xlabel="epoch", ylabel="test accuracy (%)", ylim=(-2, 102),
             title=f"a - b mod 2^{result['config']['width']}: trainability")
    right.set(xlabel="operand width (bits)", ylabel="accuracy (%)", ylim=(-2, 102), xscale="log",
              title="length generalisation")
    right.minorticks_off()  # the log axis would label 2x10^1 ... over our widths
    right.set_xticks([r["width"] for r in result["arms"][0]["length"]],
                     [str(r["width"]) for r in result["arms"][0]["length"]])
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_llm(result: dict, path: Path) -> Path:
    """Experiment (c): test (and train) accuracy against epochs, with the seed's two reported points."""
    history = result["history"]
    epochs = [h["epoch"] for h in history]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(epochs, [h["test_accuracy"] for h in history], "-", label="dfst, test")
    ax.plot(epochs, [h["train_accuracy"] for h in history], ":", label="dfst, train")
    for head in ("operation", "a", "b"):  # which part of the parse is learned (older runs lack it)
        if all(head in h.get("test_parse", {}) for h in history):
            ax.plot(epochs, [h["test_parse"][head] for h in history], "-", lw=0.8, alpha=0.6,
                    label=f"parse: {head}, test")
    seed = result["seed"]
    ax.plot([62, 132], [seed["accuracy_at_62"], seed["accuracy_at_132"]], "s", alpha=0.7,
            label=f"seed 002, test ({seed['sentences']:,} sentences)")
    config = result["config"]
    ax.set(xlabel="epoch", ylabel="accuracy (%)", ylim=(-2, 102))
    signal = config.get("signal", "answer")
    ax.set_title(f"minimal LLaMA + mod-{config['base']} calculator, {config['sentences']:,} sentences"
                 + ("" if signal == "answer" else f"\ntrained on: {signal}"), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)
