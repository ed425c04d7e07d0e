"""The pure-Python reference simulator: one step = read, write, move, change state.

It is deliberately plain; every fast engine in dfst is tested equal to it. The move S means
"write, then stop": the run halts after the step that emits it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from dfst.automata import MOVE_DELTA, MOVE_INDEX, Transducer
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


def move_head(head: Pos, move: str) -> Pos:
    dr, dc = MOVE_DELTA[move]
    return head[0] + dr, head[1] + dc


def run_agent(agent: Transducer, layout: Layout, max_steps: int, *, record: bool = False) -> RunResult:
    """Run `agent` from the layout's start until it halts, lacks a rule, or hits `max_steps`."""
    symbol_ix = {s: i for i, s in enumerate(agent.alphabet)}
    blank = symbol_ix[agent.blank]
    grid = Grid.from_array(layout.cells, blank)
    head, state, trace, visited = layout.head, agent.initial, [], []
    for step in range(max_steps):
        read = grid.read(head)
        rule = agent.rule(state, agent.alphabet[read])
        if rule is None:
            return RunResult(Outcome.NO_RULE, step, state, head, grid, trace, visited)
        grid.write(head, symbol_ix[rule.write])
        if record:
            trace.append((read, symbol_ix[rule.write], MOVE_INDEX[rule.move]))
            visited.append((state, rule.read))
        head, state = move_head(head, rule.move), rule.next
        if rule.move == "S":
            return RunResult(Outcome.HALTED, step + 1, state, head, grid, trace, visited)
    return RunResult(Outcome.STEP_LIMIT, max_steps, state, head, grid, trace, visited)
