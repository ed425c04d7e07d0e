"""The fused engine computes autograd's objective and gradient (within 1e-5 relative, on random
configurations of every task's shapes), reproduces a run bit for bit, resumes onto the weights of an
uninterrupted run, and steps aside for what it does not support."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
import torch

from dfst.model import DFSTConfig, Population, random_init, teacher_forced
from dfst.tasks import TASKS
from dfst.train import train
from dfst.train.config import TrainConfig
from dfst.train.fused import fused_objective, supports
from dfst.train.objectives import LOSSES, vertex_penalty

SHAPES = sorted({(len(t.alphabet), t.agent.d) for t in TASKS.values()})  # every task's (k, d)


def _batch(k: int, d: int, restarts: int, b: int, T: int, noise: bool, seed: int):
    g = torch.Generator().manual_seed(seed)
    model = Population([random_init(DFSTConfig(k, d, "x"), seed + r) for r in range(restarts)])
    reads, writes = (torch.randint(0, k, (b, T), generator=g) for _ in range(2))
    moves = torch.randint(0, 5, (b, T), generator=g)
    lengths = torch.randint(1, T + 1, (b,), generator=g)
    lengths[0] = T  # the batch is cut to its longest sample
    mask = torch.arange(T) < lengths[:, None]
    sigma = 0.1 * torch.randn(restarts, b, T, d, generator=g) if noise else None
    return model, reads, writes, moves, mask, sigma


def _autograd(model, reads, writes, moves, mask, noise, cfg, vertex):
    symbols, moves_out, h = teacher_forced(model, reads, mask, noise, normalize=cfg.normalize_h)
    losses = LOSSES[cfg.loss](symbols, moves_out, writes, moves, mask)
    (losses + vertex * vertex_penalty(h, mask)).sum().backward()
    return losses.detach(), [p.grad.clone() for p in (model.A, model.B, model.C, model.h0)]


@pytest.mark.parametrize("k,d", SHAPES)
@pytest.mark.parametrize("loss,normalize,noise,vertex", [
    ("mse", True, True, 0.0), ("ce", True, True, 0.2), ("mse", False, False, 0.5), ("mse", True, False, 0.0)])
def test_the_fused_gradient_is_autograds(k, d, loss, normalize, noise, vertex):
    cfg = TrainConfig(task="add2", loss=loss, normalize_h=normalize, forward="loop", threads=2)
    model, *batch = _batch(k, d, restarts=3, b=5, T=9, noise=noise, seed=k * 100 + d)
    want_losses, want = _autograd(model, *batch, cfg, vertex)
    model.zero_grad(set_to_none=True)
    objective, losses = fused_objective(model, *batch, cfg, vertex)
    objective.sum().backward()
    got = [p.grad for p in (model.A, model.B, model.C, model.h0)]
    assert torch.allclose(losses, want_losses, rtol=1e-5, atol=1e-7)
    for name, w, g in zip("ABCh", want, got):
        assert (w - g).abs().max() <= 1e-5 * w.abs().max(), name


def test_each_restart_gets_only_its_own_upstream_gradient():
    cfg = TrainConfig(task="add2", forward="loop")
    model, *batch = _batch(3, 9, restarts=2, b=4, T=6, noise=True, seed=1)
    objective, _ = fused_objective(model, *batch, cfg, 0.0)
    (objective * torch.tensor([1.0, 0.0])).sum().backward()
    assert model.A.grad[1].abs().max() == 0 and model.A.grad[0].abs().max() > 0


def test_the_fused_engine_supports_the_loop_on_the_cpu_only():
    cpu = torch.device("cpu")
    assert supports(TrainConfig(), cpu) and supports(TrainConfig(loss="ce"), cpu)
    assert not supports(TrainConfig(normalize_h=False, forward="scan"), cpu)
    assert not supports(TrainConfig(), torch.device("cuda"))


def test_a_new_penalty_on_the_states_reaches_the_default_engine_by_autograd(monkeypatch):
    """One more registry entry that reads h: the fused pass cannot compute it, so it declines and the
    objective the run minimises is the registry's, that penalty included."""
    from dfst.train import objectives
    from dfst.train.loop import forward_pass

    cfg = TrainConfig(task="add2", l1=1e-3, restarts=2)
    cpu = torch.device("cpu")
    model, reads, writes, moves, mask, _ = _batch(5, 4, restarts=2, b=3, T=7, noise=False, seed=3)
    batch = (reads, writes, moves, mask)
    _, before = forward_pass(model, batch, None, 0, cfg, cpu)  # the fused pass, L1 added on the weights
    assert supports(cfg, cpu)
    norm = objectives.Penalty("l1", lambda step, c: 1.0, lambda m, h, msk: (h ** 2).sum())
    monkeypatch.setitem(objectives.PENALTIES, "state_norm", norm)
    assert not supports(cfg, cpu)
    losses, after = forward_pass(model, batch, None, 0, cfg, cpu)
    _, _, h = teacher_forced(model, reads, mask, None, normalize=cfg.normalize_h)
    assert torch.allclose(after, before + (h ** 2).sum(), rtol=1e-5)


QUICK = dict(task="add2", iters=12, restarts=3, eval_every=0, checkpoint_every=4, finetune=False,
             extract=False, engine="fused", threads=2, discrete=0.1, l1=1e-4)


def _weights(run) -> str:
    return hashlib.sha256((run / "model" / "model.safetensors").read_bytes()).hexdigest()


def test_a_fused_run_is_reproduced_bit_for_bit(tmp_path):  # (resuming: tests/test_train.py)
    cfg = TrainConfig.from_dict(QUICK)
    train(cfg, tmp_path / "a")
    train(cfg, tmp_path / "b")
    assert _weights(tmp_path / "a") == _weights(tmp_path / "b")


def test_fused_and_autograd_runs_end_close(tmp_path):
    cfg = TrainConfig.from_dict(QUICK)
    fused = train(cfg, tmp_path / "f")["final_loss"]
    plain = train(replace(cfg, engine="autograd"), tmp_path / "g")["final_loss"]
    assert abs(fused - plain) <= 1e-4 * abs(plain)


def test_bench_train_times_both_engines_on_a_recipe(capsys):
    from cli_helpers import run_json

    [row] = run_json(capsys, "bench", "train", "--tasks", "add2", "--iters", "2", "--repeats", "1")
    assert (row["task"], row["restarts"], row["batch"], row["k"], row["d"]) == ("add2", 16, 20, 3, 9)
    assert row["autograd_its"] > 0 and row["fused_its"] > 0 and row["mflop_per_iteration"] > 0
    assert row["ratio"] == pytest.approx(row["fused_its"] / row["autograd_its"], abs=0.01)


@pytest.mark.parametrize("argv,fragment", [(("--tasks", "add2,nope"), "no recipe for task 'nope'"),
                                           (("--iters", "0"), "must be at least 1")])
def test_bench_train_refuses_bad_input_in_one_line(capsys, argv, fragment):
    from cli_helpers import assert_one_line_error, run

    code, _, err = run(capsys, "bench", "train", *argv)
    assert_one_line_error(code, err, fragment)
