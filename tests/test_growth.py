"""Data growth (`dfst.train.growth`): where the automaton read off departs from the expert on held-out
PTOs, those instances join the training PTOs and the run trains again; every expert run is counted
once, the held-out PTOs of every round stay held out, and a grown run resumes from its config."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from dfst.data import load_dataset
from dfst.tasks import TASKS
from dfst.tasks.user import load_tasks_file
from dfst.train.dsize import d_sizes, next_size, states_lower_bound
from dfst.train.growth import Growth, next_round, resumed_growth, with_instances
from dfst.train.loop import train, training_data
from dfst.train.recipes import training_recipe
from dfst.train.validation import short_held_out, validation_instances

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "suite" / "tasks.py"


@pytest.fixture(scope="module")
def xor2():
    """xor2 (a task dfst does not ship) registered for this module's tests, then unregistered."""
    before = dict(TASKS)
    load_tasks_file(SUITE)
    yield TASKS["xor2"]
    TASKS.clear()
    TASKS.update(before)


GROWN = 3  # rounds the grown run may take: 2 -> 10 -> 20 -> 40 PTOs


def tiny(grow_rounds: int):
    """Two PTOs of one or two digits, a short run: too little to pin xor2 down (it departs on longer)."""
    return replace(training_recipe("xor2", 0), samples=2, max_digits=1, iters=300, restarts=2,
                   finetune=False, eval_every=0, grow_rounds=grow_rounds)


@pytest.fixture(scope="module")
def grown(xor2, tmp_path_factory):
    out = tmp_path_factory.mktemp("grown")
    return out, train(tiny(GROWN), out)


@pytest.fixture(scope="module")
def fixed(xor2, tmp_path_factory):
    out = tmp_path_factory.mktemp("fixed")
    return out, train(tiny(0), out)


def test_without_growth_the_run_says_the_rounds_ran_out(fixed):
    _, summary = fixed
    found = summary["agreement"]
    assert summary["samples"] == 2 and not found["agreed"] and found["stopped"] == "data rounds"
    assert found["data"] == {"rounds": 0, "limit": 0, "samples": [2]}


def test_growth_adds_the_departing_held_out_instances_and_the_run_then_agrees(grown, fixed):
    out, summary = grown
    found = summary["agreement"]
    assert found["agreed"] and found["stopped"] == "agreed" and 1 <= found["data"]["rounds"] <= GROWN
    assert summary["samples"] == found["data"]["samples"][-1] > 2
    record = json.loads((out / "config.json").read_text())["data"]["grown"]
    first = fixed[1]["extracted"]["validation"]
    # round 1 added the held-out instances where round 0's automaton (the same run as `fixed`) departed
    assert record["added"][:record["rounds"][0]["added"]] == [[d["a"], d["b"]] for d in first["departures"]]
    data = load_dataset(out / "data.pto.zip")
    assert [list(p) for p in data.operands[2:]] == record["added"] == data.sampling["counterexamples"]


def test_every_expert_run_is_counted_once_and_every_round_s_held_out_set_stays_held_out(grown, xor2):
    out, summary = grown
    validation = load_dataset(out / "validation.pto.zip")
    data = load_dataset(out / "data.pto.zip")
    assert set(validation.operands).isdisjoint(data.operands)
    traces = summary["traces"]
    assert traces["counterexamples"]["runs"] == data.samples - 2
    assert traces["validation"]["runs"] == validation.samples
    assert traces["total"] == sum(part["runs"] for name, part in traces.items() if name != "total")
    # round 0's held-out instances that were not added are still there, beside the later rounds'
    longest = max(len(x) for pair in data.operands[:2] for x in pair)
    first = {(inst.a, inst.b) for inst in validation_instances(xor2, longest, 0)} - set(data.operands)
    assert first < set(validation.operands)
    # and so are the short instances the sampled PTOs did not show: every pair of one-digit operands
    short = {(a, b) for a in "01" for b in "01"} - set(data.operands)
    assert short and short < set(validation.operands)
    assert max(len(x) for pair in data.operands for x in pair) > longest  # the data grew longer


def test_a_finished_grown_run_resumes_to_its_summary_and_its_data_are_rebuilt(grown, xor2):
    out, summary = grown
    assert train(tiny(GROWN), out) == summary  # nothing trained again
    base = training_data(tiny(GROWN), xor2)
    config = json.loads((out / "config.json").read_text())
    again = resumed_growth(out, config, xor2, Growth(base, base))
    assert again.round == config["data"]["grown"]["round"] and again.record() == config["data"]
    other = config | {"train": tiny(GROWN + 1).to_dict()}
    assert resumed_growth(out, other, xor2, Growth(base, base)).round == 0  # another config: not this run


def test_no_round_follows_agreement_an_unexplained_pto_or_the_limit(xor2):
    base = training_data(tiny(1), xor2)
    growth = Growth(base, base)
    departs = {"a": "101", "b": "11", "steps": 2}
    departing = {"agreement": {"agreed": False, "departs": departs, "d_tried": [4]},
                 "extracted": {"states": 7, "validation": {"disagreement": departs, "departures": [departs]}}}
    assert growth.states_read_off == 0
    grown = next_round(growth, 1, departing, xor2)
    assert grown.round == 1 and grown.added == [["101", "11"]] and grown.rounds[0]["added"] == 1
    assert grown.states_read_off == 7  # where the next round's d starts, above the data's lower bound
    assert next_round(grown, 1, departing, xor2) is None  # the limit
    assert next_round(growth, 1, {"agreement": {"agreed": True, "departs": None}}, xor2) is None
    assert next_round(growth, 1, {"agreement": {"agreed": False, "departs": None}}, xor2) is None
    assert next_round(growth, 1, {"agreement": None}, xor2) is None  # nothing was checked


def test_a_run_killed_in_a_later_round_resumes_to_the_same_model(grown, xor2, tmp_path):
    """Killed during round 1 (after round 0's sizes), the same call again rebuilds the grown PTOs from
    config.json, trains on, and ends with the weights of the uninterrupted run."""
    out, summary = grown
    seen = []

    def kill_in_round_one(record: dict) -> None:
        config = json.loads((tmp_path / "run" / "config.json").read_text())
        if record.get("iteration") == 150 and "grown" in config["data"]:
            seen.append(record)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(tiny(GROWN), tmp_path / "run", progress=kill_in_round_one)
    assert seen and not (tmp_path / "run" / "summary.json").exists()
    again = train(tiny(GROWN), tmp_path / "run")
    assert again["agreement"] == summary["agreement"] and again["samples"] == summary["samples"]
    for name in ("model/model.safetensors", "extracted/agent.json", "data.pto.zip", "validation.pto.zip"):
        assert (tmp_path / "run" / name).read_bytes() == (out / name).read_bytes(), name


def test_the_short_held_out_instances_are_every_untrained_one_up_to_the_cap():
    add10, add2 = TASKS["add10"], TASKS["add2"]
    trained = {("3", "4"), ("12", "5")}
    short = short_held_out(add10, 3, trained)  # 100 pairs of one digit; 12,100 up to two: over the cap
    assert len(short) == 99 and ("3", "4") not in {(i.a, i.b) for i in short}
    assert {len(i.a) for i in short} == {1}
    assert len(short_held_out(add2, 3, set())) == add2.short_count(3)  # 196 pairs: all of them
    assert short_held_out(add2, 2, set()) == short_held_out(add2, 3, set())[:add2.short_count(2)]
    assert short_held_out(add2, 0, set()) == []
    lengths = add10.exhaustive_length(1000), add2.exhaustive_length(1000), add2.exhaustive_length(1000, 2)
    assert lengths == (1, 4, 2)  # 100 one-digit pairs (12,100 up to two); 900 add2 pairs up to four


def test_while_rounds_are_left_a_departing_automaton_grows_the_data_not_d(xor2):
    cfg = tiny(1)
    departs = {"a": "101", "b": "11", "steps": 2}
    departing = {"d": 4, "extracted": {"validation": {"disagreement": departs}}}
    assert next_size(cfg, [4, 6, 9], departing, data_next=True) is None  # the data grow next
    assert next_size(cfg, [4, 6, 9], departing, data_next=False) == 6  # the last round: d grows
    unexplained = {"d": 4, "extracted": None}  # no automaton explains the PTOs: d grows either way
    assert next_size(cfg, [4, 6, 9], unexplained, data_next=True) == 6
    agreed = {"d": 6, "extracted": {"validation": {"disagreement": None}}}
    assert next_size(cfg, [4, 6, 9], agreed, data_next=False) is None


def test_the_held_out_set_holds_each_instance_once_when_rounds_share_their_longest_operand(xor2):
    """Rounds whose data end at the same length draw the same structured instances: the set keeps
    one of each, so no departure is added twice and no expert run is counted twice."""
    base = training_data(tiny(2), xor2)
    pairs = [["0", "1"], ["1", "1"]]  # no longer than the sampled PTOs: every round's longest is the same
    growth = Growth(base, with_instances(xor2, base, pairs), 2, ({"added": 1}, {"added": 1}))
    held_out = growth.validation(xor2, 0).operands
    assert len(held_out) == len(set(held_out))
    longest = max(len(x) for pair in base.operands for x in pair)
    rounds = [validation_instances(xor2, longest, 0, r) for r in range(3)]
    assert set.intersection(*({(i.a, i.b) for i in found} for found in rounds))  # the repeats exist


def test_a_round_of_growth_starts_d_at_the_states_read_off_the_round_before(grown, xor2):
    """The lower bound of the grown PTOs may sit far below what the task needs; the automaton the
    round before read off explained the smaller set with its states, so the next round starts there."""
    out, summary = grown
    rounds = json.loads((out / "config.json").read_text())["data"]["grown"]["rounds"]
    starts = [r["d_tried"][0] for r in rounds[1:]] + [summary["agreement"]["d_tried"][0]]
    assert all(start >= before["states"] for start, before in zip(starts, rounds))
    data = load_dataset(out / "data.pto.zip")
    cfg = tiny(GROWN)
    assert d_sizes(cfg, xor2, data, 0)[0] == states_lower_bound(data)
    assert d_sizes(cfg, xor2, data, 50)[:2] == [50, 75]
    assert d_sizes(replace(cfg, d=3), xor2, data, 50) == [3]  # a d the user gives is used as it is


def test_every_training_record_says_where_the_run_stands(xor2, tmp_path):
    """The progress records (and `dfst train`'s bar) name d, the PTOs and the data round."""
    from dfst.cli.training import progress_fields

    records = []
    summary = train(replace(tiny(1), iters=20), tmp_path / "run", progress=records.append)
    stages = [(r["d"], r["samples"], r["round"], r["rounds"]) for r in records if "phase" not in r]
    assert stages[0][1:] == (2, 0, 1)  # round 0: the 2 sampled PTOs, of 1 round at most
    assert stages[-1] == (summary["d"], summary["samples"], summary["agreement"]["data"]["rounds"], 1)
    assert progress_fields(records[-1])["stage"].startswith(f"d {summary['d']}, {summary['samples']} PTOs")
    assert "(data round" in progress_fields(records[-1])["stage"]


def test_the_advice_names_the_samples_asked_for_and_what_they_grew_to(grown):
    from dfst.train.progress import advice

    _, summary = grown
    n = summary["samples"]
    tip = advice(summary, tiny(GROWN).to_dict())[0]
    assert tip == f"more samples (--samples {2 * n}, now 2, grown to {n})"
