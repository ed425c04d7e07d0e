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


def test_training_extraction_and_the_phase_read_only_the_ptos(tmp_path, monkeypatch):
    import dfst.train.validation as validation

    task = get_task("add2")
    data = record_dataset(task, TINY.samples, TINY.max_digits, TINY.seed)  # the expert as an oracle of PTOs
    # the validation PTOs come from the same oracle, recorded outside the learner as `data` is
    oracle = validation.oracle_dataset
    monkeypatch.setattr(validation, "oracle_dataset", lambda _, *args: oracle(task, *args))
    summary = train(TINY, tmp_path / "run", data=data, task=hidden("add2"), command="test")
    assert summary["iterations"] == TINY.iters and "finetune" in summary
    assert summary["d"] in d_sizes(TINY, hidden("add2"), data)
    checked = load_dataset(tmp_path / "run" / "validation.pto.zip").samples
    assert summary["traces"]["kept"]["runs"] == TINY.samples
    assert summary["traces"]["validation"]["runs"] == checked
    assert summary["queries"] == summary["traces"]["total"] == TINY.samples + checked


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


def test_the_contexts_pool_grows_while_batches_show_new_observations(monkeypatch):
    """sub10's first batch of candidates never borrows into a 0 over a 2 (seed 0): the PTOs of further
    batches show new pairs of observations, and the grown pool's cover reaches every rule of the expert
    (read here only to check). add2's second batch shows nothing new: its data stays the first batch's."""
    import dfst.data.contexts as contexts_module
    from dfst.data.coverage import coverage
    from dfst.tasks.base import Instance

    def sampled(name: str, samples: int, batches: int):
        monkeypatch.setattr(contexts_module, "POOL_BATCHES", batches)
        return contexts_module.context_cover_dataset(get_task(name), samples, 3, 0)

    def rules_missed(data) -> set:
        return coverage(get_task("sub10"), [Instance(a, b, "") for a, b in data.operands])[1]

    grown, first = sampled("sub10", 225, 16), sampled("sub10", 225, 1)
    assert grown.sampling["queries"] > 2 * first.sampling["queries"]
    assert not rules_missed(grown)
    assert rules_missed(first)  # what the first batch alone missed
    add2_grown, add2_first = sampled("add2", 20, 16), sampled("add2", 20, 1)
    assert add2_grown.operands == add2_first.operands
    assert add2_grown.sampling["queries"] > add2_first.sampling["queries"]  # the batch that showed nothing


def test_an_automaton_that_explains_the_ptos_but_not_longer_ones_grows_d():
    """The validation PTOs catch an automaton that reproduces every PTO of at most 3 digits and not
    longer ones: add2's expert passes, one that errs only after the longest 3-digit PTO does not, and
    the size rule then grows d."""
    from dfst.train.dsize import next_size
    from dfst.train.validation import first_disagreement, validation_set

    task = get_task("add2")
    validation = validation_set(task, 3, 0)
    assert first_disagreement(task.agent, task, validation) is None
    from itertools import product

    from dfst.data.pto import record_run
    from dfst.tasks.base import Instance

    numbers = ["".join(bits) for n in (1, 2, 3) for bits in product("01", repeat=n)]
    longest = max(len(record_run(task, Instance(a, b, ""))) for a in numbers for b in numbers)
    found = first_disagreement(wrong_after(task.agent, longest), task, validation)
    assert found is not None and max(len(found["a"]), len(found["b"])) > 3
    cfg = TrainConfig(task="add2")
    summary = {"d": 6, "extracted": {"states": 9, "validation": {"disagreement": found}}}
    assert next_size(cfg, [6, 9, 14], summary) == 9
    summary["extracted"]["validation"]["disagreement"] = None
    assert next_size(cfg, [6, 9, 14], summary) is None


def wrong_after(agent, steps: int):
    """`agent` with a step counter in its states: from step `steps` on, it writes another symbol than
    the agent would; its PTOs of at most `steps` steps are the agent's."""
    from dfst.automata import Rule, make_transducer

    def at(state: str, i: int) -> str:
        return state if state == agent.final else f"{state}@{i}"

    def other(symbol: str) -> str:
        return agent.alphabet[(agent.alphabet.index(symbol) + 1) % len(agent.alphabet)]

    rules = [Rule(at(r.state, i), r.read, at(r.next, min(i + 1, steps)),
                  r.write if i < steps else other(r.write), r.move)
             for r in agent.rules.values() for i in range(steps + 1)]
    states = [agent.final, *(at(q, i) for q in agent.states if q != agent.final for i in range(steps + 1))]
    return make_transducer(states, agent.alphabet, rules, initial=at(agent.initial, 0), final=agent.final,
                           blank=agent.blank, name="wrong_after")


def test_data_growth_reads_only_the_ptos_of_the_instances_it_adds(tmp_path, monkeypatch):
    """A round of data growth asks the expert, as an oracle of PTOs, for the held-out instances where
    the automaton read off departs: nothing else of the expert is read."""
    import dfst.train.growth as growth
    import dfst.train.validation as validation

    task = get_task("add2")
    cfg = TrainConfig(samples=2, max_digits=1, iters=300, restarts=2, eval_every=0, grow_rounds=1)
    data = record_dataset(task, cfg.samples, cfg.max_digits, cfg.seed)
    oracle, record = validation.oracle_dataset, growth.record_instances
    monkeypatch.setattr(validation, "oracle_dataset", lambda _, *args: oracle(task, *args))
    monkeypatch.setattr(growth, "record_instances", lambda _, *args: record(task, *args))
    summary = train(cfg, tmp_path / "run", data=data, task=hidden("add2"), command="test")
    assert summary["agreement"]["data"]["rounds"] == 1 and summary["samples"] > cfg.samples
    assert summary["traces"]["counterexamples"]["runs"] == summary["samples"] - cfg.samples
