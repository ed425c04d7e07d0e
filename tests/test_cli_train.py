"""`dfst train`: the run it writes, defaults shared with TrainConfig, one-line errors, and resuming
after a real kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json, training_code
from dfst.model.checkpoint import load_checkpoint
from dfst.train import TrainConfig
from dfst.train.budget import model_params
from dfst.train.rundir import read_metrics

FAST = ("--samples", "6", "--max-digits", "2", "--eval-digits", "4", "--eval-random", "2")


def test_train_writes_a_run(capsys, tmp_path):
    out = tmp_path / "run"
    summary = run_json(capsys, *TRAIN_ADD2, "--out", out, *FAST, "--iters", "20", "--eval-every", "10",
                       "--noise", "0.05")
    assert summary["iterations"] == 20 and summary["stopped_by"] == "iters"
    assert summary["k"] == 3 and summary["params"] == model_params(3, summary["d"])  # d: from the PTOs
    assert {p.name for p in out.iterdir()} >= {"config.json", "data.pto.zip", "metrics.jsonl", "model",
                                               "train_state.safetensors", "summary.json"}
    assert [r["iteration"] for r in read_metrics(out / "metrics.jsonl") if "eval" in r] == [10, 20]
    config = json.loads((out / "config.json").read_text())
    assert config["command"].startswith("dfst train add2 --out") and "--noise 0.05" in config["command"]
    load_checkpoint(out / "model", expect_task="add2")
    code, text, _ = run(capsys, *TRAIN_ADD2, "--out", tmp_path / "again", *FAST, "--iters", "3")
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert "add2 training run" in text and "stopped by" in text
    # 3 iterations find no automaton that reproduces longer PTOs: the last line says the traces were
    # not enough and where the automaton departs; the exit code is 1
    found = again["agreement"]
    assert code == training_code(again) == 1 and not found["agreed"]
    last = " ".join(" ".join(text.strip().splitlines()[-6:]).split())
    departs = found["departs"]
    where = ("no automaton read off explains" if departs is None else
             f"the automaton read off departs from the expert on {departs['a']}, {departs['b']} after")
    assert last.count(f"NOT ENOUGH DATA: {where}") == 1, last
    assert "of 1-5 digits held out" in last and "Try more iterations" in last  # short ones and longer
    # before it, a plain verdict on the model it wrote, the one its own check found
    levels = again["eval"]["levels"]
    verdict = " ".join(text[text.rindex("verdict: "):].split())
    if all(lv["robust"] for lv in levels):
        assert "model is exact on the run's own held-out check" in verdict
        assert "dfst certify" in verdict
    else:
        assert "model is NOT exact on the run's own held-out check" in verdict
        assert "Try: more samples" in verdict


def test_train_logs_progress_and_a_verdict_only_when_asked(capsys, caplog, tmp_path):
    """The Python train() reports what dfst train's bar shows, and the verdict, on the dfst.train
    logger: nothing on the terminal by default, INFO lines when the caller turns them on."""
    import logging

    from dfst.train import train

    cfg = TrainConfig(iters=4, samples=6, max_digits=2, eval_digits=(4,), eval_random=2, restarts=1,
                      log_every=2, finetune=False)
    train(cfg, tmp_path / "quiet")
    assert capsys.readouterr() == ("", "") and not caplog.records  # silent unless asked
    with caplog.at_level(logging.INFO, logger="dfst.train"):
        train(cfg, tmp_path / "told")
    *lines, verdict = [r.getMessage() for r in caplog.records if r.name == "dfst.train"]
    assert verdict.startswith("verdict: ") and "held-out check" in verdict
    regrown = [line for line in lines if line.startswith("d=")]  # a d too small for the PTOs: again
    lines = [line for line in lines if line not in regrown]
    assert all("training again with d=" in line for line in regrown)
    # every log_every-th iteration, with the evaluation at the end (again for each d the PTOs ask)
    assert lines and all(a.startswith("iter 2/4 loss ") and b.startswith("iter 4/4 loss ") and "eval 4:" in b
                         for a, b in zip(lines[::2], lines[1::2], strict=True))


def test_defaults_are_train_configs(capsys, tmp_path):
    summary = run_json(capsys, *TRAIN_ADD2, "--out", tmp_path / "run", "--iters", "2")
    saved = json.loads((tmp_path / "run" / "config.json").read_text())["train"]
    # add2's recipe is TrainConfig's defaults (eval_every too) but for its fine-tuning phase
    assert saved == TrainConfig(iters=2).to_dict()
    flags = {"iters": 2, "finetune": False}
    assert summary["set_by"] == {"recipe": {"add2": {"finetune": True}}, "flags": flags}


def test_data_file_replaces_sampling(capsys, tmp_path):
    data = tmp_path / "d.pto.zip"
    assert run(capsys, "data", "add2", "--samples", "3", "--max-digits", "2", "--out", data)[0] == 0
    summary = run_json(capsys, *TRAIN_ADD2, "--out", tmp_path / "run", "--data", data, "--iters", "3",
                       "--eval-digits", "4")
    assert summary["samples"] == 3
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["train"]["samples"] == 3 and f"--data {data}" in saved["command"]
    assert saved["train"]["sampler"] == "uniform"  # the file's rule, not the recipe's cover sampler
    assert summary["set_by"]["--data"] == {"samples": 3, "max_digits": 2, "sampler": "uniform"}


def test_finished_and_unfinished_runs_are_protected(capsys, tmp_path):
    out = tmp_path / "run"
    run_json(capsys, *TRAIN_ADD2, "--out", out, *FAST, "--iters", "3")
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", out, *FAST, "--iters", "3")[::2],
                          "finished run", "--force")
    again = run_json(capsys, *TRAIN_ADD2, "--out", out, *FAST, "--iters", "4", "--force")
    assert again["iterations"] == 4
    (out / "summary.json").unlink()  # as if the run had been interrupted
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", out, *FAST, "--iters", "4",
                               "--no-resume")[::2], "unfinished run")
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", out, *FAST, "--iters", "5")[::2],
                          "iters=4, not 5")


@pytest.mark.parametrize(("args", "fragments"), [
    (("add5",), ("unknown task", "add2")),
    (("add2", "--samples", "0"), ("samples",)),
    (("add2", "--max-digits", "0"), ("max_digits",)),
    (("add2", "--lr", "0"), ("lr",)),
    (("add2", "--loss", "hinge"), ("unknown loss", "mse")),
    (("add2", "--init", "zeros"), ("unknown init",)),
    (("add2", "--sampler", "all"), ("unknown sampler",)),
    (("add2", "--eval-digits", "ten"), ("--eval-digits",)),
    (("add2", "--eval-digits", "0"), ("eval_digits",)),
    (("add2", "--data", "missing.pto.zip"), ("missing.pto.zip", "does not exist")),
    (("add2", "--iters", "many"), ("--iters",)),
])
def test_bad_input_is_a_one_line_error(capsys, tmp_path, args, fragments):
    code, _, err = run(capsys, "train", *args, "--out", tmp_path / "run")
    assert_one_line_error(code, err, *fragments)
    assert not (tmp_path / "run").exists()


def test_bad_output_or_data_is_a_one_line_error(capsys, tmp_path):
    data = tmp_path / "add10.pto.zip"
    assert run(capsys, "data", "add10", "--samples", "2", "--out", data)[0] == 0
    code, _, err = run(capsys, *TRAIN_ADD2, "--data", data, "--out", tmp_path / "run")
    assert_one_line_error(code, err, "is for task add10, not add2")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", a_file)[::2], "not a directory")
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", a_file / "sub", *FAST, "--iters", "2")[::2],
                          "cannot create output directory")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", busy, *FAST, "--iters", "2",
                               "--force")[::2], "not empty", "no dfst training run")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_output_is_a_one_line_error(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    assert_one_line_error(*run(capsys, *TRAIN_ADD2, "--out", locked / "run")[::2], "not writable")


def state_iteration(path) -> int:
    """The iteration recorded in a training state file's header."""
    raw = path.read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    return json.loads(header["__metadata__"]["info"])["iteration"]


def test_resume_after_kill_9_is_bit_identical(capsys, tmp_path):
    """A real `dfst train` process killed with SIGKILL mid-run, resumed, ends with the weights of an
    uninterrupted run (minibatches, noise and L1 on, so every source of state and randomness counts)."""
    args = [*TRAIN_ADD2, *FAST, "--iters", "120", "--batch", "4", "--noise", "0.05", "--l1", "1e-5",
            "--checkpoint-every", "20", "--eval-every", "40", "--log-every", "10", "--d", "6",
            "--json"]  # one size of d: the kill lands in it (a grown d resumes too: test_train)
    killed = tmp_path / "killed"
    state = killed / "train_state.safetensors"
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from dfst.cli import main; "
                             "sys.exit(main(sys.argv[1:]))", *args, "--out", str(killed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not state.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    assert not (killed / "summary.json").exists()
    at_kill = state_iteration(state)
    assert 20 <= at_kill < 120

    resumed = run_json(capsys, *args[:-1], "--out", killed)
    whole = run_json(capsys, *args[:-1], "--out", tmp_path / "whole")
    assert resumed["resumed_from"] == at_kill and whole["resumed_from"] is None
    a, _ = load_checkpoint(killed / "model")
    b, _ = load_checkpoint(tmp_path / "whole" / "model")
    for name in ("A", "B", "C", "h0"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    strip = [{k: v for k, v in r.items() if k not in ("seconds", "eval")} for r in
             read_metrics(killed / "metrics.jsonl")]
    assert strip == [{k: v for k, v in r.items() if k not in ("seconds", "eval")} for r in
                     read_metrics(tmp_path / "whole" / "metrics.jsonl")]


def test_a_task_starts_from_its_recipe_and_given_flags_win(capsys, tmp_path):
    summary = run_json(capsys, "train", "mult2", "--out", tmp_path / "run", *FAST, "--iters", "2",
                       "--restarts", "1")
    saved = json.loads((tmp_path / "run" / "config.json").read_text())["train"]
    given = {"samples": 6, "max_digits": 2, "eval_digits": [4], "eval_random": 2, "iters": 2, "restarts": 1}
    recipe = {"batch": 64, "bucket": True, "noise": 0.01, "finetune": True}  # mult2's, not TrainConfig's
    assert {k: saved[k] for k in given} == given and {k: saved[k] for k in recipe} == recipe
    assert saved == TrainConfig(task="mult2", **recipe, **given).to_dict()  # the rest: TrainConfig's defaults
    mult2 = {"samples": 750, "max_digits": 5, "restarts": 4, **recipe}
    assert summary["set_by"]["recipe"] == {"mult2": mult2}
    assert summary["set_by"]["flags"] == given
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert "--sampler contexts" in config["command"] and "--noise 0.01" in config["command"]
    code, _, err = run(capsys, "train", "mult2", "--out", tmp_path / "text", *FAST, "--iters", "1")
    assert code == training_code(json.loads((tmp_path / "text" / "summary.json").read_text()))
    assert "mult2's recipe sets batch=64, bucket=True, noise=0.01, restarts=4" in err
    assert "finetune=True" in err
    assert "samples=750" not in err  # given on the command line: the flag, not the recipe



@pytest.mark.parametrize(("device", "message"),
                         [("tpu", "unknown device 'tpu'"), ("cuda:x", "unknown device")])
def test_an_unknown_device_is_one_line_before_any_file(capsys, tmp_path, device, message):
    code, _, err = run(capsys, *TRAIN_ADD2, "--out", tmp_path / "run", "--iters", "2", "--device", device)
    assert_one_line_error(code, err, message)
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_cuda_without_a_gpu_is_one_line_before_any_file(capsys, tmp_path):
    code, _, err = run(capsys, *TRAIN_ADD2, "--out", tmp_path / "run", "--iters", "2", "--device", "cuda")
    assert_one_line_error(code, err, "sees no CUDA device")
    assert not (tmp_path / "run").exists()


def test_minibatches_on_the_loops_device_are_the_cpus_rows(tmp_path):
    """The loop moves the sequences to its device; their batches (mask included) are the same rows."""
    from dfst.data import record_dataset
    from dfst.tasks import get_task
    from dfst.train.batches import Sequences, bucket_rows

    seqs = Sequences.of(record_dataset(get_task("mult2"), 12, 3, seed=0))
    moved = seqs.to(torch.device("cpu"))
    rows = bucket_rows(0, 1, 5, moved.lengths)
    for a, b in zip(seqs.batch(rows), moved.batch(rows), strict=True):
        assert torch.equal(a, b)
    assert int(moved.batch(rows)[3].sum()) == int(seqs.lengths[rows].sum())  # real steps only


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_training_fits_add2_as_the_cpu_does(capsys, tmp_path):
    """On a GPU: the same run on cuda and on the CPU ends near the same loss (not bit for bit)."""
    args = (*TRAIN_ADD2, *FAST, "--iters", "300")
    cpu = run_json(capsys, *args, "--out", tmp_path / "cpu")
    gpu = run_json(capsys, *args, "--out", tmp_path / "gpu", "--device", "cuda")
    assert abs(gpu["final_loss"] - cpu["final_loss"]) < 0.1 * cpu["final_loss"] + 1e-3
