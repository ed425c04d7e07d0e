"""`dfst solve --animate`: step through a run with the reference simulator, one frame per step.

With --json the frames go to stderr, so that stdout stays one JSON document.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.grid.frames import run_frames
from dfst.grid.grid import Layout
from dfst.grid.render import render_cells
from dfst.tasks.base import Task

MAX_FRAMES = 5000


def animate_run(agent: Transducer, task: Task, layout: Layout, max_steps: int, delay: float, *,
                stderr: bool = False) -> None:
    """Show the grid after every step of the reference simulator (with the agent's state), on
    stdout or (`stderr`) on stderr."""
    if layout.cells.size > 400:
        raise DfstError("--animate is for small inputs (operands of at most a few dozen digits)")
    screen = Console(stderr=stderr)
    with Live(console=screen, refresh_per_second=max(1, int(1 / max(delay, 1e-3)))) as live:
        for frame in _frames(agent, task, layout, min(max_steps, MAX_FRAMES)):
            live.update(Text.from_ansi(frame))
            time.sleep(delay)
    screen.line()  # the verdict line goes below the last frame


def _frames(agent: Transducer, task: Task, layout: Layout, max_steps: int):
    """One picture per step until the agent halts, lacks a rule or leaves the layout."""
    for frame in run_frames(agent, layout, max_steps):
        picture = render_cells(frame.cells, task.alphabet, task.blank, head=frame.head,
                               answer_row=layout.answer[0])
        yield f"step {frame.step}  {'halted' if frame.halted else f'state {frame.state}'}\n{picture}"
