"""The Gymnasium environments: registered by `import dfst`, standard by gymnasium's own checker, and
the expert driven through one gets reward 1."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dfst  # noqa: F401  (registers the environments)
from dfst.automata import STOP
from dfst.tasks import TASKS
from dfst.tasks.gym import env_id, register_envs


def test_every_task_is_registered_under_its_name():
    assert register_envs() == [env_id(name) for name in TASKS]
    assert env_id("add2") == "dfst/Add2-v0" and env_id("mult10") == "dfst/Mult10-v0"
    assert all(env_id(name) in gymnasium.registry for name in TASKS)


@pytest.mark.parametrize("name", list(TASKS))
@pytest.mark.parametrize("observation", ["symbol", "grid"])
def test_check_env_passes_without_warnings(name, observation):
    env = gymnasium.make(env_id(name), observation=observation, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("name", list(TASKS))
def test_the_expert_driven_through_the_env_is_rewarded(name):
    """The expert's rules as the policy (its state tracked outside the env): reward 1 on halting."""
    env = gymnasium.make(env_id(name), digits=4)
    agent = TASKS[name].agent
    nxt, wrt, mov = agent.tables()
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        shape = TASKS[name].example(4, 4)  # the task's operands: a >= b, one digit, one operand, ...
        assert (len(info["a"]), len(info["b"])) == (len(shape.a), len(shape.b))
        q, terminated, truncated, reward = agent.states.index(agent.initial), False, False, 0.0
        while not (terminated or truncated):
            action = np.array([wrt[q, obs], mov[q, obs]])
            q = int(nxt[q, obs])
            obs, reward, terminated, truncated, _ = env.step(action)
        assert terminated and reward == 1.0 and action[1] == STOP


def test_seeds_reproduce_instances_and_options_give_operands():
    env = gymnasium.make("dfst/Add10-v0", observation="grid")
    first, info = env.reset(seed=7)
    again, info_again = env.reset(seed=7)
    assert info == info_again and np.array_equal(first, again)
    grid, info = env.reset(options={"a": "99", "b": "1"})
    assert info == {"a": "99", "b": "1"} and grid.shape == env.observation_space.shape
    with pytest.raises(ValueError, match="larger digits"):
        env.reset(options={"a": "1" * 9, "b": "1"})
    with pytest.raises(ValueError, match="not in"):
        env.step([99, 0])
