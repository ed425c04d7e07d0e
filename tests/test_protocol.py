"""dfst.protocol.score: any Python function under the protocol, checked against Python's own integers."""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import sys
from pathlib import Path

import pytest

from dfst.errors import DfstError
from dfst.protocol import DEFAULT_RANDOM, failure_rate_bound, pairs_to_catch, score
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import level_instances, level_stream
from dfst.protocol.tally import LISTED_FAILURES
from dfst.results import Result
from dfst.tasks import TASKS, Instance, get_task

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "score"


def python_sum(pairs, base=10):
    """The sums by Python's int: an oracle independent of dfst's."""
    digits = {2: "b", 10: "d"}[base]
    return [format(int(a, base) + int(b, base), digits) for a, b in pairs]


def example(name: str):
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize("name", ["add10", "mult10x1", "compare2", "parity2", "div10x1", "dyck"])
def test_the_stream_is_dfst_evals_instances(name):
    task = get_task(name)
    expected = level_instances(task, 6, EvalConfig(digits=(6,), random=7, seed=3))
    assert list(level_stream(task, 6, random=7, seed=3)) == expected


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_short_hard_instance_is_scored_at_the_first_length_only(name):
    task, cfg = get_task(name), EvalConfig(digits=(10, 100), random=10)
    first, second = level_instances(task, 10, cfg), level_instances(task, 100, cfg)
    whole = task.hard_instances(10)
    assert [(i.a, i.b) for i in first[:len(whole)]] == [(i.a, i.b) for i in whole]
    assert all(max(len(i.a), len(i.b)) >= 100 for i in second)  # no 0 + 0, no 1-digit operand


def test_every_other_random_pair_has_operands_of_unequal_lengths():
    for name in ("add10", "add2", "sub2", "compare10", "mult2"):
        drawn = level_instances(get_task(name), 50, EvalConfig(digits=(50,), random=40, hard=False))
        lengths = [(len(i.a), len(i.b)) for i in drawn]
        assert all(a == b == 50 for a, b in lengths[::2]), name
        assert all(max(a, b) == 50 > min(a, b) for a, b in lengths[1::2]), name
        if name != "sub2":  # subtraction puts the larger first
            assert {a < b for a, b in lengths[1::2]} == {True, False}, name
    for name in ("mult10x1", "div10x1", "parity2", "dyck"):  # b is one digit, or there is no b
        drawn = level_instances(get_task(name), 50, EvalConfig(digits=(50,), random=40, hard=False))
        assert all(len(i.a) == 50 and len(i.b) <= 1 for i in drawn), name


def test_default_random_catches_a_one_in_a_thousand_fault_95_percent_of_the_time():
    assert pairs_to_catch(0.001, 0.95) == DEFAULT_RANDOM
    assert (1 - 0.001) ** DEFAULT_RANDOM <= 0.05 < (1 - 0.001) ** (DEFAULT_RANDOM - 1)
    bound = failure_rate_bound(0, DEFAULT_RANDOM)
    assert (1 - bound) ** DEFAULT_RANDOM == pytest.approx(0.05)  # the exact one-sided bound
    assert failure_rate_bound(1, 100) is None and failure_rate_bound(0, 0) is None


def test_a_correct_adder_is_robust_and_the_hash_is_the_requests():
    result = score(python_sum, "add10", digits=(5, 30), random=20, seed=1)
    assert result.robust_lg == 30 and result.probabilistic_lg == 30
    assert all(lv["robust"] and lv["hard_pass"] and lv["first_failure"] is None for lv in result.levels)
    assert [lv["random"] for lv in result.levels] == [20, 20]
    task, lines = get_task("add10"), []
    for n in (5, 30):
        for inst in level_instances(task, n, EvalConfig(digits=(5, 30), random=20, seed=1)):
            lines.append(json.dumps({"id": len(lines), "a": inst.a, "b": inst.b}) + "\n")
    assert result.details["instances_sha256"] == hashlib.sha256("".join(lines).encode()).hexdigest()
    assert result.details["instance_count"] == len(lines)
    Result.from_dict(result.to_dict(), "the score")  # the versioned result type, every field checked


def test_a_carry_blind_adder_fails_the_hard_set_at_every_length_and_no_random_pair():
    wrong_add = example("carry_blind_adder").wrong_add
    result = score(lambda pairs: [wrong_add(a, b) for a, b in pairs], "add10", digits=(10, 40, 100),
                   random=200)
    for lv in result.levels:
        assert not lv["hard_pass"] and lv["random_exact"] == lv["random"] == 200
        assert lv["failure_rate_bound"] == pytest.approx(1 - 0.05 ** (1 / 200))
        first = lv["first_failure"]
        assert "carry_chain" in [f["name"] for f in lv["failures"]] and first["name"] == "carry_chain"
        assert first["expected"] == str(int(first["a"]) + int(first["b"])) != first["answer"]
    assert result.robust_lg == 0 and result.probabilistic_lg == 100


def test_a_level_lists_the_first_failures_by_name_and_counts_the_rest():
    result = score(lambda pairs: ["0"] * len(pairs), "add10", digits=(150,), random=5)
    level = result.levels[0]
    listed = level["failures"]
    failed = level["hard"] - level["hard_exact"]  # "0" is right for 0 + 0
    assert failed > LISTED_FAILURES
    assert len(listed) == LISTED_FAILURES and level["failures_unlisted"] == failed - LISTED_FAILURES
    names = [(f["name"], f["digits_a"], f["digits_b"]) for f in listed]
    assert names == sorted(names)
    few = score(lambda pairs: ["0"] * len(pairs), "add2", digits=(3,), random=5).levels[0]
    assert 0 < len(few["failures"]) == few["hard"] - few["hard_exact"] <= LISTED_FAILURES
    assert "failures_unlisted" not in few  # a record that lists every failure is as it was


def test_the_examples_in_base_2():
    adder, blind = example("adder"), example("carry_blind_adder")
    good = score(lambda pairs: [adder.add(a, b, 2) for a, b in pairs], "add2", digits=(8, 64), random=50)
    bad = score(lambda pairs: [blind.wrong_add(a, b, 2) for a, b in pairs], "add2", digits=(8, 64), random=50)
    assert good.robust_lg == 64
    assert bad.robust_lg == 0 and not any(lv["hard_pass"] for lv in bad.levels)
    # in base 2 both leading bits of equal-length operands are 1, so only unequal lengths let a
    # carry run through every column among the random pairs (a failing random pair is counted, not
    # listed: the instances are drawn again here)
    cfg = EvalConfig(digits=(8, 64), random=50)
    pairs = [i for n in cfg.digits for i in level_instances(get_task("add2"), n, cfg) if i.name == "random"]
    wrong = [i for i in pairs if blind.wrong_add(i.a, i.b, 2) != python_sum([(i.a, i.b)], 2)[0]]
    assert len(wrong) == sum(lv["random"] - lv["random_exact"] for lv in bad.levels) > 0
    assert all(len(i.a) != len(i.b) for i in wrong)


def test_a_model_wrong_on_a_few_random_pairs_fails_the_random_verdict():
    def sometimes_wrong(pairs):
        answers = python_sum(pairs)
        return [ans + "1" if int(a[-3:]) % 40 == 7 else ans for (a, _), ans in zip(pairs, answers)]

    result = score(sometimes_wrong, "add10", digits=(10, 20), random=400)
    for lv in result.levels:
        assert lv["hard_pass"] and not lv["probabilistic"] and lv["failure_rate_bound"] is None
        assert lv["wilson_low"] < lv["random_exact"] / lv["random"] < lv["wilson_high"]
        assert lv["first_failure"]["name"] == "random"


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_scores(name):
    task = get_task(name)
    right = score(lambda pairs: [task.expected(Instance(a, b)) for a, b in pairs], task, digits=(3,),
                  random=5)
    wrong = score(lambda pairs: [None] * len(pairs), task, digits=(3,), random=5)
    assert right.robust_lg == 3 and wrong.levels[0]["exact"] == 0


def test_until_fail_climbs_to_the_first_failure():
    def short_only(pairs):
        return [s if len(a) <= 40 else "0" for (a, _), s in zip(pairs, python_sum(pairs))]

    result = score(short_only, "add10", digits=(10,), random=5, until_fail=True, max_digits=1000)
    assert [lv["digits"] for lv in result.levels] == [10, 20, 40, 80]
    assert result.robust_lg == 40 and result.details["stopped_by"] == "failure"


def test_the_budget_stops_before_a_length_that_would_overrun_it():
    result = score(python_sum, "add10", digits=(10, 1000), random=5, budget=1e-9)
    assert [lv["digits"] for lv in result.levels] == [10]
    assert result.details["stopped_by"] == "time_budget"


def test_batches_are_bounded():
    sizes = []

    def counting(pairs):
        sizes.append(len(pairs))
        return python_sum(pairs)

    score(counting, "add10", digits=(4,), random=25, batch=10)
    hard = len(get_task("add10").hard_instances(4))
    assert max(sizes) == 10 and sum(sizes) == hard + 25


@pytest.mark.parametrize("predict, fragment", [
    (lambda pairs: [int(a) + int(b) for a, b in pairs], "not a string"),
    (lambda pairs: python_sum(pairs)[1:], "answers for"),
])
def test_a_bad_predict_is_a_one_line_error(predict, fragment):
    with pytest.raises(DfstError, match=fragment):
        score(predict, "add10", digits=(3,), random=2)


def test_a_predict_that_fails_at_one_length_keeps_the_lengths_before_it():
    from dfst.protocol.scorer import ScoringStopped

    def fails_past_three_digits(pairs):
        return python_sum(pairs) if max(len(a) for a, _ in pairs) <= 3 else [1] * len(pairs)

    with pytest.raises(ScoringStopped, match="at 5 digits.*not a string") as stopped:
        score(fails_past_three_digits, "add10", digits=(2, 3, 5), random=2)
    kept = stopped.value.result
    assert [lv["digits"] for lv in kept.levels] == [2, 3] and kept.robust_lg == 3
    assert kept.details["stopped_by"] == "error"


def test_bad_options_are_refused():
    for kwargs in ({"random": -1}, {"digits": ()}, {"seed": -1}, {"budget": 0}):
        with pytest.raises(DfstError):
            score(python_sum, "add10", **{"digits": (3,), **kwargs})
    assert math.isfinite(DEFAULT_RANDOM)
