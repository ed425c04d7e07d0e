"""The honest end of a training run (`dfst.train.agreement`): what the summary records and the last
line says, whether the automaton read off reproduced the longer PTOs or where it departs."""

from __future__ import annotations

from types import SimpleNamespace

from dfst.train.agreement import agreement, agreement_line

VALIDATION = SimpleNamespace(samples=158, sampling={"min_digits": 4, "max_digits": 6})
MODEL = {"d": 14, "tried": [{"d": 6}, {"d": 9}]}
SIZES = [6, 9, 14, 21, 32]
CFG = {"max_digits": 3, "iters": 4000}


def summary_with(found: dict, loss: float = 1e-6) -> dict:
    return {"agreement": found, "samples": 20, "final_loss": loss}


def test_nothing_is_claimed_where_nothing_was_checked():
    assert agreement({"validation": {"disagreement": None}}, None, MODEL, SIZES) is None
    assert agreement_line({"agreement": None}, CFG) is None


def test_an_automaton_that_reproduces_the_longer_ptos_agrees_and_says_what_was_checked():
    found = agreement({"validation": {"disagreement": None}}, VALIDATION, MODEL, SIZES)
    assert found == {"checked": {"samples": 158, "digits": [4, 6]}, "d_tried": [6, 9, 14], "d_limit": 32,
                     "agreed": True, "departs": None}
    line = agreement_line(summary_with(found), CFG)
    assert line == ("the automaton read off agrees with the expert on 158 expert PTOs of 4-6 digits held out "
                    "of training")


def test_a_departure_is_named_with_the_sizes_tried_and_what_to_raise():
    departs = {"a": "1011", "b": "11", "steps": 7}
    found = agreement({"validation": {"disagreement": departs}}, VALIDATION, MODEL | {"d": 32}, SIZES)
    assert not found["agreed"] and found["departs"] == departs and found["d_tried"] == [6, 9, 32]
    line = agreement_line(summary_with(found), CFG)
    assert line.startswith("NOT ENOUGH DATA: the automaton read off departs from the expert on 1011, 11 "
                           "after 7 agreeing steps (checked on 158 expert PTOs of 4-6 digits")
    assert "d grew 6 -> 9 -> 32 (its limit)" in line
    assert "Try more samples (--samples 40, now 20) or longer PTOs (--max-digits 4, now 3)" in line


def test_no_automaton_read_off_and_an_unfit_loss_put_iterations_first():
    found = agreement(None, VALIDATION, {"d": 9, "tried": [{"d": 6}]}, SIZES)
    assert found["agreed"] is False and found["departs"] is None
    line = agreement_line(summary_with(found, loss=0.3), CFG)
    assert "no automaton read off explains the training PTOs" in line and "(at most 32)" in line
    assert "Try more iterations (--iters 8000, now 4000) or more samples" in line


def test_long_operands_are_cut_to_their_ends():
    found = agreement({"validation": {"disagreement": {"a": "1" * 40, "b": "", "steps": 3}}}, VALIDATION,
                      MODEL, SIZES)
    assert f"on {'1' * 10}…{'1' * 10} (40 symbols) after 3" in agreement_line(summary_with(found), CFG)
