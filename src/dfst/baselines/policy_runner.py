"""Closed-loop runs of a step policy on the grid, a whole batch of instances at once.

A policy is anything with `start(batch) -> state` and `step(state, reads) -> (state, writes, moves)`
over numpy arrays of one entry per instance: it sees only the symbol under each head, as a DFST.
The runner keeps each layout's cells, the heads and the verdicts; the write and the move are the
reference simulator's (`dfst.grid.world.act`), and the verdicts are `_run_table`'s
(`dfst.grid.rollout`), against which it is tested:

- read x under the head; a move outside 0..4 is NO_RULE after t steps, nothing written;
- write; the move S halts after t + 1 steps where the head stands (the halting write counts);
- otherwise move; a head that leaves its own layout's array is OFF_LAYOUT after t + 1 steps,
  even on the last allowed step;
- no halt within the instance's bound is STEP_LIMIT after exactly `bound` steps; a halt on step
  `bound` itself is HALTED.

Every instance's answer is read and judged as `dfst.grid.rollout.judge` does (only after a halt), so a
policy scores here what the table engine would score: `TablePolicy` (an automaton) is the test.
Finished rows keep being stepped with a dummy read (their outputs are dropped), so a policy's state
never has to be re-indexed; the batch stops when every row has finished.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dfst.automata import MOVES, STOP, Transducer
from dfst.grid.grid import Layout
from dfst.grid.rollout import (
    HALTED,
    NO_RULE,
    OFF_LAYOUT,
    OUTCOMES,
    STEP_LIMIT,
    InstanceResult,
    TableRun,
    judge,
)
from dfst.grid.world import act
from dfst.tasks.base import Instance, Task

RUNNING = -1


class Policy(Protocol):
    """One step for every instance of a batch: (B,) reads in, (B,) writes and (B,) moves out."""

    def start(self, batch: int) -> object: ...

    def step(self, state: object, reads: np.ndarray) -> tuple[object, np.ndarray, np.ndarray]: ...


class TablePolicy:
    """An automaton's lookup tables as a Policy: the reference the runner is tested against."""

    def __init__(self, agent: Transducer):
        self.nxt, self.wrt, self.mov = agent.tables()
        self.initial = agent.states.index(agent.initial)

    def start(self, batch: int) -> np.ndarray:
        return np.full(batch, self.initial)

    def step(self, state: np.ndarray, reads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q = np.maximum(state, 0)  # a finished row may sit in a state with no rules (-1)
        return self.nxt[q, reads], self.wrt[q, reads], self.mov[q, reads]


def run_policy(policy: Policy, layouts: list[Layout], bounds: list[int]) -> list[TableRun]:
    """Run `policy` on every layout at once, layout i for at most bounds[i] steps; one TableRun per
    layout (its final cells, outcome, steps and head; state -1 and no trace). The policy steps the
    whole batch; each live row's write and move go through the world's step (`grid.world.act`)."""
    cells = [lay.cells.copy() for lay in layouts]
    heads = [lay.head for lay in layouts]
    outcome, steps = [RUNNING] * len(layouts), list(bounds)
    state = policy.start(len(layouts))
    for t in range(max(bounds, default=0)):
        live = [i for i, code in enumerate(outcome) if code == RUNNING and t < bounds[i]]
        if not live:
            break
        reads = np.zeros(len(layouts), dtype=np.uint8)  # a finished row reads 0; its outputs are dropped
        reads[live] = [cells[i][heads[i]] for i in live]
        state, writes, moves = policy.step(state, reads)
        for i in live:
            outcome[i], steps[i], heads[i] = _step_row(cells[i], heads[i], int(writes[i]), int(moves[i]), t)
    no_trace = np.zeros((0, 3), np.uint8)
    return [TableRun(OUTCOMES[STEP_LIMIT if code == RUNNING else code], n, (int(head[0]), int(head[1])), -1,
                     grid, no_trace) for code, n, head, grid in zip(outcome, steps, heads, cells)]


def _step_row(cells: np.ndarray, head: tuple[int, int], write: int, move: int,
              t: int) -> tuple[int, int, tuple[int, int]]:
    """(outcome, steps, head) after step t of one row: a move outside 0..4 is NO_RULE after t steps,
    nothing written; S halts after t + 1 steps where the head stands; a head that leaves its
    layout is OFF_LAYOUT after t + 1 steps (its last write made), even on the last allowed step."""
    if not 0 <= move < len(MOVES):
        return NO_RULE, t, head
    head = act(cells, head, write, move)
    if move == STOP:
        return HALTED, t + 1, head
    if not (0 <= head[0] < cells.shape[0] and 0 <= head[1] < cells.shape[1]):
        return OFF_LAYOUT, t + 1, head
    return RUNNING, t + 1, head


def rollout_policy(task: Task, policy: Policy, instances: list[Instance],
                   bounds: list[int] | None = None) -> list[InstanceResult]:
    """Run `policy` on the instances as one batch (bounds default to the task's step bounds) and
    judge each run as `dfst.grid.rollout.rollout` does."""
    layouts = [task.layout(inst) for inst in instances]
    bounds = [task.max_steps(inst) for inst in instances] if bounds is None else bounds
    runs = run_policy(policy, layouts, bounds)
    return [judge(task, inst, run, lay.answer) for inst, run, lay in zip(instances, runs, layouts)]
