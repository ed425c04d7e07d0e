"""The length-generalisation protocol: Wilson intervals, the ladder of lengths, robust and probabilistic
verdicts, the first failure, and what stops an --until-fail climb."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from dfst.automata import Transducer, make_transducer
from dfst.grid.rollout import DfstWeights, judge, run_dfst
from dfst.grid.world import Outcome
from dfst.model.compile import compile_agent
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol, summarize
from dfst.protocol.instances import hard_at
from dfst.protocol.ladder import ladder
from dfst.protocol.tally import Level, wilson_interval
from dfst.tasks import TASKS, Instance

REPORT_KEYS = {"task", "robust_max_digits", "probabilistic_max_digits", "stopped_by", "mode", "levels"}
LEVEL_KEYS = {"digits", "instances", "exact", "robust", "hard", "hard_exact", "hard_pass", "random",
              "random_exact", "probabilistic", "wilson_low", "wilson_high", "failure_rate_bound", "failures",
              "first_failure", "steps", "seconds", "excluded"}


def weights_of(agent: Transducer) -> DfstWeights:
    return DfstWeights.of(*compile_agent(agent).numpy_weights())


@cache
def expert(name: str) -> DfstWeights:
    return weights_of(TASKS[name].agent)


def rewired_add2() -> Transducer:
    """add2 whose carry ripple through a longer b writes 1 instead of 0. Random pairs have equal
    lengths and never ripple into b's own digits, so only hard instances (1 + 11…1) expose it."""
    agent = TASKS["add2"].agent
    rules = dict(agent.rules)
    rules[("carry", "1")] = replace(rules[("carry", "1")], write="1")
    return make_transducer(agent.states, agent.alphabet, rules.values(), initial=agent.initial,
                           final=agent.final, blank=agent.blank, name=agent.name)


@cache
def rewired() -> DfstWeights:
    return weights_of(rewired_add2())


# --- Wilson interval -------------------------------------------------------------------------------

def test_wilson_interval_known_values():
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.72247, abs=1e-5) and high == pytest.approx(1.0, abs=1e-12)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.27753, abs=1e-5)
    low, high = wilson_interval(5, 10)
    assert low + high == pytest.approx(1.0) and low == pytest.approx(0.23659, abs=1e-5)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(50, 100) != wilson_interval(5, 10)  # narrower with more trials
    assert wilson_interval(50, 100)[1] - wilson_interval(50, 100)[0] < high - low


def test_wilson_interval_contains_the_observed_proportion():
    """Every interval lies in [0, 1] and contains successes / trials, including all and none."""
    for trials in (1, 2, 3, 7, 10, 20, 33, 100, 1000):
        for successes in range(trials + 1):
            low, high = wilson_interval(successes, trials)
            assert 0.0 <= low <= successes / trials <= high <= 1.0, (successes, trials, low, high)


# --- the ladder ------------------------------------------------------------------------------------

def test_ladder_sorts_and_dedupes_given_lengths():
    assert ladder(EvalConfig(digits=(100, 10, 1000, 10))) == [10, 100, 1000]
    assert ladder(EvalConfig(digits=(7,), max_digits=3)) == [7]  # without until_fail: as given


def test_ladder_climbs_until_max_digits():
    assert ladder(EvalConfig(digits=(5,), until_fail=True, max_digits=40)) == [5, 10, 20, 40]
    assert ladder(EvalConfig(digits=(5,), until_fail=True, max_digits=30)) == [5, 10, 20, 30]
    assert ladder(EvalConfig(digits=(20, 3), until_fail=True, max_digits=100, ladder_factor=3)) == \
        [3, 20, 60, 100]
    assert ladder(EvalConfig(digits=(3,), until_fail=True, max_digits=6, ladder_factor=1.0)) == \
        [3, 4, 5, 6]  # a factor that would not climb still moves up by one
    assert ladder(EvalConfig(digits=(50,), until_fail=True, max_digits=40)) == [50]


def level(digits: int, exact: int, random_exact: int) -> dict:
    """A level of 12 instances, 10 of them random pairs."""
    hard_exact = exact - random_exact
    return Level(digits, hard=2, hard_exact=hard_exact, random=10, random_exact=random_exact).record(0.0)


def test_max_digits_count_only_an_unbroken_run_of_passing_lengths():
    """A pass after a failure does not count; levels are taken in order of N, whatever order given."""
    levels = [level(30, 12, 10), level(3, 12, 10), level(10, 11, 10), level(100, 2, 0)]
    report = summarize(TASKS["add2"], levels, "completed", EvalConfig())
    assert (report["robust_max_digits"], report["probabilistic_max_digits"]) == (3, 30)
    assert [lv["robust"] for lv in report["levels"]] == [True, True, False, False]
    report = summarize(TASKS["add2"], [level(5, 11, 9)], "failure", EvalConfig(rescale=True))
    assert (report["robust_max_digits"], report["probabilistic_max_digits"], report["mode"]) == \
        (0, 0, "rescaled")


# --- run_protocol ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add2", "mult2"])
def test_compiled_expert_is_robust_at_every_level(name):
    task = TASKS[name]
    report, failure = run_protocol(task, expert(name), EvalConfig(digits=(20, 3)))
    assert failure is None
    assert set(report) >= REPORT_KEYS
    assert (report["task"], report["robust_max_digits"], report["probabilistic_max_digits"],
            report["stopped_by"], report["mode"]) == (name, 20, 20, "completed", "plain")
    assert [lv["digits"] for lv in report["levels"]] == [3, 20]
    for lv in report["levels"]:
        assert set(lv) >= LEVEL_KEYS
        whole = lv["digits"] == 3  # the first length scores the whole hard set, the others its own length's
        assert lv["instances"] == len(hard_at(task, lv["digits"], whole)) + 10 == lv["exact"]
        assert (lv["random"], lv["random_exact"], lv["robust"], lv["probabilistic"]) == (10, 10, True, True)
        assert lv["failures"] == [] and lv["steps"] > 0
    rescaled, _ = run_protocol(task, expert(name), EvalConfig(digits=(3,), rescale=True, random=2))
    assert (rescaled["mode"], rescaled["robust_max_digits"]) == ("rescaled", 3)


def test_expert_automaton_through_the_same_protocol():
    levels = []
    report, failure = run_protocol(TASKS["add10"], None, EvalConfig(digits=(4, 30), random=3, hard=False),
                                   on_level=lambda n, count: levels.append((n, count)))
    assert failure is None and report["robust_max_digits"] == 30
    assert levels == [(4, 3), (30, 3)]
    assert [lv["instances"] for lv in report["levels"]] == [3, 3]


def test_rewired_model_is_not_robust_and_its_first_failure_is_returned():
    task = TASKS["add2"]
    report, failure = run_protocol(task, rewired(), EvalConfig(digits=(1, 3, 20)))
    # Robust at 1 digit (no ripple possible), not at 3; of the random pairs, one of unequal lengths
    # (a carry out of the shorter operand) fails at 3 and at 20.
    assert (report["robust_max_digits"], report["probabilistic_max_digits"]) == (1, 1)
    assert [lv["random_exact"] for lv in report["levels"]] == [10, 9, 9]
    assert report["stopped_by"] == "completed"
    assert [lv["robust"] for lv in report["levels"]] == [True, False, False]
    assert [f["name"] for f in report["levels"][1]["failures"]] == ["carry_chain_swapped",
                                                                    "carry_past_short_end_1_swapped"]
    assert failure is not None and not failure.exact and failure.verdict == "wrong_answer"
    assert (failure.name, failure.a, failure.b) == ("carry_chain_swapped", "1", "111")
    first = report["levels"][1]["first_failure"]  # the same record as an external model's
    assert (first["name"], first["a"], first["b"]) == (failure.name, failure.a, failure.b)
    assert first["expected"] == task.expected(instance := Instance(failure.a, failure.b, failure.name)) \
        != first["answer"] == failure.answer
    # The returned instance fails again when replayed, and the expert solves it.
    instance = Instance(failure.a, failure.b, failure.name)
    layout = task.layout(instance)
    again = judge(task, instance, run_dfst(rewired(), layout, task.max_steps(instance)), layout.answer)
    assert (again.exact, again.outcome, again.steps) == (False, Outcome.HALTED, failure.steps)
    assert judge(task, instance, run_dfst(expert("add2"), layout, task.max_steps(instance)),
                 layout.answer).exact


def test_until_fail_stops_at_the_first_failure():
    report, failure = run_protocol(TASKS["add2"], rewired(),
                                   EvalConfig(digits=(2, 4), until_fail=True, max_digits=1000))
    assert report["stopped_by"] == "failure" and failure is not None
    assert [lv["digits"] for lv in report["levels"]] == [2]
    assert report["robust_max_digits"] == 0


def test_until_fail_reaches_max_digits_with_the_expert():
    report, failure = run_protocol(TASKS["add2"], expert("add2"),
                                   EvalConfig(digits=(5,), until_fail=True, max_digits=40, random=3))
    assert failure is None and report["stopped_by"] == "max_digits"
    assert [lv["digits"] for lv in report["levels"]] == [5, 10, 20, 40]
    assert report["robust_max_digits"] == 40


def test_until_fail_stops_on_the_time_budget():
    cfg = EvalConfig(digits=(3,), until_fail=True, max_digits=10**6, random=2, time_budget=1e-9)
    report, failure = run_protocol(TASKS["mult2"], expert("mult2"), cfg)
    assert failure is None and report["stopped_by"] == "time_budget"
    assert [lv["digits"] for lv in report["levels"]] == [3]  # the first level always runs
    assert report["robust_max_digits"] == 3


def test_waiting_for_a_core_never_cuts_a_climb_short(monkeypatch):
    """A level that waits (as when other jobs hold the cores) costs wall time but not CPU time: the
    budget counts the time the evaluation would take alone, so the climb is the model's own."""
    import time

    import dfst.protocol.evaluate as evaluate

    def waiting(*args, **kwargs):
        time.sleep(0.3)
        return real(*args, **kwargs)

    real = evaluate.evaluate_level
    monkeypatch.setattr(evaluate, "evaluate_level", waiting)
    cfg = EvalConfig(digits=(3,), until_fail=True, max_digits=24, random=2, time_budget=0.5)
    report, failure = run_protocol(TASKS["mult2"], expert("mult2"), cfg)
    assert failure is None and report["stopped_by"] == "max_digits" and report["seconds"] > 1.0
    assert [lv["digits"] for lv in report["levels"]] == [3, 6, 12, 24]


def test_the_ladder_predicts_on_its_own_clock_not_the_levels_seconds():
    from dfst.protocol.evaluate import level_estimate
    from dfst.protocol.ladder import climb

    def climbed(budget):
        ticks = iter(range(1000))  # the clock: one tick a reading, so a level costs one tick
        cfg = EvalConfig(digits=(10,), until_fail=True, max_digits=1000, ladder_factor=10.0,
                         time_budget=budget)

        def level(n):  # a wall time that says nothing: the clock is what counts
            return {"digits": n, "robust": True, "seconds": 1e9}

        levels, why, _ = climb(TASKS["add2"], cfg, level, lambda n: level_estimate(TASKS["add2"], n, cfg),
                            growth=lambda n, last: n / last, clock=lambda: float(next(ticks)))
        return [lv["digits"] for lv in levels], why

    assert climbed(50.0) == ([10, 100, 1000], "max_digits")  # 4 + 1 x 10 and 7 + 1 x 10 fit
    assert climbed(10.0) == ([10], "time_budget")  # 4 + 1 x 10 does not


def test_dfst_eval_is_one_library_call_that_checks_first_and_saves_beside_the_checkpoint(tmp_path):
    from dfst.errors import DfstError
    from dfst.model.checkpoint import save_checkpoint
    from dfst.protocol.eval_files import REPORT_FILES, plan_eval, run_eval

    save_checkpoint(compile_agent(TASKS["add2"].agent), tmp_path / "ckpt", {"source": "test"})
    job = plan_eval(tmp_path / "ckpt", EvalConfig(digits=(3, 20), random=2))
    assert job.task.name == "add2" and job.saving and job.held_out_source is None
    assert not any((tmp_path / "ckpt" / name).exists() for name in REPORT_FILES)  # planning writes nothing
    report, failure = run_eval(job)
    assert failure is None and report["robust_max_digits"] == 20 and "not_saved" not in report
    assert (tmp_path / "ckpt" / "eval.json").exists() and report["checkpoint"] == str(tmp_path / "ckpt")
    with pytest.raises(DfstError, match="memory"):
        plan_eval(tmp_path / "ckpt", EvalConfig(digits=(10**12,), random=2, max_memory=1 << 30))
