"""A Gymnasium-style environment over the grid world: the policy sees only the symbol under its head.

    env = GridEnv(TASKS["add2"])
    obs, info = env.reset(seed=0, options={"digits": 8})      # or options={"a": "101", "b": "11"}
    obs, reward, terminated, truncated, info = env.step((write_symbol, move))

An action is (symbol index to write, move index in MOVES order). The move S ends the episode;
reward is 1.0 when the answer read off the grid is then exact, else 0.0. Randomness comes only from
the generator seeded in `reset`. No gymnasium dependency: only its signatures.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import MOVES, STOP
from dfst.grid.grid import Layout
from dfst.grid.render import render_cells
from dfst.grid.world import act
from dfst.tasks.base import Instance, Task


class GridEnv:
    """The task's grid, a head, and a step counter; the hidden state belongs to the policy."""

    def __init__(self, task: Task, *, max_steps: int | None = None):
        self.task = task
        self.max_steps = max_steps
        self._rng = np.random.default_rng()
        self.instance: Instance | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = options or {}
        if "a" in options:
            self.instance = self.task.check(options["a"], options.get("b", ""))
        else:
            n = int(options.get("digits", 3))
            self.instance = self.task.random_instance(self._rng, n, int(options.get("digits_b", n)))
        layout: Layout = self.task.layout(self.instance)
        self.cells, self.head, self.answer = layout.cells.copy(), layout.head, layout.answer
        self.steps = 0
        self.limit = self.max_steps or self.task.max_steps(self.instance)
        return self._observe(), {"instance": self.instance}

    def step(self, action: tuple[int, int]) -> tuple[int, float, bool, bool, dict]:
        write, move = int(action[0]), int(action[1])
        if not (0 <= write < len(self.task.alphabet) and 0 <= move < len(MOVES)):
            raise ValueError(f"action {action} out of range")
        head = act(self.cells, self.head, write, move)  # the world's half of an agent's step
        self.steps += 1
        terminated = move == STOP
        inside = 0 <= head[0] < self.cells.shape[0] and 0 <= head[1] < self.cells.shape[1]
        self.head = head if inside else None
        if self.head is None:  # walked off the layout's region
            return 0, 0.0, True, False, {"outcome": "off_layout"}
        reward = float(terminated and self.answer_text() == self.task.expected(self.instance))
        truncated = not terminated and self.steps >= self.limit
        return self._observe(), reward, terminated, truncated, {"steps": self.steps}

    def answer_text(self) -> str | None:
        return self.task.read_answer(self.cells, self.answer)

    def render(self) -> str:
        return render_cells(self.cells, self.task.alphabet, self.task.blank, head=self.head,
                            answer_row=self.answer[0], color=False)

    def _observe(self) -> int:
        return int(self.cells[self.head])
