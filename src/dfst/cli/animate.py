"""`dfst solve --animate`: step through a run with the reference simulator, one frame per step."""

from __future__ import annotations

import time

from rich.live import Live
from rich.text import Text

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.grid.grid import Layout
from dfst.grid.render import render_cells
from dfst.grid.world import move_head
from dfst.tasks.base import Task

MAX_FRAMES = 5000


def animate_run(agent: Transducer, task: Task, layout: Layout, max_steps: int, delay: float) -> None:
    if layout.cells.size > 400:
        raise DfstError("--animate is for small inputs (operands of at most a few dozen digits)")
    cells, head, state = layout.cells.copy(), layout.head, agent.initial
    symbol_ix = {s: i for i, s in enumerate(agent.alphabet)}
    with Live(refresh_per_second=max(1, int(1 / max(delay, 1e-3)))) as live:
        for step in range(min(max_steps, MAX_FRAMES)):
            rule = agent.rule(state, agent.alphabet[cells[head]])
            picture = render_cells(cells, task.alphabet, task.blank, head=head, answer_row=layout.answer[0])
            live.update(Text.from_ansi(f"step {step}  state {state}\n{picture}"))
            if rule is None:
                return
            cells[head] = symbol_ix[rule.write]
            if rule.move == "S":
                return
            head, state = move_head(head, rule.move), rule.next
            if not (0 <= head[0] < cells.shape[0] and 0 <= head[1] < cells.shape[1]):
                return
            time.sleep(delay)
