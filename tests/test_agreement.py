"""The honest end of a training run (`dfst.train.agreement`): what the summary records and the last
line says, whether the automaton read off reproduced the longer PTOs or where it departs."""

from __future__ import annotations

from types import SimpleNamespace

from dfst.train.agreement import agreement, agreement_line

VALIDATION = SimpleNamespace(samples=158, sampling={"min_digits": 4, "max_digits": 6})
UNGROWN = SimpleNamespace(round=0, rounds=(), data=SimpleNamespace(samples=20))
GROWN = SimpleNamespace(round=2, rounds=({"samples": 20}, {"samples": 28}), data=SimpleNamespace(samples=36))
MODEL = {"d": 14, "tried": [{"d": 6}, {"d": 9}]}
SIZES = [6, 9, 14, 21, 32]
CFG = {"max_digits": 3, "iters": 4000, "samples": 20}


def summary_with(found: dict, loss: float = 1e-6) -> dict:
    return {"agreement": found, "samples": 20, "final_loss": loss}


def test_nothing_is_claimed_where_nothing_was_checked():
    assert agreement({"validation": {"disagreement": None}}, None, MODEL, SIZES, UNGROWN, 3) is None
    assert agreement_line({"agreement": None}, CFG) is None


def test_an_automaton_that_reproduces_the_longer_ptos_agrees_and_says_what_was_checked():
    found = agreement({"validation": {"disagreement": None}}, VALIDATION, MODEL, SIZES, UNGROWN, 3)
    assert found == {"checked": {"samples": 158, "digits": [4, 6]}, "d_tried": [6, 9, 14], "d_limit": 32,
                     "data": {"rounds": 0, "limit": 3, "samples": [20]},
                     "agreed": True, "departs": None, "stopped": "agreed"}
    line = agreement_line(summary_with(found), CFG)
    assert line == ("the automaton read off agrees with the expert on 158 expert PTOs of 4-6 digits held out "
                    "of training")


def test_a_departure_is_named_with_the_sizes_tried_and_what_to_raise():
    departs = {"a": "1011", "b": "11", "steps": 7}
    found = agreement({"validation": {"disagreement": departs}}, VALIDATION, MODEL | {"d": 32}, SIZES,
                      UNGROWN, 0)
    assert not found["agreed"] and found["departs"] == departs and found["d_tried"] == [6, 9, 32]
    assert found["stopped"] == "data rounds"
    line = agreement_line(summary_with(found), CFG)
    assert line.startswith("NOT ENOUGH DATA: the automaton read off departs from the expert on 1011, 11 "
                           "after 7 agreeing steps (checked on 158 expert PTOs of 4-6 digits")
    assert "d grew 6 -> 9 -> 32 (its limit)" in line
    assert line.endswith("Try more rounds of data growth (--grow-rounds 1, now 0) or more samples "
                         "(--samples 40, now 20) or longer PTOs (--max-digits 4, now 3)")


def test_no_automaton_read_off_and_an_unfit_loss_put_iterations_first():
    found = agreement(None, VALIDATION, {"d": 9, "tried": [{"d": 6}]}, SIZES, UNGROWN, 3)
    assert found["agreed"] is False and found["departs"] is None and found["stopped"] == "no automaton"
    line = agreement_line(summary_with(found, loss=0.3), CFG)
    assert "no automaton read off explains the training PTOs" in line and "(at most 32)" in line
    assert "Try more iterations (--iters 8000, now 4000) or more samples" in line


def test_long_operands_are_cut_to_their_ends():
    found = agreement({"validation": {"disagreement": {"a": "1" * 40, "b": "", "steps": 3}}}, VALIDATION,
                      MODEL, SIZES, UNGROWN, 0)
    assert f"on {'1' * 10}…{'1' * 10} (40 symbols) after 3" in agreement_line(summary_with(found), CFG)


def test_grown_data_are_named_with_its_rounds_and_the_round_limit_is_what_to_raise():
    departs = {"a": "10110", "b": "", "steps": 4}
    found = agreement({"validation": {"disagreement": departs}}, VALIDATION, MODEL, SIZES, GROWN, 2)
    assert found["data"] == {"rounds": 2, "limit": 2, "samples": [20, 28, 36]}
    assert found["stopped"] == "data rounds"
    line = agreement_line(summary_with(found), CFG)
    assert "the PTOs grew 20 -> 28 -> 36 where earlier automata departed (2 of 2 rounds)" in line
    assert "Try more rounds of data growth (--grow-rounds 4, now 2) or more samples (--samples 40" in line


def test_a_departure_with_rounds_left_is_still_growing():
    departs = {"a": "1", "b": "", "steps": 0}
    found = agreement({"validation": {"disagreement": departs}}, VALIDATION, MODEL, SIZES, GROWN, 3)
    assert found["stopped"] == "growing" and found["agreed"] is False


def test_agreement_after_growth_says_how_the_data_grew():
    found = agreement({"validation": {"disagreement": None}}, VALIDATION, MODEL, SIZES, GROWN, 3)
    line = agreement_line(summary_with(found), CFG)
    assert line.endswith("held out of training; the PTOs grew 20 -> 28 -> 36 where earlier automata "
                         "departed (2 of 3 rounds)")
