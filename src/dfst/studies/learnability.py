"""`dfst bench learnability`: which random grid agents can a DFST learn, and from how few PTOs?

A random agent is a random rule table over the symbols 0, 1 and the blank and d states on sort2's
one-row tape (a binary string, the head on its first symbol, the answer the whole row as left):
every (state, symbol) gets a random next state, a random digit to write and a random move, L or R
(R three times in four, so that runs tend to move on); a blank read halts (S) half the time. An
agent is kept when it halts within the task's step bound without leaving the tape on every string
of 1 to `EXHAUSTIVE` symbols and on seeded random strings of every length evaluated, and every one
of its states is used on them. Its own final rows are the reference (`dfst.tasks.own_agent`).

Per agent and sample count, two learners see the same PTOs: a DFST trained with the default recipe
(sort2's: add2's, the fine-tuning phase included; the hidden size d of the agent), and RPNI on
the dataset's traces. Each is a success when exact at 100x the training length (robust: the hard
strings and 10 random ones, closed loop). `learnability_report` returns the cells, a table of
success counts per (d, samples) and the time taken.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from dfst.automata import Rule, Transducer, make_transducer, save_transducer
from dfst.errors import DfstError
from dfst.io.limits import check_work
from dfst.tasks.base import BLANK

BASE_TASK = "sort2"  # its layout, readout (the row, exactly) and quadratic step bound
EXHAUSTIVE = 6       # every string up to this many symbols must halt
MAX_TRIES = 2000     # random tables drawn per agent kept, at most
MAX_DIGITS = 3       # training strings, as the default recipe
DEFAULT_STATES = (2, 3, 4, 6)
DEFAULT_SAMPLES = (5, 10, 20)


def random_table(rng: np.random.Generator, d: int) -> Transducer:
    """A random agent with d states (not checked: see `draw_agent`)."""
    states = [f"q{i}" for i in range(d)]
    rules = []
    for state, symbol in itertools.product(states, ("0", "1", BLANK)):
        write = "01"[int(rng.integers(0, 2))]
        if symbol == BLANK and rng.random() < 0.5:
            rules.append(Rule(state, symbol, "halt", write, "S"))
        else:
            rules.append(Rule(state, symbol, states[int(rng.integers(0, d))], write,
                              "R" if rng.random() < 0.75 else "L"))
    return make_transducer([*states, "halt"], ("0", "1", BLANK), rules, initial="q0", final="halt",
                           blank=BLANK, name=f"random{d}")


def draw_agent(rng: np.random.Generator, d: int, lengths: tuple[int, ...]):
    """The first random agent with d states that passes the checks of the module doc, as an AgentTask;
    a DfstError after MAX_TRIES tables."""
    from dfst.tasks import get_task
    from dfst.tasks.own_agent import agent_task

    base = get_task(BASE_TASK)
    for _ in range(MAX_TRIES):
        agent = random_table(rng, d)
        try:
            task = agent_task(base, agent, f"random agent, d = {d}")
        except DfstError:
            continue
        if task.agent.d == d + 1 and _well_behaved(task, lengths):
            return task
    raise DfstError(f"no random agent with {d} states passed the checks in {MAX_TRIES} tables")


def _well_behaved(task, lengths: tuple[int, ...]) -> bool:
    """Halts on every string of 1..EXHAUSTIVE symbols and on random strings at `lengths`, with every
    state used."""
    from dfst.grid.rollout import run_table
    from dfst.grid.world import Outcome

    instances = task.short_instances(EXHAUSTIVE)
    instances += [i for n in lengths for i in task.random_instances(n, 3, seed=n)]
    used: set[int] = set()
    for inst in instances:
        run = run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True)
        if run.outcome != Outcome.HALTED:
            return False
        used |= set(_states_of(task.agent, task.layout(inst), run.trace))
    return len(used) == task.agent.d - 1


def _states_of(agent: Transducer, layout, trace: np.ndarray) -> list[int]:
    """The states a run went through, replayed from its trace (the state is hidden in a PTO)."""
    nxt, _, _ = agent.tables()
    q, seen = agent.states.index(agent.initial), []
    for read in trace[:, 0]:
        seen.append(q)
        q = int(nxt[q, int(read)])
    return seen


def learn_cell(task, samples: int, seed: int, out: Path) -> dict:
    """Train a DFST (default recipe) and run RPNI on the same PTOs; each scored at 100x."""
    from dfst.baselines.rpni import evaluate_agent
    from dfst.data.pto import load_dataset
    from dfst.extract import extract
    from dfst.io.outputs import check_output_file, make_directory
    from dfst.train.loop import train
    from dfst.train.recipes import RECIPES

    agent_file = make_directory(out, "learnability run directory") / "agent.json"
    save_transducer(task.agent, check_output_file(agent_file, force=True))  # replaces only dfst's own
    cfg = replace(RECIPES[BASE_TASK], samples=samples, seed=seed, agent=str(agent_file), eval_every=0)
    start = time.process_time()
    summary = train(cfg, out / "run", resume=True)
    dfst_cpu = time.process_time() - start
    target = 100 * cfg.max_digits
    dfst_score = _score_checkpoint(task, Path(summary["model"]), target)
    data = load_dataset(out / "run" / "data.pto.zip")
    start = time.process_time()
    found = extract(None, [data.trace(i) for i in range(data.samples)], "rpni", agent=task.agent)
    rpni_cpu = time.process_time() - start  # learning; the evaluation runs in worker processes
    rpni = evaluate_agent(task, found.agent, (target,), 10)
    return {"samples": samples, "seed": seed, "target_digits": target,
            "dfst": {"robust": dfst_score >= target, "robust_max_digits": dfst_score,
                     "cpu_seconds": round(dfst_cpu, 1)},
            "rpni": {"robust": rpni["robust_max_digits"] >= target, "states": found.agent.d,
                     "robust_max_digits": rpni["robust_max_digits"],
                     "cpu_seconds": round(rpni_cpu, 2)}}


def _score_checkpoint(task, model_dir: Path, digits: int) -> int:
    from dfst.grid.rollout import DfstWeights
    from dfst.model.checkpoint import load_checkpoint
    from dfst.protocol.config import EvalConfig
    from dfst.protocol.evaluate import run_protocol

    model, _ = load_checkpoint(model_dir)
    weights = DfstWeights.of(*model.numpy_weights())
    report, _ = run_protocol(task, weights, EvalConfig(digits=(digits,), random=10))
    return report["robust_max_digits"]


def learnability_report(out: str | Path, *, states: tuple[int, ...] = DEFAULT_STATES,
                        samples: tuple[int, ...] = DEFAULT_SAMPLES, agents: int = 3, seed: int = 0,
                        progress: Callable[[int], None] | None = None) -> dict:
    """Every cell (d, agent, samples) under `out` (resumed where a run is finished), and the table."""
    if not states or min(states) < 1 or not samples or min(samples) < 1 or agents < 1:
        raise DfstError("--states, --samples and --agents must be positive")
    check_work("cells", len(states) * agents * len(samples),  # each a training run: counted before any
               f"{len(states)} x {agents:,} x {len(samples)} (states x agents x sample counts)")
    start, cells, done = time.process_time(), [], 0
    target = 100 * MAX_DIGITS
    for d in states:
        rng = np.random.default_rng([seed, d])
        for index in range(agents):
            task = draw_agent(rng, d, (10, 30, target))
            for count in samples:
                cell = learn_cell(task, count, seed, Path(out) / f"d{d}" / f"agent{index}" / f"s{count}")
                cells.append({"d": d, "agent": index, "rules": len(task.agent.rules), **cell})
                done += 1
                if progress is not None:
                    progress(done)
    return {"base_task": BASE_TASK, "states": list(states), "samples": list(samples), "agents": agents,
            "seed": seed, "target_digits": target, "cells": cells, "table": success_table(cells),
            "cpu_seconds": round(time.process_time() - start, 1)}


def success_table(cells: list[dict]) -> list[dict]:
    """Per (d, samples): agents, and how many each learner got exact at 100x."""
    rows: dict[tuple[int, int], dict] = {}
    for c in cells:
        row = rows.setdefault((c["d"], c["samples"]), {"d": c["d"], "samples": c["samples"], "agents": 0,
                                                        "dfst": 0, "rpni": 0})
        row["agents"] += 1
        row["dfst"] += c["dfst"]["robust"]
        row["rpni"] += c["rpni"]["robust"]
    return [rows[key] for key in sorted(rows)]


RESULT_FILES = ("learnability.json", "learnability.png")


def check_results_directory(results: Path) -> None:
    """Refuse, before any work, a results directory whose report or plot is not dfst's to replace."""
    from dfst.io.outputs import check_parent, is_dfst_file, refuse_special

    for name in RESULT_FILES:
        path = results / name
        refuse_special(path)
        if path.exists() and not is_dfst_file(path):
            raise DfstError(f"{path} was not written by dfst; choose another --results directory")
    if results.exists():
        check_parent(results / RESULT_FILES[0])


def save_results(report: dict, results: Path) -> dict:
    """learnability.json and learnability.png in `results` (checked first by the caller)."""

    from dfst.io.outputs import make_directory, write_json

    make_directory(results, "--results directory")
    stored = {"format": "dfst-learnability", "version": 1, **report}
    write_json(results / RESULT_FILES[0], stored)
    return {**report, "plot": str(plot_learnability(report, results / RESULT_FILES[1]))}


def plot_learnability(report: dict, path: str | Path) -> Path:
    """Success rate against samples, one line per d, DFST and RPNI side by side."""
    from dfst.results.plots import plt, save_figure

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True, dpi=110)
    for ax, learner, title in zip(axes, ("dfst", "rpni"), ("DFST (default recipe)", "RPNI, same PTOs")):
        for d in report["states"]:
            rows = [r for r in report["table"] if r["d"] == d]
            ax.plot([r["samples"] for r in rows], [r[learner] / r["agents"] for r in rows], marker="o",
                    label=f"d = {d}")
        ax.set_xscale("log")
        ax.set_xticks(report["samples"], [str(n) for n in report["samples"]])
        ax.minorticks_off()
        ax.set_xlabel("training PTOs")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"exact at {report['target_digits']} symbols")
    axes[1].legend(title="agent states")
    fig.suptitle("Random grid agents on a binary tape: success rate", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, Path(path))  # atomic: a half-written figure never takes the name


__all__ = ["draw_agent", "learnability_report", "plot_learnability", "random_table",
           "success_table"]
