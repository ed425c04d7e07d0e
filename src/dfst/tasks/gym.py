"""Gymnasium environments of the tasks: `gymnasium.make("dfst/Add2-v0")` after `import dfst`.

    import dfst, gymnasium
    env = gymnasium.make("dfst/Mult10-v0", digits=4, render_mode="ansi")
    obs, info = env.reset(seed=0)                        # options={"a": "456", "b": "12"} also
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

Observation: the symbol under the head (`Discrete(k)`), or with `observation="grid"` the whole grid
(`Box` of symbol indices, the shape of the layout of two `digits`-digit operands; a smaller layout is
padded with blanks on the right and below). Action: (symbol to write, move in U, D, L, R, S order) as
`MultiDiscrete([k, 5])`. The move S ends the episode (`terminated`), with reward 1 when the answer
read off the grid is exact (the task's answer), else 0; walking off the layout also terminates, with
reward 0. `truncated` comes at the task's step bound for the instance. The expert's hidden state is
the policy's business, as for a DFST. Random operands come only from the generator `reset(seed=...)`
seeds (n digits each, non-zero leading digit).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from dfst.automata import MOVES
from dfst.tasks import TASKS, get_task
from dfst.tasks.env import GridEnv

NAMESPACE = "dfst"
OBSERVATIONS = ("symbol", "grid")


def env_id(task_name: str) -> str:
    """`add2` -> `dfst/Add2-v0`."""
    return f"{NAMESPACE}/{task_name[:1].upper()}{task_name[1:]}-v0"


class DfstEnv(gymnasium.Env):
    """One task's grid world as a Gymnasium environment (the module doc says what it observes)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, task: str = "add2", digits: int = 3, observation: str = "symbol",
                 render_mode: str | None = None):
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if not isinstance(digits, int) or digits < 1:
            raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
        self.task, self.digits, self.observation = get_task(task), digits, observation
        self.render_mode = render_mode
        self._world = GridEnv(self.task)
        k = len(self.task.alphabet)
        self.action_space = spaces.MultiDiscrete([k, len(MOVES)])
        if observation == "symbol":
            self.observation_space = spaces.Discrete(k)
        else:
            self._shape = self.task.layout(self.task.example(digits, digits)).cells.shape
            self.observation_space = spaces.Box(0, k - 1, shape=self._shape, dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = {"digits": self.digits} | (options or {})
        symbol, info = self._world.reset(seed=int(self.np_random.integers(2**63)), options=options)
        return self._observe(symbol), {"a": info["instance"].a, "b": info["instance"].b}

    def step(self, action):
        if not self.action_space.contains(np.asarray(action, dtype=np.int64)):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        symbol, reward, terminated, truncated, info = self._world.step((int(action[0]), int(action[1])))
        return self._observe(symbol), reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return self._world.render() if self._world.head is not None else "(the head left the layout)"

    def _observe(self, symbol: int):
        if self.observation == "symbol":
            return int(symbol)
        cells = self._world.cells
        if cells.shape[0] > self._shape[0] or cells.shape[1] > self._shape[1]:
            raise ValueError(f"operands longer than digits={self.digits} do not fit the grid observation "
                             f"{self._shape}: make the environment with a larger digits")
        grid = np.full(self._shape, self.task.blank, dtype=np.int64)
        grid[:cells.shape[0], :cells.shape[1]] = cells
        return grid


def register_envs() -> list[str]:
    """Register `dfst/<Task>-v0` for every registered task (again: a no-op); returns the ids."""
    ids = []
    for name in TASKS:
        ids.append(env_id(name))
        if ids[-1] not in gymnasium.registry:
            gymnasium.register(ids[-1], entry_point="dfst.tasks.gym:DfstEnv", kwargs={"task": name})
    return ids
