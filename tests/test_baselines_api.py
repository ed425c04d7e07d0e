"""dfst.baselines as a library: what `dfst baseline` does, callable from Python."""

from __future__ import annotations

import pytest

from dfst.baselines import (
    baseline_defaults,
    baseline_task,
    get_baseline,
    parse_config,
    run_baseline,
    run_side_task,
)
from dfst.errors import DfstError
from dfst.results import Result


def test_run_baseline_returns_a_result():
    config = {"steps": 2, "batch": 4, "hidden": 8, "embed": 4, "eval_top": 40, "random": 2}
    r = run_baseline("lstm", "add2", seed=1, config=config, progress=False)
    assert isinstance(r, Result) and (r.system, r.task, r.seed) == ("LSTM", "add2", 1)
    assert Result.from_dict(r.to_dict(), "lstm") == r


def test_tasks_defaults_and_side_tasks():
    assert baseline_task("tp-transformer", "mult10x1").name == "mult10x1"
    assert baseline_task("rpni", "add2").name == "add2"
    assert "bits" in baseline_defaults("ntm", "copy") and "bits" not in baseline_defaults("ntm", "add2")
    with pytest.raises(DfstError, match="own task"):
        run_baseline("ntm", "copy")
    with pytest.raises(DfstError, match="no side task 'add2'"):
        run_side_task("ntm", "add2")
    with pytest.raises(DfstError, match="unknown baseline 'nope'"):
        get_baseline("nope")


def test_parse_config_takes_the_defaults_types():
    defaults = {"steps": 10, "lr": 0.1, "layout": "concat", "bisect": False}
    assert parse_config(["steps=1_000", "lr=3e-3", "layout=aligned", "bisect=yes"], defaults) == {
        "steps": 1000, "lr": 0.003, "layout": "aligned", "bisect": True}
    for item, fragment in (("steps=x", "expected int"), ("bisect=maybe", "true or false"),
                           ("nope=1", "unknown config key"), ("steps", "not KEY=VALUE")):
        with pytest.raises(DfstError, match=fragment):
            parse_config([item], defaults)
