"""The input-output baselines are scored by `dfst.protocol.score`, and that changed none of their numbers.

`reference_evaluate` is `dfst.baselines.common.evaluate_predictor` as it was before it delegated to the
protocol's scorer (copied verbatim, bar the name): the same faulty predictors, scored both ways on the
same lengths, must give the same per-length counts, verdicts and LG, and be asked the same pairs.
"""

from __future__ import annotations

import pytest

from dfst.baselines.common import evaluate_predictor
from dfst.protocol import score
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import level_instances
from dfst.protocol.ladder import max_passing
from dfst.protocol.tally import LISTED_FAILURES, wilson_interval
from dfst.tasks import get_task
from dfst.tasks.base import Instance

SAME = ("digits", "instances", "exact", "random", "random_exact", "wilson_low", "wilson_high", "robust",
        "probabilistic")


def reference_evaluate(task, predict, digits, *, random=10, seed=0, hard=True, stop_at_failure=False,
                       stop_when_none_exact=False) -> dict:
    """The old `evaluate_predictor`, the reference the new path must match."""
    cfg = EvalConfig(digits=tuple(digits), random=random, hard=hard, seed=seed)
    levels = []
    for n in sorted(set(digits)):
        instances = level_instances(task, n, cfg)
        answers = predict(instances)
        exact = [ans is not None and ans == task.expected(inst) for inst, ans in zip(instances, answers)]
        rand = [ok for inst, ok in zip(instances, exact) if inst.name == "random"]
        low, high = wilson_interval(sum(rand), len(rand))
        levels.append({
            "digits": n, "instances": len(instances), "exact": sum(exact),
            "random": len(rand), "random_exact": sum(rand), "wilson_low": low, "wilson_high": high,
            "robust": all(exact), "probabilistic": bool(rand) and all(rand),
            "failures": [inst.name for inst, ok in zip(instances, exact) if not ok],
        })
        if (stop_at_failure and not all(exact)) or (stop_when_none_exact and not any(exact)):
            break
    return {"robust_lg": max_passing(levels, "robust"),
            "probabilistic_lg": max_passing(levels, "probabilistic"), "levels": levels}


def python_answer(task, a: str, b: str) -> str:
    """The answer by Python's integers (independent of dfst's tasks) for add / mult in base 2 or 10."""
    x, y = int(a, task.base), int(b, task.base)
    value = x + y if task.operation == "add" else x * y
    return format(value, "b" if task.base == 2 else "d")


def faulty(task, log: list):
    """A deterministic model with the faults baselines have, judged by operands only (never a hard
    instance's name): no answer on a long carry into a new leading digit, a wrong last digit when the
    operands' digit sums are 1 mod 3, the right answer otherwise. Logs every pair it is asked."""
    def predict(instances: list[Instance]) -> list[str | None]:
        answers = []
        for inst in instances:
            log.append((inst.a, inst.b))
            right = python_answer(task, inst.a, inst.b)
            if len(right) > max(len(inst.a), len(inst.b)) and len(inst.a) > 6:
                answers.append(None)
            elif sum(map(int, inst.a + inst.b)) % 3 == 1:
                answers.append(right[:-1] + ("1" if right[-1] == "0" else "0"))
            else:
                answers.append(right)
        return answers
    return predict


def assert_same_scores(old: dict, new: dict) -> None:
    assert (new["robust_lg"], new["probabilistic_lg"]) == (old["robust_lg"], old["probabilistic_lg"])
    assert len(new["levels"]) == len(old["levels"])
    for was, now in zip(old["levels"], new["levels"]):
        assert {k: now[k] for k in SAME} == {k: was[k] for k in SAME}
        # The old list named every failing instance ("random" for each random pair); the protocol's
        # names the failing hard instances, sorted (the first LISTED_FAILURES, the rest counted), and
        # counts the random ones apart.
        named = sorted(name for name in was["failures"] if name != "random")
        assert [f["name"] for f in now["failures"]] == named[:LISTED_FAILURES]
        assert now.get("failures_unlisted", 0) == max(0, len(named) - LISTED_FAILURES)
        assert now["random"] - now["random_exact"] == was["failures"].count("random")
        assert now["hard"] + now["random"] == now["instances"] and "seconds" not in now


@pytest.mark.parametrize("name", ["add2", "add10", "mult2", "mult10x1"])
@pytest.mark.parametrize("stops", [{}, {"stop_at_failure": True}, {"stop_when_none_exact": True}])
def test_the_protocols_scorer_gives_the_old_evaluators_numbers(name, stops):
    task = get_task(name)
    old_log, new_log = [], []
    old = reference_evaluate(task, faulty(task, old_log), (12, 3, 7, 40), random=25, seed=4, **stops)
    new = evaluate_predictor(task, faulty(task, new_log), (12, 3, 7, 40), random=25, seed=4, **stops)
    assert_same_scores(old, new)
    assert new_log == old_log  # the same pairs, in the same order
    assert any(lv["failures"] for lv in new["levels"]) and any(lv["exact"] for lv in new["levels"])


def test_a_right_model_and_a_silent_one_score_as_before():
    task = get_task("add10")
    for predict in (lambda insts: [python_answer(task, i.a, i.b) for i in insts],
                    lambda insts: [None] * len(insts)):
        for stops in ({}, {"stop_when_none_exact": True}):
            assert_same_scores(reference_evaluate(task, predict, (5, 10, 30), **stops),
                               evaluate_predictor(task, predict, (5, 10, 30), **stops))


def test_a_baselines_result_names_the_set_dfst_score_makes_for_the_lengths_it_scored():
    task = get_task("add2")
    silent_from_6 = evaluate_predictor(  # stops after 9 digits, its first failure
        task, lambda insts: [python_answer(task, i.a, i.b) if max(len(i.a), len(i.b)) < 6 else None
                             for i in insts], (3, 9, 27), random=4, seed=2, stop_at_failure=True)
    assert [lv["digits"] for lv in silent_from_6["levels"]] == [3, 9]
    scored = score(lambda pairs: [""] * len(pairs), task, (3, 9), random=4, seed=2)
    assert silent_from_6["protocol"] == {"instances_sha256": scored.details["instances_sha256"],
                                          "instance_count": scored.details["instance_count"],
                                          "hard_set": scored.details["hard_set"]}
