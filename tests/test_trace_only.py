"""The learner sees only PTOs: training (d included), the automaton read off and the fine-tuning phase
never read the expert's states, rules or state count; only its alphabet and blank, which the PTOs are
written in."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dfst.data import load_dataset, record_dataset
from dfst.tasks import get_task
from dfst.train import TrainConfig
from dfst.train.dsize import d_sizes, states_lower_bound
from dfst.train.loop import train

SEEN = ("alphabet", "blank", "k")  # the PTOs' own symbols (k: how many)


class StatesHidden:
    """An agent whose every attribute but the PTOs' symbols fails the test when read."""

    def __init__(self, agent):
        self._agent = agent

    def __getattr__(self, name: str):
        if name in SEEN:
            return getattr(self._agent, name)
        raise AssertionError(f"the learner read the expert's {name!r}")


def hidden(name: str):
    """The task `name` whose expert shows the learner nothing but its symbols."""
    task = get_task(name)
    expert = task.agent
    return replace(task, build_agent=lambda base: StatesHidden(expert))


TINY = TrainConfig(samples=8, max_digits=2, iters=40, restarts=2, eval_every=20, eval_digits=(4,),
                   eval_random=2, finetune=True, finetune_adam=20, finetune_plain=0, finetune_lbfgs=10,
                   finetune_centres=10, finetune_frozen=0)


def test_training_extraction_and_the_phase_read_only_the_ptos(tmp_path):
    task = get_task("add2")
    data = record_dataset(task, TINY.samples, TINY.max_digits, TINY.seed)  # the expert as an oracle of PTOs
    summary = train(TINY, tmp_path / "run", data=data, task=hidden("add2"), command="test")
    assert summary["iterations"] == TINY.iters and "finetune" in summary
    assert summary["d"] in d_sizes(TINY, hidden("add2"), data)


def test_the_expert_rule_is_an_option_that_reads_the_states():
    task, data = hidden("add2"), record_dataset(get_task("add2"), 8, 2, 0)
    assert d_sizes(TINY, task, data)[0] == states_lower_bound(data)
    with pytest.raises(AssertionError, match="read the expert's 'd'"):
        d_sizes(replace(TINY, d_rule="expert"), task, data)
    assert d_sizes(replace(TINY, d=7), task, data) == [7]


# --- the operational meaning: agents with equal PTOs train bit-identical models ------------------

def renamed(agent: dict) -> dict:
    """The agent with its states renamed and listed, and its rules given, in another order."""
    names = {q: f"s{i}" for i, q in enumerate(reversed(agent["states"]))}
    rules = [rule | {"state": names[rule["state"]], "next": names[rule["next"]]}
             for rule in reversed(agent["rules"])]
    return agent | {"name": "renamed", "states": [names[q] for q in reversed(agent["states"])],
                    "initial": names[agent["initial"]], "final": names[agent["final"]], "rules": rules}


def split(agent: dict, state: str) -> dict:
    """The agent with `state` split in two equivalent copies: the second has the same rules, and every
    other rule into `state` now enters the copy; its runs, so its PTOs, are the same on every input."""
    copy = f"{state}_copy"
    into = [i for i, rule in enumerate(agent["rules"]) if rule["next"] == state]
    moved = set(into[1::2])
    rules = [rule | {"next": copy} if i in moved else rule for i, rule in enumerate(agent["rules"])]
    rules += [rule | {"state": copy} for rule in agent["rules"] if rule["state"] == state]
    return agent | {"name": "split", "states": [*agent["states"], copy], "rules": rules}


def test_agents_with_equal_ptos_train_bit_identical_models(tmp_path, capsys):
    from cli_helpers import run_json

    expert = get_task("add2").agent.to_dict()
    agents = {"expert": expert, "renamed": renamed(expert), "split": split(expert, "next0")}
    assert len(agents["split"]["states"]) == len(expert["states"]) + 1
    weights, operands = {}, {}
    for name, agent in agents.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(agent))
        run = tmp_path / name
        run_json(capsys, "train", "add2", "--agent", path, "--out", run, "--seed", "5", "--iters", "300",
                 "--restarts", "2", "--eval-digits", "4", "--finetune-adam", "20", "--finetune-plain", "0",
                 "--finetune-lbfgs", "5", "--finetune-centres", "5")
        weights[name] = [(run / sub / "model.safetensors").read_bytes() for sub in ("trained", "model")]
        operands[name] = load_dataset(run / "data.pto.zip").operands
    assert operands["renamed"] == operands["expert"] == operands["split"]  # the sampler chose alike
    assert weights["renamed"] == weights["expert"] == weights["split"]  # training and its phase too


@pytest.mark.parametrize("name, state, samples, cover_differs", [("add10", "carry", 60, True),
                                                                 ("mult2", None, 20, False)])
def test_the_default_sampler_chooses_by_ptos_the_state_readers_do_not(name, state, samples, cover_differs):
    from dfst.data import SAMPLERS
    from dfst.tasks.own_agent import agent_task_from_dict

    task = get_task(name)
    expert = task.agent.to_dict()
    entered = [rule["next"] for rule in expert["rules"] if rule["next"] != expert["final"]]
    state = state or max(sorted(set(entered)), key=entered.count)  # the state entered most often
    twin = agent_task_from_dict(task, split(expert, state), "split")
    assert twin.agent.d == task.agent.d + 1
    chosen = {sampler: [SAMPLERS[sampler](t, samples, 3, 1).operands for t in (task, twin)]
              for sampler in ("contexts", "cover")}
    assert chosen["contexts"][0] == chosen["contexts"][1]
    # a rule cover reads the states: add10's split carry state changes its choice (mult2's happens not to)
    assert (chosen["cover"][0] != chosen["cover"][1]) == cover_differs


def test_trainings_own_evaluation_never_scores_a_training_pair():
    """The evaluation that may stop training at its target holds the training pairs out as dfst eval
    does: a model scored on its own PTOs would be selected by its training data."""
    from dfst.grid.rollout import DfstWeights
    from dfst.model.compile import compile_agent
    from dfst.train.evaluation import _closed_loop

    task = get_task("compare2")
    data = record_dataset(task, 30, 3, 0)
    trained = {tuple(pair) for pair in data.operands}
    short = [i for i in task.hard_instances(10) if (i.a, i.b) in trained]
    assert short  # compare2's hard set at 10 holds short instances that are training pairs
    expert = DfstWeights.of(*compile_agent(task.agent).numpy_weights())
    cfg = replace(TINY, task="compare2", eval_digits=(10,), target_digits=0, eval_random=3)
    [everything] = _closed_loop(expert, task, cfg)["levels"]
    [held_out] = _closed_loop(expert, task, cfg, data=data)["levels"]
    assert everything["instances"] == len(task.hard_instances(10)) + 3
    assert held_out["instances"] == everything["instances"] - len(short)
