"""`dfst bench data-needs`: what each learner needs, like for like: the success rate against the number
of expert traces, for several learners reading the same data.

A cell is (task, sampler, PTO count, seed). It trains once with the task's default recipe at that count
and sampler (`dfst train TASK --samples N --sampler S --seed SEED`) and scores every learner on that
cell's data, each closed loop at 10, 100 and 1,000 digits (the hard set and 10 random pairs a length,
never a training pair), a success when robust at `target` digits (1,000):
    default     the weights re-fitted to the automaton read off (RUN/model: what dfst train delivers)
    extracted   the automaton read off gradient descent's weights (RUN/extracted)
    trained     gradient descent's own weights, no read-off (RUN/trained)
    rpni, edsm  the classical learners on the same PTOs kept (`dfst.extract`'s methods)
    lstm-policy, gru-policy, transformer-policy
                the sequence-model policies (`dfst.baselines.policy`, large: width 128) teacher-forced
                on the same PTOs kept, run closed loop on the grid on their own ladder (the PTOs'
                digits, 2x, 5x, 10x, ... up to 1,000) under the baseline's time budget
The x-axis of a sampler is what its learner reads (`dfst.data.reads`): "uniform" reads its N PTOs (the
paper's setting: N drawn uniformly at the training length) and the validation PTOs that choose d;
"contexts" (the default) reads a candidate pool and fill-up pairs besides, so its points sit at the
traces read, with the PTOs kept beside them. Cells are files under OUT/cells/ (a re-run skips those
there, scoring on the cell's stored run only a requested learner the cell lacks); the report covers
every cell there, whichever invocation ran it: a table per (task, sampler, count) and one figure per
task.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from dfst.errors import DfstError

POLICIES = ("lstm-policy", "gru-policy", "transformer-policy")
LEARNERS = ("default", "extracted", "trained", "rpni", "edsm", *POLICIES)
DEFAULT_LEARNERS = ("default", "extracted", "trained", "rpni", "edsm", "lstm-policy")
COLUMNS = ("task", "sampler", "PTOs", "seeds", "traces read (median)", *LEARNERS,
           "seeds with every rule seen", "fails with every rule seen", "train CPU s (median)")
CHECKPOINTS = {"default": "model", "extracted": "extracted", "trained": "trained"}
SAMPLERS = ("uniform", "contexts")
TARGET = 1000
CELL_FORMAT = "dfst-data-needs-cell"
# the policies at their strongest size (width 128), their ladder up to the target
POLICY_CONFIG = {"size": "large", "eval_top": TARGET}
DIGITS = (10, 100, 1000)


def cell_task(task: str, agent: Path | None = None) -> str:
    """The name a cell's task goes by: `add2`, or `add2+myagent` with a user's agent as the expert."""
    return task if agent is None else f"{task}+{Path(agent).stem}"


def cell_name(task: str, sampler: str, count: int, seed: int, agent: Path | None = None) -> str:
    """`add2-uniform-n20-s0`, or `add2+myagent-uniform-n20-s0` with a user's agent as the expert."""
    return f"{cell_task(task, agent)}-{sampler}-n{count}-s{seed}"


def run_cell(task: str, sampler: str, count: int, seed: int, out: Path,
             learners: tuple[str, ...] = DEFAULT_LEARNERS, agent: Path | None = None) -> dict:
    """Train once, score each learner on the cell's data (module docstring); the cell as plain JSON.
    `agent`: a user's agent JSON is the expert, on the task's layout, its own answers the reference."""
    from dfst.studies.seeds import run_config
    from dfst.tasks.own_agent import resolve_task
    from dfst.train.loop import train

    # a cell measures the learners at `count` PTOs: the default's data growth, which would add more,
    # stays off (grow_rounds 0)
    cfg = run_config(task, seed, {"samples": count, "sampler": sampler, "eval_every": 0, "grow_rounds": 0,
                                  "agent": None if agent is None else str(agent)})
    run = out / "runs" / cell_name(task, sampler, count, seed, agent)
    start = time.process_time()
    summary = train(cfg, run, resume=True)
    train_cpu = time.process_time() - start
    expert = resolve_task(task, agent)
    data, scores = score_learners(expert, run, learners, seed)
    return {"task": cell_task(task, agent), "agent": None if agent is None else str(agent),
            "sampler": sampler, "count": count, "seed": seed, "target_digits": TARGET,
            "rules_missing": rules_missing(expert, data),
            "kept": summary["samples"], "traces": summary["traces"], "read": summary["traces"]["total"],
            "train_cpu_seconds": round(train_cpu, 1), "learners": scores}


def score_learners(expert, run: Path, learners: tuple[str, ...], seed: int) -> tuple:
    """(the run's PTOs, {learner: score}): every learner scored on a cell's finished training run,
    never on a pair any of them read (the PTOs kept and the validation PTOs)."""
    from dfst.data.pto import load_dataset
    from dfst.protocol.eval_files import held_out_of
    from dfst.train.rundir import MODEL_DIR

    data = load_dataset(run / "data.pto.zip")
    pairs = held_out_of(run / MODEL_DIR)[0].pairs
    scores = {}
    for name in learners:
        if name in CHECKPOINTS:
            scores[name] = _score_checkpoint(expert, run / CHECKPOINTS[name], pairs)
        elif name in POLICIES:
            scores[name] = _score_policy(expert, data, name, pairs, seed)
        else:
            scores[name] = _score_learned(expert, data, name, pairs)
    return data, scores


def rules_missing(expert, data) -> int:
    """How many of the expert's rules the cell's PTOs never exercise: a diagnosis that reads the
    expert's states (no learner sees it), to tell data that determine the algorithm from data that
    do not."""
    from dfst.data.coverage import coverage
    from dfst.data.pto import dataset_instances

    return len(coverage(expert, dataset_instances(expert, data, "the cell's PTOs"))[1])


def _score_checkpoint(task, directory: Path, pairs: frozenset) -> dict:
    """A run's checkpoint scored on the ladder; a learner whose checkpoint is missing failed."""
    from dfst.baselines.rpni import evaluate_weights
    from dfst.grid.rollout import DfstWeights
    from dfst.model.checkpoint import load_checkpoint

    if not directory.exists():
        return {"robust_max_digits": 0, "robust": False, "missing": True}
    model, _ = load_checkpoint(directory)
    found = evaluate_weights(task, DfstWeights.of(*model.numpy_weights()), DIGITS, 10, pairs)
    return {"robust_max_digits": found["robust_max_digits"], "robust": found["robust_max_digits"] >= TARGET}


def _score_learned(task, data, learner: str, pairs: frozenset) -> dict:
    """RPNI or EDSM on the cell's PTOs, its automaton compiled and scored as a checkpoint is."""
    from dfst.baselines.rpni import evaluate_agent
    from dfst.extract import extract

    start = time.process_time()
    found = extract(None, [data.trace(i) for i in range(data.samples)], learner, agent=task.agent)
    cpu = time.process_time() - start
    scored = evaluate_agent(task, found.agent, DIGITS, 10, pairs)
    return {"robust_max_digits": scored["robust_max_digits"], "robust": scored["robust_max_digits"] >= TARGET,
            "states": found.agent.d, "cpu_seconds": round(cpu, 2)}


def _score_policy(task, data, learner: str, pairs: frozenset, seed: int) -> dict:
    """A sequence-model policy (large) teacher-forced on the cell's PTOs, scored closed loop."""
    from dfst.baselines.policy import checked_config, evaluate_policy
    from dfst.baselines.policy_train import train_policy
    from dfst.data.pto import summarize
    from dfst.train import deterministic

    kind = learner.removesuffix("-policy")
    config = checked_config(kind, POLICY_CONFIG)
    start = time.process_time()
    with deterministic(config["threads"]):
        model, _ = train_policy(kind, task, data, config, seed, lambda loss: None)
        scores = evaluate_policy(kind, task, model, config, summarize(data)["digits_max"], pairs)
    return {"robust_max_digits": scores["robust_lg"], "robust": scores["robust_lg"] >= TARGET,
            "stopped_by": scores["stopped_by"], "cpu_seconds": round(time.process_time() - start, 2)}


def data_needs(out: Path, tasks: tuple[str, ...], counts: tuple[int, ...], samplers: tuple[str, ...],
               seeds: tuple[int, ...], learners: tuple[str, ...] = DEFAULT_LEARNERS,
               progress: Callable[[int], None] | None = None, agent: Path | None = None) -> list[dict]:
    """Every cell under OUT/cells (those already there are read, not run again); `agent`: a user's
    agent JSON as every task's expert (checked before any work)."""
    from dfst.io.limits import check_work
    from dfst.io.outputs import check_output_file, make_directory, write_json

    check_choices(tasks, samplers, learners)
    if agent is not None:
        from dfst.tasks.own_agent import resolve_task

        for task in tasks:
            resolve_task(task, agent)  # a one-line error now, not after the first cells
    total = len(tasks) * len(samplers) * len(counts) * len(seeds)
    check_work("cells", total, f"{len(tasks)} x {len(samplers)} x {len(counts)} x {len(seeds)} "
               "(tasks x samplers x counts x seeds), each a training run")
    cells_dir = make_directory(out / "cells", "data-needs cells directory")
    cells = []
    for task in tasks:
        for sampler in samplers:
            for count in counts:
                for seed in seeds:
                    path = cells_dir / f"{cell_name(task, sampler, count, seed, agent)}.json"
                    if path.exists():
                        cell = completed_cell(read_cell(path), path, out, learners, agent)
                    else:
                        cell = {"format": CELL_FORMAT,
                                **run_cell(task, sampler, count, seed, out, learners, agent)}
                        write_json(check_output_file(path), cell)
                    cells.append(cell)
                    if progress is not None:
                        progress(len(cells))
    return cells


def completed_cell(cell: dict, path: Path, out: Path, learners: tuple[str, ...], agent: Path | None) -> dict:
    """A stored cell with every requested learner it lacks scored on its stored run (and written back)."""
    from dfst.io.outputs import check_output_file, write_json
    from dfst.tasks.own_agent import resolve_task

    lacking = tuple(name for name in learners if name not in cell["learners"])
    if not lacking:
        return cell
    task, run = stored_run(out, cell, agent)
    if not (run / "data.pto.zip").is_file():
        raise DfstError(f"{path} lacks {', '.join(lacking)} and its training run {run} is gone: "
                        "score them in a fresh --out")
    cell["learners"] |= score_learners(resolve_task(task, agent), run, lacking, cell["seed"])[1]
    write_json(check_output_file(path, force=True), cell)
    return cell


def stored_run(out: Path, cell: dict, agent: Path | None) -> tuple[str, Path]:
    """(the task, the training run directory) of a stored cell, whose task may read `add2+myagent`."""
    task = cell["task"].split("+")[0]
    return task, out / "runs" / cell_name(task, cell["sampler"], cell["count"], cell["seed"], agent)


def all_cells(out: Path) -> list[dict]:
    """Every cell under OUT/cells, whichever invocation ran it: the report of a directory grows as
    further seeds or counts are run into it."""
    from dfst.data.pto import load_dataset
    from dfst.tasks.own_agent import resolve_task

    cells = [read_cell(path) for path in sorted((out / "cells").glob("*.json"))]
    for cell in cells:
        if "rules_missing" not in cell:  # a cell from before the diagnosis: counted from its run
            agent = None if cell.get("agent") is None else Path(cell["agent"])
            task, run = stored_run(out, cell, agent)
            data = load_dataset(run / "data.pto.zip")
            cell["rules_missing"] = rules_missing(resolve_task(task, agent), data)
    return cells


def read_cell(path: Path) -> dict:
    """A cell written by an earlier run (size-capped); anything else under that name is refused."""
    from dfst.io.inputs import read_json_file

    cell = read_json_file(path, "data-needs cell")
    if not isinstance(cell, dict) or cell.get("format") != CELL_FORMAT:
        raise DfstError(f"{path} is not a data-needs cell written by dfst; move it or choose another --out")
    return cell


def check_choices(tasks: tuple[str, ...], samplers: tuple[str, ...], learners: tuple[str, ...]) -> None:
    from dfst.tasks import TASKS

    for kind, given, known in (("task", tasks, TASKS), ("sampler", samplers, SAMPLERS),
                               ("learner", learners, LEARNERS)):
        if unknown := [g for g in given if g not in known]:
            raise DfstError(f"unknown {kind} {unknown[0]!r} (known: {', '.join(known)})")


def needs_table(cells: list[dict]) -> list[dict]:
    """Per (task, sampler, count): seeds, PTOs kept and traces read (medians), each learner's successes."""
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c["task"], c["sampler"], c["count"]), []).append(c)
    rows = []
    for (task, sampler, count), group in sorted(groups.items()):
        row = {"task": task, "sampler": sampler, "PTOs": count, "seeds": len(group),
               "traces read (median)": statistics.median(c["read"] for c in group)}
        for name in LEARNERS:
            scored = [c["learners"][name]["robust"] for c in group if name in c["learners"]]
            row[name] = f"{sum(scored)} of {len(scored)}" if scored else "-"
        determined = [c for c in group if c.get("rules_missing") == 0]
        row["seeds with every rule seen"] = len(determined)
        failed = {name: sum(not c["learners"][name]["robust"] for c in determined if name in c["learners"])
                  for name in LEARNERS}
        row["fails with every rule seen"] = ", ".join(f"{n} {k}" for n, k in failed.items() if k) or "-"
        row["train CPU s (median)"] = statistics.median(c["train_cpu_seconds"] for c in group)
        rows.append(row)
    return rows


def shown_columns(rows: list[dict]) -> tuple[str, ...]:
    """COLUMNS less the learners no row scored."""
    return tuple(c for c in COLUMNS if c not in LEARNERS or any(r[c] != "-" for r in rows))


def plot_needs(cells: list[dict], task: str, path: Path) -> Path:
    """Success rate against the PTOs kept, each tick also naming the expert traces read there; one
    panel per sampler, one line per learner (nudged apart, so that equal lines stay visible)."""
    from dfst.results.plots import plt, save_figure

    samplers = sorted({c["sampler"] for c in cells if c["task"] == task}, key=SAMPLERS.index)
    fig, axes = plt.subplots(1, len(samplers), figsize=(5 * len(samplers), 3.8), dpi=110, squeeze=False)
    table = needs_table([c for c in cells if c["task"] == task])
    for ax, sampler in zip(axes[0], samplers):
        rows = [r for r in table if r["sampler"] == sampler]
        for i, (name, marker) in enumerate(zip(LEARNERS, "osD^v<>x")):
            points = [(r["PTOs"] * 1.04 ** (i - 3), _rate(r[name])) for r in rows if r[name] != "-"]
            if points:
                ax.plot(*zip(*points), marker=marker, alpha=0.8, label=name)
        ax.set_xscale("log")
        ax.set_xticks([r["PTOs"] for r in rows],
                      [f"{r['PTOs']}\n{r['traces read (median)']:,.0f}" for r in rows], fontsize=8)
        ax.minorticks_off()
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("PTOs kept (below: expert traces read, median)")
        ax.set_title(f"{task}: {sampler} sampler")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"share of seeds robust at {TARGET:,} digits")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, Path(path))


def check_report_files(out: Path, tasks: tuple[str, ...], agent: Path | None = None) -> None:
    """Refuse, before any cell runs, a report or figure path under OUT that dfst may not replace (a
    user's file, a link, a FIFO): `save_report` would refuse it only after the work."""
    from dfst.io.outputs import is_dfst_file, refuse_special

    names = ["data-needs.json", *(f"data-needs-{cell_task(task, agent)}.png" for task in tasks)]
    for path in (out / name for name in names):
        refuse_special(path)
        if path.exists() and not is_dfst_file(path):
            raise DfstError(f"{path} was not written by dfst; choose another --out")


def save_report(cells: list[dict], out: Path) -> dict:
    """OUT/data-needs.json (the cells and the table) and OUT/data-needs-TASK.png, each replaced only
    where dfst wrote it; returns the report with the files written."""
    from dfst.io.outputs import check_output_file, write_json

    tasks = sorted({c["task"] for c in cells})
    figures = {task: check_output_file(out / f"data-needs-{task}.png", force=True) for task in tasks}
    path = check_output_file(out / "data-needs.json", force=True)
    report = {"format": "dfst-data-needs", "version": 1, "target_digits": TARGET, "table": needs_table(cells),
              "cells": cells, "cpu_seconds": round(sum(c["train_cpu_seconds"] for c in cells), 1)}
    write_json(path, report)
    drawn = [str(plot_needs(cells, task, figure)) for task, figure in figures.items()]
    return {**report, "files": [str(path), *drawn]}


def _rate(text: str) -> float:
    won, of = text.split(" of ")
    return int(won) / int(of)


__all__ = ["COLUMNS", "DEFAULT_LEARNERS", "LEARNERS", "all_cells", "check_report_files", "data_needs",
           "needs_table", "plot_needs", "run_cell", "save_report", "shown_columns"]
