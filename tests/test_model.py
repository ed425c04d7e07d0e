"""The DFST module: sizes, the pure step, the teacher-forced unroll, the published init."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dfst.errors import DfstError
from dfst.model import DFST, DFSTConfig, param_count, weight_shapes


def random_model(k: int, d: int, seed: int = 0) -> DFST:
    """Dense random weights from a seeded generator (no global RNG)."""
    g = torch.Generator().manual_seed(seed)
    shapes = weight_shapes(k, d)
    weights = [torch.randn(shape, generator=g) / d**0.5 for shape in shapes.values()]
    return DFST.from_weights(*weights, task="test")


@pytest.mark.parametrize(("k", "d", "published"),
                         [(4, 12, 1020), (12, 20, 8900), (4, 32, 5280), (12, 108, 162108)])
def test_param_count_reproduces_published_counts(k, d, published):
    assert param_count(k, d) == published
    assert DFSTConfig(k, d).params == published


@pytest.mark.parametrize(("k", "d"), [(1, 1), (3, 9), (4, 12), (11, 35)])
def test_param_count_equals_module_parameters(k, d):
    model = DFST(DFSTConfig(k, d))
    assert sum(p.numel() for p in model.parameters()) == param_count(k, d)
    assert all(p.dtype == torch.float32 for p in model.parameters())


@pytest.mark.parametrize(("k", "d"), [(0, 3), (3, 0), (-1, 2), (2.0, 3), (True, 3), ("4", 12)])
def test_config_rejects_bad_sizes(k, d):
    with pytest.raises(DfstError, match="positive integer"):
        DFSTConfig(k, d)


def test_step_shapes_unbatched_and_batched():
    k, d, batch = 4, 7, 5
    model = random_model(k, d)
    h, s, m = model.step(model.h0, torch.tensor(2))
    assert (h.shape, s.shape, m.shape) == ((d,), (k,), (5,))
    hb = torch.randn(batch, d, generator=torch.Generator().manual_seed(1))
    x = torch.tensor([0, 1, 2, 3, 1])
    h, s, m = model.step(hb, x)
    assert (h.shape, s.shape, m.shape) == ((batch, d), (batch, k), (batch, 5))
    for i in range(batch):  # each row is the unbatched step
        hi, si, mi = model.step(hb[i], x[i])
        assert torch.allclose(h[i], hi) and torch.allclose(s[i], si) and torch.allclose(m[i], mi)


def test_step_is_the_published_formula():
    model = random_model(3, 4)
    h = torch.randn(4, generator=torch.Generator().manual_seed(2))
    h_next, s, m = model.step(h, torch.tensor(1))
    assert torch.allclose(h_next, model.A[1] @ h)
    assert torch.allclose(s, model.B[1] @ h)
    assert torch.allclose(m, model.C[1] @ h)


def test_forward_equals_looping_step():
    k, d, T = 4, 6, 9
    model = random_model(k, d)
    x_seq = torch.randint(0, k, (3, T), generator=torch.Generator().manual_seed(3))
    symbols, moves = model(x_seq)
    assert symbols.shape == (3, T, k) and moves.shape == (3, T, 5)
    for b in range(3):
        h = model.h0
        for t in range(T):
            h, s, m = model.step(h, x_seq[b, t])  # forward sums in another order: float32 rounding
            torch.testing.assert_close(symbols[b, t], s, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(moves[b, t], m, rtol=1e-5, atol=1e-6)
        unbatched = model(x_seq[b])
        assert unbatched[0].shape == (T, k)
        torch.testing.assert_close(unbatched, (symbols[b], moves[b]), rtol=1e-5, atol=1e-6)


def test_unroll_returns_every_hidden_state():
    model = random_model(3, 5)
    x_seq = torch.tensor([2, 0, 1, 1])
    hidden, _, _ = model.unroll(x_seq)
    assert hidden.shape == (5, 5)
    assert torch.equal(hidden[0], model.h0)
    assert torch.allclose(hidden[-1], model.A[1] @ model.A[1] @ model.A[0] @ model.A[2] @ model.h0)


def test_uint8_symbols_are_indices_not_masks():
    model = random_model(3, 4)
    x = np.array([1, 2, 0, 2], dtype=np.uint8)  # traces are stored as uint8
    as_long = model(torch.tensor(x, dtype=torch.long))
    as_uint8 = model(torch.from_numpy(x))
    assert torch.equal(as_long[0], as_uint8[0]) and torch.equal(as_long[1], as_uint8[1])


def test_empty_sequence():
    model = random_model(3, 4)
    symbols, moves = model(torch.zeros(2, 0, dtype=torch.long))
    assert symbols.shape == (2, 0, 3) and moves.shape == (2, 0, 5)


def test_identity_init_is_the_published_one():
    config = DFSTConfig(3, 5, "add2")
    model = DFST.init_identity(config)
    assert all(torch.equal(model.A[j], torch.eye(5)) for j in range(3))
    assert not model.B.any() and not model.C.any()
    assert torch.equal(model.h0, torch.tensor([1.0, 0, 0, 0, 0]))
    hidden, symbols, moves = model.unroll(torch.tensor([0, 2, 1, 1]))
    assert torch.equal(hidden, model.h0.expand(5, 5))
    # All-zero scores: argmax ties go to the first index (symbol 0, move U).
    assert not symbols.any() and symbols.argmax(-1).eq(0).all() and moves.argmax(-1).eq(0).all()


def test_numpy_weights_are_float32_contiguous_copies():
    model = random_model(3, 4)
    arrays = model.numpy_weights()
    for array, param in zip(arrays, (model.A, model.B, model.C, model.h0)):
        assert array.dtype == np.float32 and array.flags["C_CONTIGUOUS"]
        assert np.array_equal(array, param.detach().numpy())
    arrays[0][0, 0, 0] += 1.0
    assert not np.array_equal(arrays[0], model.A.detach().numpy())


def test_from_weights_rejects_mismatched_shapes():
    shapes = weight_shapes(3, 4)
    weights = [torch.zeros(s) for s in shapes.values()]
    weights[1] = torch.zeros(3, 4, 4)
    with pytest.raises(DfstError, match="weight B has shape"):
        DFST.from_weights(*weights)


def test_gradients_reach_every_parameter_and_runs_are_deterministic():
    x_seq = torch.randint(0, 3, (2, 6), generator=torch.Generator().manual_seed(4))
    grads = []
    for _ in range(2):
        model = random_model(3, 4, seed=5)
        symbols, moves = model(x_seq)
        (symbols.square().sum() + moves.square().sum()).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
        assert all(g.abs().sum() > 0 for g in grads[-1])
    assert all(torch.equal(a, b) for a, b in zip(*grads))  # bit for bit on CPU


def test_extraction_points_are_the_forward_pass_in_float64():
    """`teacher_forced_points` (what extraction clusters) is `hidden_states` run in float64 and scaled
    by max|h|, up to rounding: the same recurrence, not a second model."""
    from dfst.data import cover_dataset
    from dfst.model import hidden_states, teacher_forced_points
    from dfst.model.compile import compile_agent
    from dfst.tasks import TASKS

    task = TASKS["add2"]
    g = torch.Generator().manual_seed(0)
    weights = [w + 0.05 * torch.randn(w.shape, generator=g) for w in
               (p.detach() for p in compile_agent(task.agent).parameters())]
    data = cover_dataset(task, 8, 3, 0)
    traces = [data.trace(i) for i in range(data.samples)]
    points, steps = teacher_forced_points([w.numpy() for w in weights], traces)
    A, h0 = weights[0].double(), weights[3].double()
    expected = []
    for trace in traces:
        reads = torch.as_tensor(trace[:, 0], dtype=torch.long)[None]
        padded = torch.cat([reads, reads[:, :1]], dim=1)  # one more state: h after the last read
        h = hidden_states(A, h0, padded)[0]
        expected.append(h / h.abs().amax(-1, keepdim=True))
    assert len(steps) == sum(len(t) for t in traces)
    torch.testing.assert_close(torch.as_tensor(points), torch.cat(expected), rtol=1e-12, atol=1e-12)
