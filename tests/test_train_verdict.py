"""The verdict `dfst train` ends with and `train()` logs (dfst.train.progress.model_verdict): the
model the run wrote, exact or not on its own held-out check, and what to try."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dfst.train.progress import model_verdict, progress_line

CFG = {"lr": 0.02, "max_digits": 3, "iters": 4000, "finetune": True}


def summary(levels: list[dict], *, tuned: bool, error: str | None = None) -> dict:
    """A run's summary whose check of RUN/model has `levels` (fine-tuned: the plain-h check)."""
    robust = 0
    for lv in levels:
        if not lv["robust"]:
            break
        robust = lv["digits"]
    check = {"robust_max_digits": robust, "levels": levels}
    trained = {"robust_max_digits": 0,
               "levels": [{"digits": 10, "robust": False, "exact": 0, "instances": 5}]}
    found = {"out": "runs/r", "samples": 20, "stopped_by": "iters", "eval": trained}
    if error:
        return found | {"finetune": {"error": error}}
    return found | ({"finetune": {"eval_plain": check}} if tuned else {"eval": check})


@given(st.lists(st.tuples(st.integers(1, 10**5), st.booleans()), min_size=1, max_size=4,
                unique_by=lambda t: t[0]), st.booleans())
def test_the_verdict_follows_the_check_of_the_model_written(checks, tuned):
    levels = [{"digits": n, "robust": ok, "exact": 5 if ok else 2, "instances": 5}
              for n, ok in sorted(checks)]
    exact, text = model_verdict(summary(levels, tuned=tuned), CFG)
    assert exact == all(lv["robust"] for lv in levels)
    assert ("plain h" in text) == tuned and "to 0 digits" not in text
    if exact:
        assert "runs/r/model is exact" in text and "dfst certify runs/r tries to prove" in text
    else:
        first = next(lv for lv in levels if not lv["robust"])
        assert "is NOT exact" in text and f"2/5 exact at {first['digits']:,} digits" in text
        assert "--samples 40, now 20" in text and "--max-digits 5, now 3" in text


def test_a_failed_fine_tuning_or_a_divergence_says_so():
    exact, text = model_verdict(summary([], tuned=True, error="no automaton read off"), CFG)
    assert exact is False and "fine-tuning failed (no automaton read off)" in text and "h rescaled" in text
    exact, text = model_verdict({"out": "r", "stopped_by": "diverged"}, CFG)
    assert exact is False and "diverged" in text and "--lr" in text
    assert model_verdict({"out": "r", "stopped_by": "iters", "eval": None}, CFG)[0] is None


def test_a_progress_line_names_what_each_phase_minimises():
    assert progress_line({"iteration": 100, "iters": 4000, "loss": 0.031}) == "iter 100/4,000 loss 0.031"
    line = progress_line({"phase": "lbfgs", "iteration": 200, "iters": 300, "objective": 1.5e-7})
    assert line == "iter 200/300 fine-tuning objective 1.5e-07  fine-tuning (L-BFGS)"
