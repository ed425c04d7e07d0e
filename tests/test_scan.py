"""The log-depth scans of teacher-forced hidden states agree with the plain loop, values and gradients."""

from __future__ import annotations

import pytest
import torch

from dfst.model import DFST, DFSTConfig
from dfst.scan import (
    prefix_products_hillis_steele,
    prefix_products_torch,
    prefix_states,
    prefix_states_by_symbol,
    prefix_states_sequential,
)

SCANS = {"torch": prefix_products_torch, "hillis_steele": prefix_products_hillis_steele}
# Relative to the largest reference value: products of 33 random matrices reach values in the tens.
TOLERANCE = {torch.float64: 1e-11, torch.float32: 1e-5}


def random_inputs(batch: int, T: int, d: int, dtype: torch.dtype, seed: int = 0):
    """Matrices near the identity (so products neither vanish nor explode), h0, variable lengths."""
    g = torch.Generator().manual_seed(seed)
    A = torch.eye(d, dtype=dtype) + 0.3 * torch.randn(batch, T, d, d, generator=g, dtype=dtype)
    h0 = torch.randn(d, generator=g, dtype=dtype)
    lengths = torch.randint(1, T + 1, (batch,), generator=g)
    lengths[0] = T
    mask = torch.arange(T) < lengths[:, None]
    noise = 0.1 * torch.randn(batch, T, d, generator=g, dtype=dtype)
    return A, h0, mask, noise


def values_and_grads(states_fn, A, h0, mask, noise):
    """The states on real steps and the gradients of a random linear function of them."""
    A, h0 = A.clone().requires_grad_(), h0.clone().requires_grad_()
    states = states_fn(A, h0, mask, noise)
    weights = torch.randn(states.shape, generator=torch.Generator().manual_seed(9), dtype=states.dtype)
    real = torch.where(mask[..., None], states, 0.0)
    grads = torch.autograd.grad((real * weights).sum(), (A, h0), allow_unused=True, materialize_grads=True)
    return real, *grads


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("scan", SCANS)
@pytest.mark.parametrize(("with_noise", "normalize"), [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize(("batch", "T"), [(1, 1), (1, 2), (4, 7), (3, 16), (5, 33)])
def test_scan_agrees_with_loop(dtype, scan, with_noise, normalize, batch, T):
    A, h0, mask, noise = random_inputs(batch, T, 5, dtype, seed=T)
    noise = noise if with_noise else None
    got = values_and_grads(lambda *a: prefix_states(*a, normalize=normalize, scan=SCANS[scan]),
                           A, h0, mask, noise)
    want = values_and_grads(lambda *a: prefix_states_sequential(*a, normalize=normalize), A, h0, mask, noise)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        scale = float(w.detach().abs().max()) or 1.0
        torch.testing.assert_close(g, w, rtol=TOLERANCE[dtype] * 10, atol=TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(("with_noise", "normalize"),
                         [(False, False), (True, False), (False, True), (True, True)])
def test_loop_from_the_symbol_table_agrees_with_loop(dtype, with_noise, normalize):
    """Same states and gradients as the plain loop over the gathered per-step matrices A[reads]."""
    k, batch, T, d = 3, 4, 12, 5
    g = torch.Generator().manual_seed(7)
    table = torch.eye(d, dtype=dtype) + 0.3 * torch.randn(k, d, d, generator=g, dtype=dtype)
    reads = torch.randint(0, k, (batch, T), generator=g)
    _, h0, mask, noise = random_inputs(batch, T, d, dtype, seed=8)
    noise = noise if with_noise else None
    def by_symbol(A, h, m, n):
        return prefix_states_by_symbol(A, h, reads, m, n, normalize=normalize)

    def gathered(A, h, m, n):
        return prefix_states_sequential(A[reads], h, m, n, normalize=normalize)

    got = values_and_grads(by_symbol, table, h0, mask, noise)
    want = values_and_grads(gathered, table, h0, mask, noise)
    for g_, w in zip(got, want):
        torch.testing.assert_close(g_, w, rtol=TOLERANCE[dtype] * 10,
                                   atol=TOLERANCE[dtype] * (float(w.detach().abs().max()) or 1.0))


def test_states_are_the_models_teacher_forced_states():
    """h_t = A[x_{t-1}] ··· A[x_0] h0, the hidden states DFST.unroll computes step by step."""
    g = torch.Generator().manual_seed(1)
    model = DFST.from_weights(torch.randn(3, 6, 6, generator=g) / 6**0.5, torch.randn(3, 3, 6, generator=g),
                              torch.randn(3, 5, 6, generator=g), torch.randn(6, generator=g))
    reads = torch.randint(0, 3, (4, 11), generator=g)
    hidden, _, _ = model.unroll(reads)  # (4, 12, 6): h_0 … h_11
    with torch.no_grad():
        for states_fn in (prefix_states, prefix_states_sequential):
            torch.testing.assert_close(states_fn(model.A[reads], model.h0), hidden[:, :-1])
        torch.testing.assert_close(prefix_states_by_symbol(model.A, model.h0, reads), hidden[:, :-1])


def test_padding_never_matters():
    """Huge matrices and noise on padded steps change no real state, and padded states stay finite."""
    A, h0, mask, noise = random_inputs(4, 9, 4, torch.float32, seed=3)
    wild_A = torch.where(mask[..., None, None], A, torch.full_like(A, 1e30))
    wild_noise = torch.where(mask[..., None], noise, 1e30)
    for states_fn in (prefix_states, prefix_states_sequential):
        clean = states_fn(A, h0, mask, noise)
        wild = states_fn(wild_A, h0, mask, wild_noise)
        assert torch.isfinite(wild).all()
        torch.testing.assert_close(wild[mask], clean[mask], rtol=0, atol=0)


def test_batched_h0_and_empty_sequences():
    A, _, _, _ = random_inputs(3, 5, 4, torch.float64)
    h0 = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(prefix_states(A, h0), prefix_states_sequential(A, h0))
    for states_fn in (prefix_states, prefix_states_sequential):
        assert states_fn(A[:, :0], h0).shape == (3, 0, 4)


def test_noise_with_normalisation_needs_the_loop():
    A, h0, mask, noise = random_inputs(2, 4, 3, torch.float64)
    with pytest.raises(ValueError, match="sequential"):
        prefix_states(A, h0, mask, noise, normalize=True)
    states = prefix_states_sequential(A, h0, mask, noise, normalize=True)
    # each state is a unit vector plus that step's noise
    torch.testing.assert_close((states - noise).norm(dim=-1)[mask], torch.ones(int(mask.sum()),
                                                                                 dtype=torch.float64))


def test_identity_init_states_stay_e0():
    """The published init keeps h = e0 under teacher forcing: the start of training."""
    model = DFST.init_identity(DFSTConfig(3, 5))
    reads = torch.randint(0, 3, (2, 8), generator=torch.Generator().manual_seed(5))
    states = prefix_states(model.A[reads], model.h0).detach()
    assert torch.equal(states, torch.eye(5)[0].expand(2, 8, 5))
