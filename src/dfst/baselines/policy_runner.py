"""Closed-loop runs of a step policy on the grid, a whole batch of instances at once.

A policy is anything with `start(batch) -> state` and `step(state, reads) -> (state, writes, moves)`
over numpy arrays of one entry per instance: it sees only the symbol under each head, as a DFST.
The runner keeps the grids (one padded uint8 array), the heads and the verdicts, and repeats
`_run_table`'s step exactly (`dfst.grid.rollout`):

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

from dfst.automata import MOVE_DELTAS, STOP, Transducer
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
from dfst.tasks.base import Instance, Task

RUNNING = -1
_DR = np.array([dr for dr, _ in MOVE_DELTAS])
_DC = np.array([dc for _, dc in MOVE_DELTAS])


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


def stack_grids(layouts: list[Layout]) -> tuple[np.ndarray, np.ndarray]:
    """The layouts' cells in one (B, R, C) array, padded at the bottom and right, and their (B, 2)
    shapes (the region each head must stay in)."""
    shapes = np.array([lay.cells.shape for lay in layouts])
    grids = np.zeros((len(layouts), *shapes.max(0)), dtype=np.uint8)
    for grid, lay in zip(grids, layouts):
        grid[: lay.cells.shape[0], : lay.cells.shape[1]] = lay.cells
    return grids, shapes


def run_policy(policy: Policy, layouts: list[Layout], bounds: list[int]) -> list[TableRun]:
    """Run `policy` on every layout at once, layout i for at most bounds[i] steps; one TableRun per
    layout (its final cells, outcome, steps and head; state -1 and no trace)."""
    grids, shapes = stack_grids(layouts)
    rows = np.arange(len(layouts))
    r, c = (np.array([lay.head[i] for lay in layouts]) for i in (0, 1))
    bound, outcome, steps = np.array(bounds), np.full(len(layouts), RUNNING), np.array(bounds)
    state = policy.start(len(layouts))
    for t in range(int(bound.max(initial=0))):
        live = (outcome == RUNNING) & (t < bound)
        if not live.any():
            break
        reads = grids[rows, np.clip(r, 0, grids.shape[1] - 1), np.clip(c, 0, grids.shape[2] - 1)]
        state, writes, moves = policy.step(state, reads)
        _finish(outcome, steps, live & (moves < 0), NO_RULE, t)
        live &= moves >= 0
        grids[rows[live], r[live], c[live]] = writes[live]
        _finish(outcome, steps, live & (moves == STOP), HALTED, t + 1)
        live &= moves != STOP
        r[live] += _DR[moves[live]]
        c[live] += _DC[moves[live]]
        off = live & ((r < 0) | (r >= shapes[:, 0]) | (c < 0) | (c >= shapes[:, 1]))
        _finish(outcome, steps, off, OFF_LAYOUT, t + 1)
    outcome[outcome == RUNNING] = STEP_LIMIT  # steps stays the bound
    return [TableRun(OUTCOMES[code], int(n), (int(r[i]), int(c[i])), -1, grids[i, :h, :w].copy(),
                     np.zeros((0, 3), np.uint8))
            for i, (code, n, (h, w)) in enumerate(zip(outcome, steps, shapes))]


def _finish(outcome: np.ndarray, steps: np.ndarray, rows: np.ndarray, code: int, count: int) -> None:
    outcome[rows], steps[rows] = code, count


def rollout_policy(task: Task, policy: Policy, instances: list[Instance],
                   bounds: list[int] | None = None) -> list[InstanceResult]:
    """Run `policy` on the instances as one batch (bounds default to the task's step bounds) and
    judge each run as `dfst.grid.rollout.rollout` does."""
    layouts = [task.layout(inst) for inst in instances]
    bounds = [task.max_steps(inst) for inst in instances] if bounds is None else bounds
    runs = run_policy(policy, layouts, bounds)
    return [judge(task, inst, run, lay.answer) for inst, run, lay in zip(instances, runs, layouts)]
