"""Counterexample-guided training (`dfst train --until-certified`)."""

from __future__ import annotations

import json

from cli_helpers import assert_one_line_error, run, run_verdict_json
from dfst.data import record_dataset
from dfst.tasks import get_task
from dfst.train.growth import with_instances


def test_rounds_add_counterexamples_until_certified_or_stuck(capsys, tmp_path):
    report = run_verdict_json(capsys, "train", "add2", "--iters", "40", "--restarts", "2", "--eval-every",
                              "0", "--d", "6",  # one size of d: a round trains once, not once per size
                              "--until-certified", "--max-rounds", "3", "--out", tmp_path / "cg")
    rounds = report["rounds"]
    assert rounds[0]["samples"] == 20 and 1 <= len(rounds) <= 3
    for before, after in zip(rounds, rounds[1:]):  # every further round has one more instance
        assert before["verdict"] != "CERTIFIED" and before["added"] is not None
        assert after["samples"] == before["samples"] + 1
    assert report["certified"] == (rounds[-1]["verdict"] == "CERTIFIED")
    assert json.loads((tmp_path / "cg" / "rounds.json").read_text()) == report


def test_an_added_instance_is_recorded_with_its_pto():
    task = get_task("add2")
    data = record_dataset(task, 3, 2, seed=0)
    more = with_instances(task, data, [["1111", "1"]])
    assert more.samples == 4 and more.operands[-1] == ("1111", "1")
    assert more.sampling["counterexamples"] == [["1111", "1"]]
    assert more.trace(3)[-1][2] == 4  # the expert's run ends with S


def test_rounds_must_be_positive(capsys, tmp_path):
    code, _, err = run(capsys, "train", "add2", "--until-certified", "--max-rounds", "0", "--out", tmp_path)
    assert_one_line_error(code, err, "--max-rounds")
