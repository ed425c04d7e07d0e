"""The pure-Python reference simulator: one step = read, write, move, change state.

It is deliberately plain; every fast engine in dfst is tested equal to it. The move S means
"write, then stop": the run halts after the step that emits it.

`step_agent` is the one grid step in Python; `run_agent`, the Gymnasium-style `GridEnv` (its world
half, `act`) and `dfst solve --animate` all go through it. The numba kernels in `dfst.grid.rollout` are the
one fast path and are tested equal to `run_agent`. A grid here is anything indexed by (row, col): the
sparse `Grid` or a layout's dense array (whose caller keeps the head inside it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from dfst.automata import MOVE_DELTAS, MOVE_INDEX, STOP, Rule, Transducer
from dfst.grid.grid import Grid, Layout, Pos


class Outcome(StrEnum):
    """Why a run stopped."""

    HALTED = "halted"            # emitted the halting move S
    STEP_LIMIT = "step_limit"    # did not halt within the step limit
    NO_RULE = "no_rule"          # read a (state, symbol) pair the agent has no rule for
    OFF_LAYOUT = "off_layout"    # left the task's region (bounded engines only)
    NON_FINITE = "non_finite"    # a DFST's hidden state overflowed (model engines only)


@dataclass
class RunResult:
    outcome: Outcome
    steps: int
    state: str
    head: Pos
    grid: Grid
    trace: list[tuple[int, int, int]] = field(default_factory=list)  # (read, write, move) indices
    visited: list[tuple[str, str]] = field(default_factory=list)  # (state, symbol) of each step's rule


@dataclass(frozen=True)
class Step:
    """One step of an agent: the PTO (read, write, move indices), the rule used, where it left the
    head and which state it entered."""

    read: int
    write: int
    move: int
    rule: Rule
    head: Pos
    state: str

    @property
    def halted(self) -> bool:
        """The step emitted S: the run is over (the head did not move)."""
        return self.move == STOP


def act(cells, head: Pos, write: int, move: int) -> Pos:
    """The world's half of a step: write symbol index `write` under the head, then move it by move
    index `move` (S leaves it in place). Returns the new head; `cells` is updated in place."""
    cells[head] = write
    dr, dc = MOVE_DELTAS[move]
    return head[0] + dr, head[1] + dc


def step_agent(agent: Transducer, cells, head: Pos, state: str) -> Step | None:
    """One step of `agent` in `state` on `cells`: read, write, move, change state. None when the
    agent has no rule for what it reads (cells are then untouched)."""
    read = int(cells[head])
    rule = agent.rule(state, agent.alphabet[read])
    if rule is None:
        return None
    write, move = agent.alphabet.index(rule.write), MOVE_INDEX[rule.move]
    return Step(read, write, move, rule, act(cells, head, write, move), rule.next)


def run_agent(agent: Transducer, layout: Layout, max_steps: int, *, record: bool = False) -> RunResult:
    """Run `agent` from the layout's start until it halts, lacks a rule, or hits `max_steps`."""
    grid = Grid.from_array(layout.cells, agent.alphabet.index(agent.blank))
    head, state, trace, visited = layout.head, agent.initial, [], []
    for t in range(max_steps):
        step = step_agent(agent, grid, head, state)
        if step is None:
            return RunResult(Outcome.NO_RULE, t, state, head, grid, trace, visited)
        if record:
            trace.append((step.read, step.write, step.move))
            visited.append((state, step.rule.read))
        head, state = step.head, step.state
        if step.halted:
            return RunResult(Outcome.HALTED, t + 1, state, head, grid, trace, visited)
    return RunResult(Outcome.STEP_LIMIT, max_steps, state, head, grid, trace, visited)
