"""The figure of the depth experiment: our test accuracy by depth, the seed's Table 1 beside it."""

from __future__ import annotations

import io
from pathlib import Path

from dfst.outputs import plot_metadata, write_atomic


def plot_depth(result: dict, path: Path) -> Path:
    """Accuracy (%) against recursion depth, ours and the seed's, written atomically with dfst's marker."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    depths = [r["config"]["depth"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(depths, [r["test_accuracy"][-1] for r in rows], "o-", label="dfst (this run)")
    seed = [(d, r["seed_test_accuracy"]) for d, r in zip(depths, rows) if r["seed_test_accuracy"] is not None]
    if seed:
        ax.plot(*zip(*seed), "s--", label="seed 002, Table 1")
    ax.set(xlabel="recursion depth", ylabel="test accuracy (%)", ylim=(-2, 102),
           title=f"fib, base {result['base']}: depth vs trainability")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", metadata=plot_metadata(path.suffix))
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path
