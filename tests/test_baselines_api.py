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
from dfst.results import Result, load_result


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


def test_a_baseline_command_is_planned_before_any_work_and_run_in_one_call(tmp_path, monkeypatch):
    from dfst.baselines.job import plan_baseline, run_baseline_job

    monkeypatch.chdir(tmp_path)
    job = plan_baseline("rpni", "add2", seed=2, config=["samples=20", "eval_digits=10"])
    assert (job.stored_task, job.config, job.side) == ("add2", {"samples": 20, "eval_digits": "10"}, False)
    assert job.path == tmp_path.joinpath("results", "baselines", "rpni-add2-s2.json").relative_to(tmp_path)
    assert not (tmp_path / "results").exists()  # planning writes nothing
    result = run_baseline_job(job, progress=False)
    assert isinstance(result, Result) and load_result(job.path).robust_lg == result.robust_lg
    with pytest.raises(DfstError, match="exists"):
        plan_baseline("rpni", "add2", seed=2)  # refused before training, not after
    assert plan_baseline("rpni", "add2", seed=2, force=True).force
    with pytest.raises(DfstError, match="unknown config key"):
        plan_baseline("rpni", "add2", config=["nope=1"])
    side = plan_baseline("ntm", "copy", out=tmp_path / "copy.json")
    assert side.side and side.stored_task == "copy" and side.path == tmp_path / "copy.json"
