"""Run an agent on one instance of a task and check the answer against Python's integers.

This is `dfst solve` as functions: `task_agent` (the expert, or an agent file for the task's
alphabet), `choose_instance` (given or random operands, refused beyond a memory bound before anything
of their size is built) and `solve` (one run of the fast engine, judged). `task_summaries` is
`dfst tasks`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.grid.grid import Layout
from dfst.grid.rollout import TableRun, run_table
from dfst.tasks import TASKS
from dfst.tasks.base import Instance, Task
from dfst.tasks.budget import Estimate, check_rollout


def task_summaries() -> list[dict]:
    """One row per registered task: base, k symbols, d states, DFST parameters, what it computes."""
    from dfst.automata import param_count

    return [{"task": t.name, "base": t.base, "k": t.agent.k, "d": t.agent.d,
             "params": param_count(t.agent.k, t.agent.d), "summary": t.summary} for t in TASKS.values()]


def task_agent(task: Task, agent_file: str | Path | None = None) -> Transducer:
    """The task's expert, or the agent in `agent_file`, loaded and checked as every --agent is
    (dfst.tasks.own_agent: the task's alphabet, a reachable final state, a halting run on the
    instances a task's expert is checked on); its unreachable states are dropped."""
    if agent_file is None:
        return task.agent
    from dfst.tasks.own_agent import agent_task_from_file

    return agent_task_from_file(task, agent_file).agent  # the checks `data --agent` and `train --agent` make


def agent_text(agent: Transducer, dot: bool = False) -> str:
    """An agent as `dfst agent` prints it: its JSON (the documented schema), or Graphviz DOT."""
    import json

    from dfst.automata import to_dot

    return to_dot(agent) if dot else json.dumps(agent.to_dict(), indent=1) + "\n"


def write_agent(agent: Transducer, out: str | Path, *, dot: bool = False, force: bool = False) -> None:
    """An agent saved to `out` as JSON (`load_transducer` reads it back) or DOT, both marked as dfst's;
    an existing `out` is replaced only with `force`, and only if dfst wrote it."""
    from dfst.automata import save_transducer
    from dfst.grid.drawing import dot_bytes
    from dfst.io.outputs import check_output_file, write_atomic

    check_output_file(out, force=force)
    if dot:
        write_atomic(out, dot_bytes(agent))
    else:
        save_transducer(agent, out)


def choose_instance(task: Task, a: str | None, b: str | None, *, random_digits: int | None = None,
                    seed: int = 0, max_memory: int, as_json: bool = False,
                    on_estimate: Callable[[Estimate], None] | None = None) -> Instance:
    """The operands `a` and `b` (`b` None for a task of one operand), or with `random_digits` a random
    instance of that many digits (`seed`); checked against `max_memory` bytes (`as_json`: counting a
    JSON report) before anything of their size is built. `on_estimate` is told the estimate before
    the instance is built."""
    if random_digits is not None:
        estimate = check_rollout(task, random_digits, random_digits, max_memory,
                                 f"--random {random_digits:,}", generate=True, as_json=as_json)
        if on_estimate is not None:
            on_estimate(estimate)
        return task.random_instances(random_digits, 1, seed)[0]
    if task.operands == 1 and a is None:
        raise DfstError(f"give the operand A (or --random N): task {task.name} takes one")
    if task.operands == 2 and (a is None or b is None):
        raise DfstError("give two operands A B (or --random N)")
    b = b or ""
    n, m = len(a), len(b)  # checked before the digits: a long operand's validation takes seconds
    what = f"operands of {n:,} and {m:,} digits" if b else f"an operand of {n:,} symbols"
    estimate = check_rollout(task, n, m, max_memory, what, as_json=as_json)
    if on_estimate is not None:
        on_estimate(estimate)
    return task.check(a, b)


@dataclass(frozen=True)
class Solution:
    """One judged run: the final grid is `run.cells`, the answer is read at `layout.answer`."""

    task: Task
    instance: Instance
    layout: Layout
    run: TableRun
    result: str | None  # the answer read off the grid; None unless the run halted with digits there
    correct: bool
    seconds: float

    def to_dict(self) -> dict:
        """The report of `dfst solve --json`."""
        return {"task": self.task.name, "a": self.instance.a, "b": self.instance.b, "result": self.result,
                "steps": self.run.steps, "correct": self.correct, "outcome": str(self.run.outcome),
                "seconds": round(self.seconds, 6)}


def solve(task: Task, instance: Instance, agent: Transducer | None = None) -> Solution:
    """Run `agent` (default the task's expert) on `instance` with the compiled engine and check the
    answer against Python's integers."""
    layout = task.layout(instance)
    start = time.perf_counter()
    run = run_table(task.agent if agent is None else agent, layout, task.max_steps(instance))
    seconds = time.perf_counter() - start
    result = task.read_answer(run.cells, layout.answer) if run.outcome == "halted" else None
    return Solution(task, instance, layout, run, result, result == task.expected(instance), seconds)
