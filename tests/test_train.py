"""The training loop: the loss formula, determinism, bit-identical resume, metrics, early stop, run files."""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

import dfst.train.loop
from dfst.data import cover_dataset, record_dataset
from dfst.errors import DfstError
from dfst.model import DFST, FORWARDS, INITS, DFSTConfig
from dfst.model.checkpoint import load_checkpoint
from dfst.tasks import get_task
from dfst.train import TrainConfig, lr_at, train
from dfst.train.batches import Sequences, batch_rows
from dfst.train.dsize import GROWTH
from dfst.train.objectives import ce_loss, mse_loss, noise_at
from dfst.train.objectives import scores as teacher_forced
from dfst.train.rundir import read_metrics

# Small and fast, with everything that draws randomness or carries state switched on.
TINY = TrainConfig(samples=6, max_digits=2, iters=30, noise=0.05, l1=1e-5, batch=4, eval_every=10,
                   eval_digits=(4,), eval_random=2, checkpoint_every=10, log_every=5, restarts=2,
                   d=5)  # one size: 30 iterations find no automaton that passes validation


def weights(out) -> dict[str, torch.Tensor]:
    model, _ = load_checkpoint(out / "model")
    return {name: getattr(model, name).detach() for name in ("A", "B", "C", "h0")}


def assert_same_weights(out_a, out_b) -> None:
    a, b = weights(out_a), weights(out_b)
    assert all(torch.equal(a[name], b[name]) for name in a), "weights differ"


def without_time(record):
    """The record with every "seconds" entry removed, at any depth."""
    if isinstance(record, list):
        return [without_time(r) for r in record]
    if isinstance(record, dict):
        return {k: without_time(v) for k, v in record.items() if k != "seconds"}
    return record


def test_schedules_are_pure_functions_of_the_step():
    cfg = TrainConfig(lr=0.1, iters=100)
    assert lr_at(0, cfg) == pytest.approx(0.1) and lr_at(50, cfg) == pytest.approx(0.05)
    assert all(lr_at(s, cfg) > lr_at(s + 1, cfg) > 0 for s in range(99))
    assert lr_at(7, TrainConfig(lr=0.1, schedule="constant")) == 0.1
    annealed = TrainConfig(iters=11, noise=0.1, noise_final=0.0)
    assert noise_at(0, annealed) == 0.1 and noise_at(10, annealed) == 0.0
    assert noise_at(5, annealed) == pytest.approx(0.05) and noise_at(5, TrainConfig(noise=0.2)) == 0.2


@pytest.mark.parametrize(("field", "value", "message"), [
    ("task", "add5", "unknown task"), ("samples", 0, "samples"), ("iters", 0, "iters"),
    ("lr", 0.0, "lr"), ("lr", math.nan, "lr"), ("noise", -0.1, "noise"), ("l1", math.inf, "l1"),
    ("loss", "hinge", "unknown loss"), ("init", "zeros", "unknown init"),
    ("sampler", "all", "unknown sampler"),
    ("schedule", "step", "unknown schedule"), ("forward", "fft", "unknown forward"), ("d", 0, "d"),
    ("batch", -1, "batch"), ("eval_digits", (), "eval_digits"), ("threads", 0, "threads"),
    ("samples", True, "samples"),
])
def test_config_rejects_bad_values(field, value, message):
    with pytest.raises(DfstError, match=message):
        TrainConfig(**{field: value})


def test_mse_loss_by_hand():
    """Two sequences, the second one step long: only real steps count, each weighing 1/(2T), T = 3."""
    symbol_scores = torch.tensor([[[1.0, 0.0], [0.5, 0.5]], [[0.0, 2.0], [9.0, 9.0]]])  # (2, 2, k=2)
    move_scores = torch.zeros(2, 2, 5)
    move_scores[0, 0, 4] = 1.0
    writes = torch.tensor([[0, 1], [0, 0]])
    moves = torch.tensor([[4, 3], [0, 0]])
    mask = torch.tensor([[True, True], [True, False]])
    # step (0,0): symbols exact, move exact -> 0
    # step (0,1): symbols (0.5, 0.5) vs (0, 1) -> 0.5; move 0 vs onehot(3) -> 1; total 1.5
    # step (1,0): symbols (0, 2) vs (1, 0) -> 5; move 0 vs onehot(0) -> 1; total 6
    expected = (0 + 1.5 + 6) / (2 * 3)
    assert mse_loss(symbol_scores, move_scores, writes, moves, mask).item() == pytest.approx(expected)


def test_ce_loss_is_the_mean_cross_entropy_over_real_steps():
    g = torch.Generator().manual_seed(0)
    s, m = torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 5, generator=g)
    writes, moves = torch.randint(0, 4, (2, 3), generator=g), torch.randint(0, 5, (2, 3), generator=g)
    mask = torch.tensor([[True, True, True], [True, False, False]])
    expected = (F.cross_entropy(s[mask], writes[mask]) + F.cross_entropy(m[mask], moves[mask])) / 2
    torch.testing.assert_close(ce_loss(s, m, writes, moves, mask), expected)


@pytest.mark.parametrize("forward", FORWARDS)
def test_teacher_forced_scores_are_the_models(forward):
    """On real steps the training forward gives DFST.forward's scores (the model's own loop)."""
    task = get_task("add2")
    seqs = Sequences.of(record_dataset(task, 5, 3, seed=1))
    reads, _, _, mask = seqs.batch(None)
    g = torch.Generator().manual_seed(2)
    model = DFST.from_weights(torch.eye(9) + 0.1 * torch.randn(3, 9, 9, generator=g),
                              torch.randn(3, 3, 9, generator=g), torch.randn(3, 5, 9, generator=g),
                              torch.randn(9, generator=g))
    symbol_scores, move_scores, _ = teacher_forced(model, reads, mask, None,
                                                   TrainConfig(forward=forward, normalize_h=False))
    want_symbols, want_moves = model(reads)
    torch.testing.assert_close(symbol_scores[mask], want_symbols[mask])
    torch.testing.assert_close(move_scores[mask], want_moves[mask])


def test_minibatches_depend_on_seed_and_iteration_only():
    assert batch_rows(0, 5, 0, 10) is None and batch_rows(0, 5, 10, 10) is None
    assert torch.equal(batch_rows(3, 7, 4, 10), batch_rows(3, 7, 4, 10))
    assert not torch.equal(batch_rows(3, 7, 4, 10), batch_rows(3, 8, 4, 10))
    assert len(set(batch_rows(3, 7, 4, 10).tolist())) == 4


def test_cover_sampler_exercises_every_rule():
    from dfst.data.coverage import coverage
    from dfst.tasks import Instance

    task = get_task("add2")
    ds = cover_dataset(task, 20, 3, seed=0)
    assert ds.samples == 20 and ds.sampling["rule"] == "cover"
    _, missing = coverage(task, [Instance(a, b) for a, b in ds.operands])
    assert not missing


def test_same_seed_same_weights_and_another_seed_differs(tmp_path):
    train(TINY, tmp_path / "a", command="test")
    train(TINY, tmp_path / "b", command="test")
    assert_same_weights(tmp_path / "a", tmp_path / "b")
    train(replace(TINY, seed=1), tmp_path / "c", command="test")
    assert not torch.equal(weights(tmp_path / "a")["A"], weights(tmp_path / "c")["A"])


class Interrupt(Exception):
    pass


def interrupt_at(iteration: int):
    def progress(record: dict) -> None:
        if record["iteration"] == iteration:
            raise Interrupt
    return progress


@pytest.mark.parametrize("cfg", [TINY, replace(TINY, batch=0, forward="loop",
                                                      normalize_h=True, loss="ce", init="random"),
                                 replace(TINY, engine="fused", threads=2, discrete=0.1)],
                         ids=["minibatch-noise-l1", "fullbatch-normalized-ce-random", "fused-vertex"])
def test_interrupted_run_resumes_bit_identically(tmp_path, cfg):
    whole = train(cfg, tmp_path / "whole", command="test")
    with pytest.raises(Interrupt):  # dies after the checkpoint at 20, having logged up to 25
        train(cfg, tmp_path / "cut", command="test", progress=interrupt_at(25))
    assert not (tmp_path / "cut" / "summary.json").exists()
    resumed = train(cfg, tmp_path / "cut", command="test")
    assert resumed["resumed_from"] == 20 and whole["resumed_from"] is None
    assert resumed["iterations"] == whole["iterations"] == 30
    assert_same_weights(tmp_path / "whole", tmp_path / "cut")
    assert resumed["final_loss"] == whole["final_loss"]
    # the log of the resumed run is the uninterrupted log: records after the checkpoint were redone once
    assert without_time(read_metrics(tmp_path / "cut" / "metrics.jsonl")) == \
        without_time(read_metrics(tmp_path / "whole" / "metrics.jsonl"))


def test_cpu_seconds_add_up_over_a_resume(tmp_path, monkeypatch):
    readings = itertools.count(0, 1000)  # the cut segment: every reading of the clock 1000 s later
    monkeypatch.setattr(time, "process_time", lambda: next(readings))
    with pytest.raises(Interrupt):
        train(TINY, tmp_path / "cut", command="test", progress=interrupt_at(25))
    monkeypatch.setattr(time, "process_time", lambda: 5.0)  # the resumed segment costs nothing
    resumed = train(TINY, tmp_path / "cut", command="test")
    assert resumed["resumed_from"] == 20 and resumed["cpu_seconds"] >= 1000


def test_metrics_hold_losses_and_evaluations(tmp_path):
    summary = train(TINY, tmp_path / "run", command="dfst train add2 ...")
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["iteration"] for r in records] == [5, 10, 15, 20, 25, 30]
    evals = [r for r in records if "eval" in r]
    assert [r["iteration"] for r in evals] == [10, 20, 30]
    for r in evals:
        [level] = r["eval"]["levels"]
        assert level["digits"] == 4 and level["random"] == 2 and level["instances"] > 2
        assert isinstance(level["robust"], bool)
    assert all(r["loss"] > 0 and r["lr"] > 0 and r["noise"] == 0.05 for r in records)
    assert summary["eval"] == evals[-1]["eval"] and summary["stopped_by"] == "iters"
    run = json.loads((tmp_path / "run" / "config.json").read_text())
    assert run["train"]["noise"] == 0.05 and run["command"] == "dfst train add2 ..."
    assert run["data"]["summary"]["samples"] == 6


def test_final_checkpoint_has_provenance(tmp_path):
    summary = train(TINY, tmp_path / "run", command="test")
    model, config = load_checkpoint(tmp_path / "run" / "model", expect_task="add2")
    assert (model.config.k, model.config.d) == (3, summary["d"])
    prov = config["provenance"]
    assert prov["source"] == "train" and prov["iterations"] == 30 and prov["train_config"]["lr"] == TINY.lr
    assert prov["data"]["summary"]["task"] == "add2" and math.isfinite(prov["final_loss"])


def test_early_stop_once_robust_at_the_target(tmp_path, monkeypatch):
    calls = []

    def robust_everywhere(model, task, cfg, data=None):
        calls.append(cfg.target_digits)
        return {"robust_max_digits": 50, "probabilistic_max_digits": 50, "seconds": 0.0,
                "levels": [{"digits": 50, "robust": True, "exact": 1, "instances": 1, "random_exact": 1,
                            "random": 1}]}

    monkeypatch.setattr(dfst.train.loop, "evaluate_model", robust_everywhere)
    cfg = replace(TINY, target_digits=50, eval_every=7, d=9)  # d given: one size, however few iterations
    summary = train(cfg, tmp_path / "run", command="test")
    assert summary["stopped_by"] == "target" and summary["iterations"] == 7 and calls == [50]
    assert read_metrics(tmp_path / "run" / "metrics.jsonl")[-1]["iteration"] == 7
    assert train(cfg, tmp_path / "run", command="test") == summary  # finished: nothing more to do


def test_target_length_is_evaluated(tmp_path):
    cfg = replace(TINY, iters=5, eval_every=5, target_digits=7)
    summary = train(cfg, tmp_path / "run", command="test")
    assert [lv["digits"] for lv in summary["eval"]["levels"]] == [4, 7]


def test_divergence_stops_with_the_last_finite_weights(tmp_path):
    cfg = replace(TINY, lr=1e30, batch=0, init="random")
    summary = train(cfg, tmp_path / "run", command="test")
    assert summary["stopped_by"] == "diverged" and summary["iterations"] < 30
    load_checkpoint(tmp_path / "run" / "model")  # finite, or loading would fail


def test_resume_refuses_another_config_or_data(tmp_path):
    train(TINY, tmp_path / "run", command="test")
    with pytest.raises(DfstError, match="lr=0.02, not 0.05"):
        train(replace(TINY, lr=0.05), tmp_path / "run", command="test")
    other = record_dataset(get_task("add2"), 6, 2, seed=5)
    with pytest.raises(DfstError, match="different training data"):
        train(TINY, tmp_path / "run", data=other, command="test")
    fresh = train(replace(TINY, lr=0.05), tmp_path / "run", resume=False, command="t")
    assert fresh["iterations"] == 30 and fresh["resumed_from"] is None


def test_given_data_is_used_and_checked(tmp_path):
    data = record_dataset(get_task("add2"), 4, 2, seed=3)
    summary = train(TINY, tmp_path / "run", data=data, command="test")
    assert summary["samples"] == 4
    with pytest.raises(DfstError, match="for task add10"):
        train(TINY, tmp_path / "other", data=record_dataset(get_task("add10"), 2, 2, seed=0), command="t")


def test_refuses_a_directory_that_is_not_a_run(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(DfstError, match="not empty"):
        train(TINY, tmp_path, command="test")
    with pytest.raises(DfstError, match="not a directory"):
        train(TINY, tmp_path / "notes.txt", command="test")


def test_damaged_state_is_a_one_line_error(tmp_path):
    with pytest.raises(Interrupt):
        train(TINY, tmp_path / "run", command="test", progress=interrupt_at(12))
    (tmp_path / "run" / "train_state.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{garbage")
    with pytest.raises(DfstError, match="damaged") as info:
        train(TINY, tmp_path / "run", command="test")
    assert "\n" not in str(info.value)


def test_train_restores_torch_settings(tmp_path):
    threads = torch.get_num_threads()
    train(replace(TINY, iters=2, threads=1), tmp_path / "run", command="test")
    assert torch.get_num_threads() == threads and not torch.are_deterministic_algorithms_enabled()


def test_random_init_is_seeded():
    a, b = (INITS["random"](DFSTConfig(3, 4), seed) for seed in (0, 0))
    assert torch.equal(a.A, b.A) and not torch.equal(a.A, INITS["random"](DFSTConfig(3, 4), 1).A)


def test_vertex_penalty_is_zero_on_corners_and_positive_off_them():
    from dfst.train.objectives import vertex_penalty

    corners = torch.eye(4)[None, [0, 2, 1]]  # (1, 3, 4) one-hot states
    mask = torch.ones(1, 3, dtype=torch.bool)
    assert vertex_penalty(corners, mask).item() == 0.0
    blurred = corners * 0.9 + 0.025
    # per step: (0.925 - 1)² on the hot coordinate + 3 × 0.025² on the others
    assert vertex_penalty(blurred, mask).item() == pytest.approx(0.075**2 + 3 * 0.025**2)
    mask[0, 1:] = False  # padded steps do not count
    first_only = vertex_penalty(blurred[:, :1], mask[:, :1]).item()
    assert vertex_penalty(blurred, mask).item() == pytest.approx(first_only)


def test_jitter_init_is_the_published_init_plus_small_seeded_noise():
    config = DFSTConfig(3, 9, "add2")
    a, b, base = INITS["jitter"](config, 1), INITS["jitter"](config, 1), INITS["identity"](config, 1)
    assert torch.equal(a.A, b.A) and not torch.equal(a.A, INITS["jitter"](config, 2).A)
    assert 0 < (a.A - base.A).abs().max() < 0.1 and torch.equal(a.h0, base.h0)


def test_extract_option_evaluates_the_read_off_automaton(tmp_path):
    from dfst.train.evaluation import best_robust

    cfg = TrainConfig(iters=4, eval_every=2, eval_digits=(2,), eval_random=2, noise=0.05, extract=True,
                      log_every=1)
    summary = train(cfg, tmp_path / "run", command="test")
    evaluation = summary["eval"]
    assert "extracted" in evaluation  # None when no conflict-free automaton could be read yet
    if evaluation["extracted"] is not None:
        assert evaluation["extracted"]["levels"][0]["digits"] == 2
    assert best_robust(evaluation) >= evaluation["robust_max_digits"]
    assert best_robust({"robust_max_digits": 3, "extracted": {"robust_max_digits": 50}}) == 50


def test_the_final_evaluations_selection_is_kept_not_redone(tmp_path, monkeypatch):
    calls = []
    select = dfst.train.loop.select_restart
    monkeypatch.setattr(dfst.train.loop, "select_restart", lambda *a: calls.append(1) or select(*a))
    summary = train(TINY, tmp_path / "run", command="test")
    assert len(calls) == 1  # at the last evaluation (30) only: 10 and 20 follow the lowest loss; none after
    assert summary["restarts"]["chosen"] == summary["eval"]["restart"]


def test_periodic_evaluation_changes_no_weight_and_selects_once(tmp_path):
    """Evaluating every 10 iterations (the lowest-loss restart; the kept one selected at the end) gives
    the weights and the kept restart of a run that never evaluates on the way."""
    from safetensors.torch import load_file

    watched = train(TINY, tmp_path / "watched", command="test")
    quiet = train(replace(TINY, eval_every=0), tmp_path / "quiet", command="test")
    def timeless(record):
        if isinstance(record, dict):
            return {k: timeless(v) for k, v in record.items() if k != "seconds"}
        return [timeless(v) for v in record] if isinstance(record, list) else record
    assert watched["restarts"] == quiet["restarts"] and timeless(watched["eval"]) == timeless(quiet["eval"])
    got, want = (load_file(tmp_path / run / "model" / "model.safetensors") for run in ("watched", "quiet"))
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)


def test_a_run_that_grows_d_resumes_bit_identically(tmp_path, monkeypatch):
    """d from the PTOs: the first size reads no automaton off (made so here), so training starts over
    at d x 1.5; a kill during the second size resumes there, ending on the uninterrupted run's weights."""
    real = dfst.train.loop._save_extraction
    first = []

    def none_at_the_first_size(out, model, task, data, validation):
        first.append(first[0] if first else model.config.d)
        return None if model.config.d == first[0] else real(out, model, task, data, None)  # validated
    monkeypatch.setattr(dfst.train.loop, "_save_extraction", none_at_the_first_size)
    cfg = replace(TINY, iters=20, d=None)
    whole = train(cfg, tmp_path / "whole", command="test")
    assert [t["d"] for t in whole["tried"]] == [first[0]] and whole["d"] == math.ceil(first[0] * GROWTH)
    assert json.loads((tmp_path / "whole" / "config.json").read_text())["model"]["tried"] == whole["tried"]
    calls = []

    def cut_in_the_second_size(record: dict) -> None:
        calls.append(record["iteration"])
        if len(calls) == cfg.iters + 15:  # after the second size's checkpoint at 10
            raise Interrupt
    with pytest.raises(Interrupt):
        train(cfg, tmp_path / "cut", command="test", progress=cut_in_the_second_size)
    resumed = train(cfg, tmp_path / "cut", command="test")
    assert resumed["resumed_from"] == 10 and resumed["d"] == whole["d"]
    assert [t["d"] for t in resumed["tried"]] == [t["d"] for t in whole["tried"]]
    assert_same_weights(tmp_path / "whole", tmp_path / "cut")
