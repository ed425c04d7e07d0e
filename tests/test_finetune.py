"""dfst finetune: the consistency residual falls, the training PTOs stay exact, a seed fixes the bytes,
bad input is a one-line error. One tiny add2 run (~20 s) is shared by the module."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights, engine_step
from dfst.train import TrainConfig, train
from dfst.train.finetune import FinetuneConfig, finetune

# every phase, briefly: the bytes depend on the seed and nothing else at any length
SHORT = ("--adam-iters", "20", "--plain-iters", "5", "--lbfgs-iters", "10", "--centre-iters", "20")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("ft") / "run"
    train(TrainConfig(task="add2", iters=1000, restarts=4, eval_every=0, eval_digits=(10,)), run_dir)
    return run_dir


@pytest.fixture(scope="module")
def tuned(tiny_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("ft") / "tuned"
    return out, finetune(tiny_run, out, FinetuneConfig(centre_iters=300))  # the default phase, shorter


def test_finetune_lowers_the_residual_and_stays_exact(tuned):
    out, summary = tuned
    before, after = summary["before"], summary["after"]
    assert before["train_exact"], "the tiny run should already fit its PTOs"
    assert after["train_exact"] and after["wrong_steps"] == 0
    assert after["residual_max"] < 1e-5 < before["residual_max"]  # measured: 2 before, 9e-8 after
    centres = summary["phases"]["centres"]
    assert centres["margin"] == 0.0 and centres["orthogonality"] < 1e-12
    assert summary["blocks"] >= 2 and summary["transitions"] >= summary["blocks"]
    assert json.loads((out / "summary.json").read_text()) == summary
    config = json.loads((out / "model" / "config.json").read_text())
    assert config["provenance"]["source"] == "finetune" and config["task"] == "add2"


def test_the_weights_are_gradient_descents_float32(tuned, tiny_run):
    from dfst.model.checkpoint import load_checkpoint

    model, _ = load_checkpoint(tuned[0] / "model")
    trained, _ = load_checkpoint(tiny_run / "model")
    grown = model.A.shape != trained.A.shape  # the phase grew d to the blocks read off
    assert model.A.dtype.is_floating_point and (grown or not (model.A == trained.A).all())
    assert not ((model.A * 2).round() == model.A * 2).all(), "weights look rounded, not trained"


def test_same_seed_same_bytes(capsys, tiny_run, tmp_path):
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        run_json(capsys, "finetune", tiny_run, "--out", out, *SHORT)
    a, b = ((out / "model" / "model.safetensors").read_bytes() for out in outs)
    assert a == b
    run_json(capsys, "finetune", tiny_run, "--out", outs[1], *SHORT, "--seed", "1", "--force")
    assert (outs[1] / "model" / "model.safetensors").read_bytes() != a


def test_the_fine_tuned_weights_run_exact_far_past_the_training_length(capsys, tuned):
    """Trained on operands of <= 3 digits for 1,000 iterations; the fine-tuned raw weights, plain h,
    are exact on the whole hard set and random pairs at 300 digits (measured: robust to 10^5)."""
    code, out, _ = run(capsys, "eval", tuned[0] / "model", "--digits", "30,300", "--random", "5", "--json")
    report = json.loads(out)
    assert code == 0 and report["robust_max_digits"] == 300, report["first_failure"]


def test_the_margin_hinge_asks_nothing_of_a_readout_that_leads_by_the_margin():
    import torch

    from dfst.train.objectives import margin_hinge

    targets = torch.tensor([0, 2])
    leading = torch.tensor([[1.0, 0.4, 0.5], [0.0, -0.2, 0.5]])
    assert margin_hinge(leading, targets, 0.5).item() == 0.0
    short = torch.tensor([[1.0, 0.9, 0.0], [0.0, 0.0, 0.0]])  # leads by 0.1; ties with both others
    assert margin_hinge(short, targets, 0.5).item() == pytest.approx((0.4**2 + 2 * 0.5**2) / 2)


def test_bad_input_is_a_one_line_error(capsys, tiny_run, tuned, tmp_path):
    (tmp_path / "notarun").mkdir()
    (tmp_path / "notarun" / "x.txt").write_text("mine")
    cases = [
        (("finetune", tmp_path / "missing", "--out", tmp_path / "o1"), "does not exist"),
        (("finetune", tmp_path / "notarun", "--out", tmp_path / "o2"), "not a dfst training run"),
        (("finetune", tiny_run, "--out", tuned[0]), "--force"),
        (("finetune", tiny_run, "--out", tmp_path / "notarun"), "holds no dfst fine-tune"),
        (("finetune", tiny_run, "--out", tmp_path / "o3", "--lr", "0"), "lr > 0"),
    ]
    for argv, fragment in cases:
        code, _, err = run(capsys, *argv)
        assert_one_line_error(code, err, fragment)
    assert (tmp_path / "notarun" / "x.txt").read_text() == "mine"
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


def test_config_refuses_bad_values():
    with pytest.raises(DfstError):
        FinetuneConfig(adam_iters=-1)
    with pytest.raises(DfstError):
        FinetuneConfig(noise=float("nan"))
    with pytest.raises(DfstError, match="margin > 0"):
        FinetuneConfig(margin=0.0)


def test_unused_directions_is_zero_only_where_nothing_unused_is_mapped():
    """The damping penalty: 0 for an A that maps the used centres and kills the rest, positive
    when A keeps a direction no block uses (a centre that never reads x, or outside the span)."""
    import torch

    from dfst.train.objectives import unused_directions

    centres = torch.eye(3, 4, dtype=torch.float64)  # 3 blocks in d = 4: e_3 is outside their span
    transitions = torch.tensor([[0, 0, 1], [1, 0, 2], [2, 1, 0]])  # block 2 never reads 0, 0 and 1 never 1
    A = torch.zeros(2, 4, 4, dtype=torch.float64)
    A[0, 1, 0] = A[0, 2, 1] = A[1, 0, 2] = 1.0
    assert unused_directions(A, centres, transitions).item() == 0.0
    for x, column in ((0, 2), (1, 0), (0, 3)):
        kept = A.clone()
        kept[x, 0, column] = 0.5
        assert unused_directions(kept, centres, transitions).item() == pytest.approx(0.25 / 2)


def test_damping_is_recorded_and_changes_the_weights(tiny_run, tuned, tmp_path):
    out = tmp_path / "damped"
    summary = finetune(tiny_run, out, FinetuneConfig(adam_iters=50, plain_iters=20, lbfgs_iters=100,
                                                     centre_iters=0, damping=10.0))  # residual / 1000
    assert summary["config"]["damping"] == 10.0 and "unused" in summary["phases"]["lbfgs"]
    assert summary["phases"]["centres"] == {"iterations": 0}
    assert summary["after"]["residual"] < summary["before"]["residual"] / 10  # the teacher-forced phases
    assert (out / "model" / "model.safetensors").read_bytes() != \
        (tuned[0] / "model" / "model.safetensors").read_bytes()


def test_a_grown_model_computes_what_the_model_did_and_only_new_dimensions_get_the_nudge(tiny_run):
    """More blocks than dimensions: fine-tuning grows d by zero-padding, which changes no output."""
    import torch

    from dfst.model import teacher_forced
    from dfst.model.checkpoint import load_checkpoint
    from dfst.train.anchors import grown, spread

    model, _ = load_checkpoint(tiny_run / "model")
    d = model.config.d
    big = grown(model, d + 3)
    assert big.config.d == d + 3 and big.config.task == model.config.task
    reads = torch.randint(0, model.config.k, (4, 12), generator=torch.Generator().manual_seed(0))
    # torch picks its matmul kernel by shape (d differs), so the teacher-forced pass agrees up to
    # rounding; the engine skips zero entries of h and sums in order, so closed loop it is bit for bit
    for mine, theirs in zip(teacher_forced(model, reads), teacher_forced(big, reads), strict=True):
        scale = float(mine.detach().abs().max())
        torch.testing.assert_close(theirs[..., :mine.shape[-1]], mine, rtol=1e-5, atol=1e-6 * scale)
    assert not teacher_forced(big, reads)[2][..., d:].any()  # the new dimensions stay 0
    small, wide = (DfstWeights.of(*m.numpy_weights()) for m in (model, big))
    h_small, h_wide = small.h0, wide.h0
    for x in reads[0].tolist():
        one, two = engine_step(small, h_small, x, False), engine_step(wide, h_wide, x, False)
        assert (one.write, one.move) == (two.write, two.move)
        if one.h is None:
            assert two.h is None
            break
        assert np.array_equal(two.h[:d], one.h) and not two.h[d:].any()
        h_small, h_wide = one.h, two.h
    centres = torch.ones(5, d + 3, dtype=torch.float64)
    nudged = spread(centres, d, seed=0)
    assert torch.equal(nudged[:, :d], centres[:, :d]) and nudged[:, d:].abs().max() < 0.1
    assert nudged[:, d:].abs().min() > 0 and torch.equal(spread(centres, d, seed=0), nudged)


def test_the_frozen_phase_holds_the_centres_orthonormal_and_fits_the_weights_to_them(tiny_run, tmp_path):
    """`frozen_iters` starts the centres at the closest orthonormal set and keeps them there while
    A, B, C and h0 fit them (mult10's recipe: its 34 blocks stalled the joint phase)."""
    import torch

    from dfst.tasks import get_task
    from dfst.train import anchors
    from dfst.train.batches import Sequences
    from dfst.train.finetune import read_run

    _, model, data = read_run(tiny_run)
    seqs, blocks = Sequences.of(data), anchors.block_labels(model, data, get_task("add2").agent)
    model = anchors.grown(model, max(blocks.count, model.config.d))  # one dimension per block, as `tune`
    start = anchors.initial_centres(model, seqs, blocks)
    anchored = anchors.Anchored(model, start, seqs, blocks, weight=10.0, damping=1.0)
    before, _ = anchored.at_centres()
    phase = anchors.frozen_phase(anchored, 200)
    c = anchored.centres().detach().double()
    torch.testing.assert_close(c @ c.T, torch.eye(len(c), dtype=c.dtype), rtol=0, atol=1e-6)
    u, _, vh = torch.linalg.svd(start.double(), full_matrices=False)
    torch.testing.assert_close(c, (u @ vh).to(c.dtype), rtol=0, atol=1e-6)  # not moved by L-BFGS
    assert anchored.u.requires_grad and phase["iterations"] > 0
    assert phase["consistency"] < 1e-10 < before.item() and phase["margin"] == 0.0
    assert anchors.frozen_phase(anchored, 0) == {"iterations": 0}
    summary = finetune(tiny_run, tmp_path / "f", FinetuneConfig(frozen_iters=100, centre_iters=100))
    assert summary["phases"]["frozen"]["iterations"] > 0 and summary["after"]["train_exact"]


def test_the_lbfgs_phase_reports_its_own_objective_to_the_progress_bar(tiny_run):
    """Each L-BFGS progress record carries the objective where its chunk ended (the bar showed
    `loss nan` for the whole phase): finite, never rising, the phase's own at the end, and the bar
    labels it as the fine-tuning objective."""
    import math

    from dfst.cli.training import progress_fields
    from dfst.tasks import get_task
    from dfst.train import anchors
    from dfst.train.batches import Sequences
    from dfst.train.finetune import read_run

    _, model, data = read_run(tiny_run)
    seqs, blocks = Sequences.of(data), anchors.block_labels(model, data, get_task("add2").agent)
    model = anchors.grown(model, max(blocks.count, model.config.d))
    anchored = anchors.Anchored(model, anchors.initial_centres(model, seqs, blocks), seqs, blocks,
                                weight=10.0, damping=1.0)
    records = []
    anchors.lbfgs_phase(anchored, 40, records.append, chunk=10)
    values = [r["objective"] for r in records]
    assert len(records) >= 2 and all(math.isfinite(v) for v in values)
    assert all(b <= a * (1 + 1e-9) for a, b in zip(values, values[1:]))  # L-BFGS with a Wolfe search
    final = anchored.objective(None)[0].item()  # float32 weights again: a cast away from the last
    assert final == pytest.approx(values[-1], rel=1e-3, abs=1e-9)
    shown = progress_fields(records[-1] | {"iteration": records[-1]["iters"]})
    assert shown["measure"] == f"fine-tuning objective {values[-1]:.3g}" and "L-BFGS" in shown["eval"]
    assert progress_fields({"iteration": 5, "iters": 10, "loss": 0.25})["measure"] == "loss 0.25"
