"""Careless sizes refused before their work (issue 36, items 5, 6 and part of 10): sweep cells and
reproduce seeds, --workers, train's --max-digits and --d, coverage's --samples, --pool and --minimal,
datasets dfst could not read back, a diverged run, and the library experiment's --epochs and --out.

Each refusal is one line and exit code 2; the work it would have started is replaced by a failure,
so that a test never starts it on a dfst without the check."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import dfst.train
from cli_helpers import assert_one_line_error, run
from dfst.io.limits import WORK_CAPS
from dfst.tasks import TASKS
from dfst.tasks.budget import RECORD_BYTES
from dfst.train.budget import estimate_training
from dfst.train.recipes import RECIPES

DOC = Path(__file__).resolve().parents[1] / "docs" / "safety.md"


def must_not_run(monkeypatch, target: str) -> None:
    """`target` (module.attribute) fails the test if called: the work a refusal must prevent."""
    monkeypatch.setattr(target, lambda *a, **k: pytest.fail(f"{target} ran: nothing refused it"))


# --- counts of work: cells, seeds, workers (item 5) ----------------------------------------------

def test_a_sweep_over_the_cell_cap_is_refused_before_any_directory(capsys, monkeypatch, tmp_path):
    spec = tmp_path / "big.toml"
    spec.write_text('tasks = ["add2"]\nseeds = 1000000000\n')
    must_not_run(monkeypatch, "dfst.studies.sweep.run_sweep")
    code, _, err = run(capsys, "sweep", spec, "--results", tmp_path / "res", "--runs", tmp_path / "runs")
    assert_one_line_error(code, err, "1,000,000,000 training runs", "cap of 10,000", "DFST_MAX_CELLS")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.toml"]


def test_the_cell_cap_counts_the_grid_and_is_raised_by_its_variable(capsys, monkeypatch, tmp_path):
    spec = tmp_path / "grid.toml"
    spec.write_text('tasks = ["add2"]\nseeds = 2\n[grid]\nnoise = [0.0, 0.01]\nlr = [0.01, 0.02]\n')
    monkeypatch.setenv("DFST_MAX_CELLS", "7")
    must_not_run(monkeypatch, "dfst.studies.sweep.run_sweep")
    code, _, err = run(capsys, "sweep", spec, "--results", tmp_path / "res")
    assert_one_line_error(code, err, "1 x 4 x 2 (tasks x grid points x seeds)", "8 training runs")
    monkeypatch.setenv("DFST_MAX_CELLS", "8")
    with pytest.raises(pytest.fail.Exception, match="run_sweep ran"):
        run(capsys, "sweep", spec, "--results", tmp_path / "res")


def test_a_sweep_cell_over_the_memory_bound_is_refused_before_any_directory(capsys, monkeypatch, tmp_path):
    spec = tmp_path / "wide.toml"
    spec.write_text('tasks = ["add2"]\n[fixed]\nd = 100000\n')
    must_not_run(monkeypatch, "dfst.studies.sweep.run_sweep")
    code, _, err = run(capsys, "sweep", spec, "--results", tmp_path / "res")
    assert_one_line_error(code, err, "d=100000", "weights", "over --max-memory")


def test_reproduce_seeds_over_the_cell_cap(capsys, monkeypatch, tmp_path):
    must_not_run(monkeypatch, "dfst.studies.reproduce.reproduce")
    for args in (("--seeds", "1000000000"), ("--tasks", "add2:0-1000000000")):
        code, _, err = run(capsys, "reproduce", "--tasks", "add2", *args, "--results", tmp_path / "r")
        assert_one_line_error(code, err, "training runs", "DFST_MAX_CELLS")


def test_mutation_workers_over_the_cap(capsys, monkeypatch):
    monkeypatch.setenv("DFST_MAX_WORKERS", "2")
    must_not_run(monkeypatch, "dfst.studies.mutations._judged")  # where the processes would start
    code, _, err = run(capsys, "bench", "mutations", "parity2", "--workers", "10000")
    assert_one_line_error(code, err, "--workers 10000", "10,000 processes", "cap of 2", "DFST_MAX_WORKERS")


def test_the_default_workers_cap_is_per_cpu(monkeypatch):
    import os

    from dfst.io.limits import WORKERS_PER_CPU, DfstError
    from dfst.studies.executors import check_workers

    monkeypatch.delenv("DFST_MAX_WORKERS", raising=False)
    limit = WORKERS_PER_CPU * (os.cpu_count() or 1)
    assert check_workers(limit) == limit
    with pytest.raises(DfstError, match=f"cap of {limit:,}"):
        check_workers(limit + 1)
    monkeypatch.setenv("DFST_MAX_WORKERS", "many")
    with pytest.raises(DfstError, match="DFST_MAX_WORKERS 'many' is not a count"):
        check_workers(1)


# --- train: --max-digits and --d in the estimate (item 5) ---------------------------------------

@pytest.mark.parametrize("args, fragments", [
    (("--samples", "5", "--max-digits", "1000000"), ("5 PTOs of up to 1,000,000 digits",)),
    (("--samples", "5", "--max-digits", "1000000", "--sampler", "uniform"),
     ("activations", "over --max-memory")),
    (("--d", "100000",), ("d=100,000", "weights", "over --max-memory")),
])
def test_train_estimates_digits_and_d_before_any_work(capsys, monkeypatch, tmp_path, args, fragments):
    must_not_run(monkeypatch, "dfst.train.train")
    code, _, err = run(capsys, "train", "add2", "--out", tmp_path / "run", *args)
    assert_one_line_error(code, err, *fragments)
    assert not (tmp_path / "run").exists()


def test_the_training_estimate_grows_with_digits_d_and_restarts():
    task, cfg = TASKS["add2"], RECIPES["add2"]
    base = estimate_training(task, cfg).bytes
    for change in ({"max_digits": 30}, {"d": 40}, {"restarts": 64}, {"samples": 200}):
        assert estimate_training(task, replace(cfg, **change)).bytes > base, change
    wide = estimate_training(task, replace(cfg, d=1000))
    assert wide.parts["weights"] >= 16 * 4 * 3 * 1000 * 1000  # A alone is k·d·d floats per restart


@pytest.mark.parametrize("name", ["add2", "div10x1", "sort2"])
def test_the_training_estimate_holds_the_validation_ptos_when_d_comes_from_the_data(name):
    from dfst.train.validation import validation_set

    task, cfg = TASKS[name], RECIPES[name]
    held = estimate_training(task, cfg).parts["validation"]
    recorded = validation_set(task, cfg.max_digits, seed=0)
    assert 0 < RECORD_BYTES * len(recorded.reads) <= held  # a bound on what training records
    assert estimate_training(task, replace(cfg, d=9)).parts["validation"] == 0  # d given: none recorded
    longer = estimate_training(task, replace(cfg, max_digits=cfg.max_digits * 100)).parts["validation"]
    assert longer > 10 * held  # a user's long --data makes long validation PTOs


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_fits_the_default_bound(name):
    """The recipes themselves are never refused on a machine of 8 GiB (half of it the bound)."""
    estimate = estimate_training(TASKS[name], RECIPES[name], d=64)  # above any expert's 54 states
    assert estimate.bytes < 4 << 30 and estimate.replays < WORK_CAPS["replay_steps"][1]


# --- coverage: --samples, --pool, --minimal (item 5) --------------------------------------------

@pytest.mark.parametrize("args, fragments", [
    (("add2", "--samples", "1000000000", "--max-digits", "3"),
     ("1,000,000,000 instances", "simulator steps")),
    (("add2", "--minimal", "--max-digits", "40", "--pool", "1000000000"), ("pool of 1,000,000,000",)),
    (("mult10", "--minimal", "--max-digits", "50"), ("--minimal", "DFST_MAX_REPLAY_STEPS")),
    (("add2", "--samples", "5", "--max-digits", "1000000000"), ("1,000,000,000 digits",)),
])
def test_coverage_work_is_estimated_before_any_instance(capsys, monkeypatch, args, fragments):
    must_not_run(monkeypatch, "dfst.data.samplers.sampled_instances")
    must_not_run(monkeypatch, "dfst.data.cover_search.minimal_report")
    code, _, err = run(capsys, "coverage", *args)
    assert_one_line_error(code, err, *fragments)


def test_coverage_memory_bound(capsys, monkeypatch):
    must_not_run(monkeypatch, "dfst.data.samplers.sampled_instances")
    code, _, err = run(capsys, "coverage", "add2", "--samples", "1000", "--max-digits", "3",
                       "--max-memory", "1K")
    assert_one_line_error(code, err, "needs about", "over --max-memory 1.0 KiB")


# --- datasets: the writer agrees with the reader (item 6) ---------------------------------------

def _units(text: str) -> float:
    number, unit = text.split()
    return float(number.replace(",", "")) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def test_a_dataset_over_the_inflated_cap_is_not_written(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DFST_MAX_DATASET_INFLATED", "4K")
    out = tmp_path / "big.pto.zip"
    code, _, err = run(capsys, "data", "add2", "--samples", "20", "--max-digits", "40", "--out", out)
    assert_one_line_error(code, err, "not written", "DFST_MAX_DATASET_INFLATED")
    assert not out.exists()


def test_the_inflated_cap_message_compares_the_total(capsys, monkeypatch, tmp_path):
    out = tmp_path / "d.pto.zip"
    assert run(capsys, "data", "add2", "--samples", "20", "--max-digits", "40", "--out", out)[0] == 0
    monkeypatch.setenv("DFST_MAX_DATASET_INFLATED", "4K")
    code, _, err = run(capsys, "data", "--inspect", out)
    assert_one_line_error(code, err, "for all members together", "DFST_MAX_DATASET_INFLATED")
    found, cap = re.search(r"to ([\d.,]+ \w+) or more in all, over the cap of ([\d.,]+ \w+)", err).groups()
    assert _units(found) > _units(cap) == 4096


def test_very_long_runs_give_a_dataset_dfst_reads_back(capsys, tmp_path):
    """The moves of long add2 runs deflate over 400x, the readers' zip-bomb ratio: stored instead."""
    import zipfile

    out = tmp_path / "long.pto.zip"
    args = ("--samples", "2", "--min-digits", "300000", "--max-digits", "300000")
    assert run(capsys, "data", "add2", *args, "--out", out, "--json")[0] == 0
    with zipfile.ZipFile(out) as zf:
        moves = zf.getinfo("moves.npy")
        assert moves.file_size > 1 << 20 and moves.compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("reads.npy").compress_type == zipfile.ZIP_DEFLATED
    code, stdout, err = run(capsys, "data", "--inspect", out, "--json")
    assert code == 0, err
    assert json.loads(stdout)["samples"] == 2


# --- train --lr 1e30: stops, not fine-tuned, exit code 2 (item 6) -------------------------------

def test_a_diverged_run_is_not_fine_tuned_and_exits_2(capsys, monkeypatch, tmp_path):
    must_not_run(monkeypatch, "dfst.train.tuning.finetune_phase")
    out = tmp_path / "run"
    args = ("train", "add2", "--out", out, "--lr", "1e30", "--restarts", "2", "--iters", "30")
    code, _, err = run(capsys, *args)
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("dfst: error: training diverged") and "--lr" in last and "not fine-tuned" in last
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"] == "diverged" and "finetune" not in summary
    code, _, err = run(capsys, *args)  # resumed: the same verdict, still not fine-tuned
    assert code == 2 and "training diverged" in err


def test_a_diverged_library_run_skips_fine_tuning(monkeypatch, tmp_path):
    must_not_run(monkeypatch, "dfst.train.tuning.finetune_phase")
    cfg = replace(RECIPES["add2"], lr=1e30, restarts=1, iters=20, init="random")
    assert dfst.train.train(cfg, tmp_path / "run", command="test")["stopped_by"] == "diverged"


# --- the messages of item 10 --------------------------------------------------------------------

def test_a_task_without_a_recipe_says_whose_it_runs():
    from dfst.cli.training import _sources

    set_by = {"recipe": {"add2": {"finetune": True}}}
    assert _sources(set_by, "add2") == [("add2's recipe", {"finetune": True})]
    general = {"recipe": {"general recipe": {"finetune": True}}}
    assert _sources(general, "or2") == [("or2 has no recipe of its own: the general recipe",
                                         {"finetune": True})]


@pytest.mark.parametrize("epochs", ["0", "-2"])
def test_library_experiment_refuses_no_epochs(capsys, tmp_path, epochs):
    for name in ("depth", "ops", "llm"):
        code, _, err = run(capsys, "library", "experiment", name, "--epochs", epochs, "--out", tmp_path / "o")
        assert_one_line_error(code, err, "--epochs")
    assert not (tmp_path / "o").exists()


def test_library_experiment_creates_its_out_directory(capsys, tmp_path):
    out = tmp_path / "new" / "dir"
    code, stdout, err = run(capsys, "library", "experiment", "depth", "--base", "16", "--depths", "1",
                            "--epochs", "1", "--train-samples", "16", "--test-samples", "16",
                            "--out", out, "--plot", tmp_path / "depth.png")
    assert code == 0, err
    assert (out / "depth_b16.json").exists()
    assert "None" not in stdout and "no seed figure" in stdout  # the seed's table has bases 128 and 256


# --- the caps are documented --------------------------------------------------------------------

def test_every_work_cap_is_documented():
    text = DOC.read_text()
    for variable, default, _, _ in WORK_CAPS.values():
        assert f"`{variable}`" in text
        if default is not None:
            assert f"{default:,}" in text


def test_a_library_experiment_leaves_torchs_global_settings_as_it_found_them(capsys, tmp_path):
    import numpy as np
    import torch

    threads = torch.get_num_threads()
    code, _, err = run(capsys, "library", "experiment", "depth", "--base", "16", "--depths", "1",
                       "--epochs", "1", "--train-samples", "8", "--test-samples", "8",
                       "--out", tmp_path / "o", "--plot", tmp_path / "depth.png")
    assert code == 0, err
    assert torch.get_num_threads() == threads
    tiny = torch.tensor([np.finfo(np.float32).tiny], dtype=torch.float32) / 4  # a subnormal
    assert tiny.item() > 0  # not flushed to zero


@pytest.mark.parametrize("argv,fragment", [
    (("bench", "rollout", "--digits", "100000000000"), "--digits 100,000,000,000 needs about"),
    (("bench", "learnability", "--agents", "100000000"), "plans 1,200,000,000 training runs, over the cap"),
])
def test_benches_estimate_their_work_before_it_starts(capsys, tmp_path, argv, fragment):
    code, _, err = run(capsys, *argv, *(("--out", tmp_path / "l") if "learnability" in argv else ()))
    assert_one_line_error(code, err, fragment)
    assert not (tmp_path / "l").exists()
