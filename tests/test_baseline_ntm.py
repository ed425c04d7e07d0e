"""NTM baseline: addressing, shapes, losses, training steps, determinism, run() and run_copy()."""

import json

import numpy as np
import pytest
import torch

from dfst.baselines import ntm
from dfst.errors import DfstError
from dfst.results import Result
from dfst.tasks import get_task
from dfst.tasks.base import Instance

ADD2 = get_task("add2")
TINY = {"controller": 12, "memory": 8, "word": 6, "steps": 3, "batch": 4, "max_digits": 3,
        "eval_digits": "2,4", "eval_random": 2}
TINY_COPY = {"bits": 3, "controller": 12, "memory": 8, "word": 6, "steps": 4, "batch": 4, "max_length": 3,
             "test_lengths": "3,6", "test_count": 5, "eval_every": 2, "eval_count": 7}


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

def test_addressing_focuses_shifts_and_sharpens():
    memory = torch.eye(5)[None]                                         # cell i holds e_i
    key, one = torch.eye(5)[2][None], torch.ones(1)
    stay = torch.tensor([[0.0, 1.0, 0.0]])
    w_prev = torch.full((1, 5), 0.2)
    focused = ntm.address(memory, w_prev, key, 50 * one, one, stay, one)
    assert focused.argmax() == 2 and focused[0, 2] > 0.9
    # gate 0 keeps the previous weights; a +1 shift moves them one cell on, circularly
    w_prev = torch.eye(5)[4][None]
    moved = ntm.address(memory, w_prev, key, one, 0 * one, torch.tensor([[0.0, 0.0, 1.0]]), one)
    assert torch.allclose(moved, torch.eye(5)[0][None], atol=1e-6)
    soft = torch.tensor([[0.1, 0.2, 0.3, 0.4, 0.0]])
    sharp = ntm.address(memory, soft, key, one, 0 * one, stay, 3 * one)
    assert torch.allclose(sharp, soft ** 3 / (soft ** 3).sum(), atol=1e-6)


def _model(seed=0, inputs=5, outputs=3):
    torch.manual_seed(seed)
    return ntm.NTM(ntm.NTMConfig(inputs, outputs, controller=12, memory=8, word=6))


def test_forward_shapes_and_memory_grows_with_the_sequence():
    model = _model()
    assert model(torch.zeros(2, 7, 5)).shape == (2, 7, 3)
    state, y = model.step(model.initial_state(2, 20), torch.zeros(2, 5))
    assert state["memory"].shape == (2, 20, 6) and y.shape == (2, 3)
    assert torch.allclose(state["w_read"].sum(-1), torch.ones(2))


def test_a_step_reads_the_memory_before_it_writes():
    # reading after the write let the read fetch this step's write: a one-step channel that kept the
    # copy task in a memoryless minimum (the write head stood still, 4/100 copies at the training length)
    model = _model()
    state = model.initial_state(2, 8)
    state["memory"] = torch.zeros(2, 8, 6)
    state, _ = model.step(state, torch.ones(2, 5))
    assert state["memory"].abs().sum() > 0 and torch.equal(state["read"], torch.zeros(2, 6))


def test_arithmetic_sequences_and_loss():
    xs, y, n = ntm.arithmetic_sequences(ADD2, [Instance("11", "1"), Instance("1", "1")])
    assert n == 4 and xs.shape == (2, 9, 5) and y.shape == (2, 4)
    assert xs[:, n, -1].tolist() == [1.0, 1.0] and xs[:, n + 1:].abs().sum() == 0
    assert y.tolist() == [[0, 0, 1, 0], [0, 1, 0, 0]]                   # 3 + 1 = 100, 1 + 1 = 10
    model = ntm.build_arithmetic_model(ADD2, ntm._merged(TINY, ntm.DEFAULTS, "ntm"))
    loss = ntm.arithmetic_loss(model, xs, y, n)
    assert loss.ndim == 0 and 0.3 < loss.item() < 1.5                   # near log 2 at init


def test_copy_steps_change_weights_and_reduce_loss_on_a_tiny_batch():
    model = _model(inputs=4, outputs=3)
    xs, target = ntm.copy_batch(np.random.default_rng(0), 4, 3, 3)
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(40):
        loss = ntm.copy_loss(model, xs, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert losses[-1] < 0.65 * losses[0]


def test_copy_batch_layout():
    xs, target = ntm.copy_batch(np.random.default_rng(1), 2, 4, 3)
    assert xs.shape == (2, 9, 4) and target.shape == (2, 4, 3)
    assert torch.equal(xs[:, :4, :3], target) and xs[:, 4, 3].tolist() == [1.0, 1.0]


def test_copy_uses_the_configured_cells_up_to_that_length():
    model = _model(inputs=4, outputs=3)                                 # memory 8 cells
    xs, _ = ntm.copy_batch(np.random.default_rng(2), 2, 5, 3)           # 11 steps, 5 vectors to keep
    assert torch.equal(ntm.copy_logits(model, xs, 5), model(xs, cells=8)[:, 6:])
    long, _ = ntm.copy_batch(np.random.default_rng(2), 2, 10, 3)
    assert torch.equal(ntm.copy_logits(model, long, 10), model(long, cells=10)[:, 11:])


def test_train_loop_reports_the_mean_loss_of_the_window_not_the_last_batch():
    model = _model()
    values = [1.0, 1.0, 1.0, 1e-4, 1.0, 1.0, 1.0, 1e-4]                # a lucky last batch, as length 1 is

    def next_loss(step):
        return sum(p.sum() for p in model.parameters()) * 0 + values[step], "text"
    evaluations = iter(range(10))
    info = ntm.train_loop(model, {"lr": 1e-3, "clip": 1.0, "steps": 8}, next_loss, label="t", progress=False,
                          evaluate=lambda: {"exact": next(evaluations)}, window=4)
    assert info["loss"] == pytest.approx(0.750025)
    assert info["curve"] == [{"step": 4, "loss": pytest.approx(0.750025), "exact": 0},
                             {"step": 8, "loss": pytest.approx(0.750025), "exact": 1}]


def test_run_copy_is_deterministic_and_well_formed():
    first, second = ntm.run_copy(3, TINY_COPY, progress=False), ntm.run_copy(3, TINY_COPY, progress=False)
    assert first["loss"] == second["loss"] and first["exact"] == second["exact"]
    assert first["curve"] == second["curve"] and [c["step"] for c in first["curve"]] == [2, 4]
    assert all(0 <= c["exact"] <= 7 for c in first["curve"])
    assert set(first["exact"]) == {"3", "6"} and all(0 <= v <= 5 for v in first["exact"].values())


def test_run_copy_rejects_a_zero_evaluation_interval():
    with pytest.raises(DfstError, match="eval_every"):
        ntm.run_copy(0, {**TINY_COPY, "eval_every": 0}, progress=False)


def test_run_is_deterministic_and_well_formed():
    first, second = ntm.run(ADD2, seed=2, config=TINY, progress=False), ntm.run(ADD2, seed=2, config=TINY,
                                                                                progress=False)
    assert isinstance(first, Result) and first.levels == second.levels and first.notes == second.notes
    assert first.system == "ntm" and first.max_train_digits == 3 and 0 < first.samples <= 12
    assert [lv["digits"] for lv in first.levels] == [2, 4]
    assert first.params == sum(p.numel() for p in ntm.build_arithmetic_model(
        ADD2, ntm._merged(TINY, ntm.DEFAULTS, "ntm")).parameters())


def test_copy_record_is_not_read_as_a_table_row(tmp_path):
    from dfst.results import load_results

    record = ntm.run_copy(0, TINY_COPY, False)
    assert (record["format"], record["version"]) == ("dfst-ntm-copy", 1)  # its own record, versioned
    (tmp_path / "ntm-copy-s0.json").write_text(__import__("json").dumps(record))
    assert load_results(tmp_path) == []


@pytest.mark.slow
def test_copy_learns_and_generalises_to_twice_the_training_length():
    # about two CPU minutes: the benchmark's model and lengths (1..10), fewer steps (it converges by ~2000)
    result = ntm.run_copy(0, {"steps": 2500, "test_lengths": "20", "test_count": 50, "eval_every": 2500},
                          progress=False)
    assert result["curve"][-1]["exact"] >= 90 and result["exact"]["20"] >= 45


def test_the_cli_runs_the_copy_task_and_stores_its_record(capsys, tmp_path):
    from cli_helpers import assert_one_line_error, run, run_json

    out = tmp_path / "copy.json"
    config = [arg for key, value in TINY_COPY.items() for arg in ("--config", f"{key}={value}")]
    shown = run_json(capsys, "baseline", "ntm", "copy", "--seed", "3", "--out", out, "--no-progress", *config)
    stored = json.loads(out.read_text())
    assert stored.pop("dfst_version")  # the marker that lets --force replace it
    assert stored == {k: v for k, v in shown.items() if k != "path"}
    assert stored["exact"] == ntm.run_copy(3, TINY_COPY, progress=False)["exact"]
    code, _, err = run(capsys, "baseline", "ntm", "copy", "--out", out, *config)
    assert_one_line_error(code, err, "already exists")
    code, _, err = run(capsys, "baseline", "ntm", "copy", "--out", out, "--config", "nope=1")
    assert_one_line_error(code, err, "unknown config key 'nope'")
