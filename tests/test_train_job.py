"""`dfst.train.job`: a `dfst train` command as one library call. Planning checks everything and writes
nothing; running gives the run the CLI gives; the task is resolved once and must match the config."""

from __future__ import annotations

import json

import pytest

from cli_helpers import TRAIN_ADD2, run_json
from dfst.errors import DfstError
from dfst.tasks import get_task
from dfst.train.job import plan_training, run_training
from dfst.train.loop import train

OPTIONS = {"samples": 6, "max_digits": 2, "eval_digits": (4,), "eval_random": 2, "iters": 4,
           "finetune": False}


def test_planning_checks_and_writes_nothing(tmp_path):
    job = plan_training("add2", tmp_path / "run", options=OPTIONS)
    assert not (tmp_path / "run").exists()
    assert (job.task.name, job.cfg.task, job.cfg.iters, job.max_rounds) == ("add2", "add2", 4, None)
    assert job.set_by["flags"]["samples"] == 6 and job.command.startswith("dfst train add2 --out")
    with pytest.raises(DfstError, match="--max-rounds must be >= 1"):
        plan_training("add2", tmp_path / "run", options=OPTIONS, max_rounds=0)
    with pytest.raises(DfstError, match="device"):
        plan_training("add2", tmp_path / "run", options=OPTIONS, device="tpu")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(DfstError, match="holds no dfst training run"):
        plan_training("add2", tmp_path / "mine", options=OPTIONS)
    assert not (tmp_path / "run").exists() and (tmp_path / "mine" / "notes.txt").read_text() == "mine"


def test_the_library_call_trains_the_run_the_cli_trains(capsys, tmp_path):
    summary = run_training(plan_training("add2", tmp_path / "lib", options=OPTIONS | {"seed": 3}))
    flags = ("--samples", "6", "--max-digits", "2", "--eval-digits", "4", "--eval-random", "2",
             "--iters", "4", "--no-finetune", "--seed", "3")
    cli = run_json(capsys, *TRAIN_ADD2, "--out", tmp_path / "cli", *flags)
    assert summary["final_loss"] == cli["final_loss"] and summary["iterations"] == 4
    weights = [(tmp_path / run / "model" / "model.safetensors").read_bytes() for run in ("lib", "cli")]
    assert weights[0] == weights[1]
    configs = [json.loads((tmp_path / run / "config.json").read_text())["train"] for run in ("lib", "cli")]
    assert configs[0] == configs[1]


def test_a_task_passed_down_must_be_the_configs(tmp_path):
    job = plan_training("add2", tmp_path / "run", options=OPTIONS)
    with pytest.raises(DfstError, match="trains task add2, not add10"):
        train(job.cfg, tmp_path / "run", task=get_task("add10"))
    assert not (tmp_path / "run").exists()
