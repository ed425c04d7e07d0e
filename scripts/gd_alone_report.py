"""The table and figure of scripts/gd_alone.py's points: per (d, lr, data) group, how many runs of
gradient descent alone were robust at each length at their last checkpoint, and how many states the
automaton read off their weights has against the expert's."""

from __future__ import annotations

import statistics
from pathlib import Path

THRESHOLDS = (10, 1000, 100_000)


def group_of(point: dict) -> tuple:
    return point["task"], point["d"], point["lr"], point["data"]


def finals(points: list[dict]) -> list[dict]:
    """Each run's (cell and initialisation) last measured point."""
    last: dict[tuple, dict] = {}
    for p in points:
        key = (*group_of(p), p["seed"], p.get("init", 0))
        if key not in last or p["iteration"] > last[key]["iteration"]:
            last[key] = p
    return list(last.values())


def states_words(runs: list[dict]) -> str:
    expert = sum(1 for r in runs if r["states"] == r["expert_states"])
    more = sum(1 for r in runs if r["states"] is not None and r["states"] > r["expert_states"])
    fewer = sum(1 for r in runs if r["states"] is not None and r["states"] < r["expert_states"])
    none = sum(1 for r in runs if r["states"] is None)
    return f"{expert} / {more} / {fewer} / {none}"


def table(points: list[dict]) -> str:
    robust_at = "robust at " + " / ".join(f"{t:,}" for t in THRESHOLDS)
    header = ("task", "d", "lr", "data", "traces (distinct)", "runs (seeds x inits)", "at iteration",
              robust_at, "best robust", "exact at 100 digits (median)", "median loss",
              "states read off: expert's / more / fewer / none", "CPU s a cell (median)")
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_group: dict[tuple, list[dict]] = {}
    for run in finals(points):
        by_group.setdefault(group_of(run), []).append(run)
    for key in sorted(by_group):
        runs = by_group[key]
        cells = {(r["seed"]): r for r in runs}
        cpu = statistics.median(cell_cpu(points, key, seed) for seed in cells)
        traces = sorted({(r["traces"], r["distinct"]) for r in runs})
        traces_text = ", ".join(f"{t} ({d})" for t, d in traces) if len(traces) <= 2 else \
            f"{traces[0][0]}-{traces[-1][0]}"
        losses = [r["loss"] for r in runs if r["loss"] is not None]
        iterations = sorted({r["iteration"] for r in runs})
        counts = " / ".join(str(sum(r["robust"] >= t for r in runs)) for t in THRESHOLDS)
        rows.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {traces_text} | {len(runs)} "
                    f"({len(cells)} x {runs[0].get('inits', 1)}) | "
                    f"{', '.join(f'{i:,}' for i in iterations)} | {counts} | "
                    f"{max(r['robust'] for r in runs):,} | {exact_share(runs, '100'):.0%} | "
                    f"{statistics.median(losses):.1e} | {states_words(runs)} | {cpu:,.0f} |")
    return "\n".join(rows)


def states_table(points: list[dict]) -> str:
    """Per group: the runs whose own weights are robust at 1,000 digits, and those that are not, by
    the states of the automaton read off them (the expert's count, more, or none read off)."""
    header = ("d", "lr", "data", "robust at 1,000: states read off = expert's / other",
              "not robust at 1,000: = expert's / more / fewer / none")
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_group: dict[tuple, list[dict]] = {}
    for run in finals(points):
        by_group.setdefault(group_of(run), []).append(run)
    for key in sorted(by_group):
        robust = [r for r in by_group[key] if r["robust"] >= 1000]
        other = [r for r in by_group[key] if r["robust"] < 1000]
        same = sum(r["states"] == r["expert_states"] for r in robust)
        rows.append(f"| {key[1]} | {key[2]} | {key[3]} | {same} / {len(robust) - same} | "
                    f"{states_words(other)} |")
    return "\n".join(rows)


def iterations_table(points: list[dict]) -> str:
    """Per group and checkpoint: runs measured there, and how many were robust at 10, 1,000 and 10,000
    digits (100,000 is tested only at the end): robust length against iterations."""
    header = ("d", "lr", "data", "iteration", "runs", "robust at 10 / 1,000 / 10,000")
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_checkpoint: dict[tuple, list[int]] = {}
    for p in points:
        by_checkpoint.setdefault((*group_of(p)[1:], p["iteration"]), []).append(p["robust"])
    for (d, lr, data, iteration), robust in sorted(by_checkpoint.items()):
        counts = " / ".join(str(sum(r >= t for r in robust)) for t in (10, 1000, 10_000))
        rows.append(f"| {d} | {lr} | {data} | {iteration:,} | {len(robust)} | {counts} |")
    return "\n".join(rows)


def exact_share(runs: list[dict], digits: str) -> float:
    """The median over runs of the share of instances exact at `digits` digits."""
    shares = []
    for r in runs:
        exact, instances = map(int, r["levels"][digits].split("/"))
        shares.append(exact / instances)
    return statistics.median(shares)


def cell_cpu(points: list[dict], key: tuple, seed: int) -> float:
    """The CPU seconds a cell's training took, summed over its segments (counted once per checkpoint,
    not once per initialisation)."""
    seen = {(p["iteration"], p["train_cpu_s"]) for p in points if group_of(p) == key and p["seed"] == seed}
    return sum(cpu for _, cpu in seen)


def shown(length: int) -> int:
    """Robust length on a log axis: 0 (not even the shortest length) drawn at 1."""
    return max(length, 1)


def plot(points: list[dict], path: Path) -> None:
    from dfst.results.plots import plt, save_figure

    groups = sorted({group_of(p) for p in points})
    colours = plt.get_cmap("tab10")
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), dpi=110)
    for g, key in enumerate(groups):
        label = f"d {key[1]}, lr {key[2]}, {key[3]}"
        runs = {(p["seed"], p.get("init", 0)) for p in points if group_of(p) == key}
        for n, run in enumerate(sorted(runs)):
            curve = sorted((p for p in points if group_of(p) == key and (p["seed"], p.get("init", 0)) == run),
                           key=lambda p: p["iteration"])
            left.plot([p["iteration"] for p in curve], [shown(p["robust"]) for p in curve], color=colours(g),
                      alpha=0.5, lw=1, marker=".", label=label if n == 0 else None)
        last = [r for r in finals(points) if group_of(r) == key]
        right.scatter([g + (i - len(last) / 2) * 0.02 for i in range(len(last))],
                      [shown(r["robust"]) for r in last], color=colours(g), s=14)
    left.set(xlabel="iteration", ylabel="robust length (digits; 0 drawn at 1)", yscale="log",
             title=f"{groups[0][0]}: gradient descent's own weights")
    right.set(xticks=range(len(groups)), xticklabels=[f"d{k[1]}\nlr{k[2]}\n{k[3]}" for k in groups],
              ylabel="robust length at the last checkpoint", yscale="log", title="every run's last point")
    left.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


def report(points: list[dict], figure: Path) -> None:
    plot(points, figure)
    print(table(points))
    print()
    print(states_table(points))
    print()
    print(iterations_table(points))
