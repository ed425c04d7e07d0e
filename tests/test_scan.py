"""The teacher-forced states: every method of `dfst.model.hidden_states` agrees with a plain per-step
loop written here, values and gradients, with and without restarts, noise and normalisation."""

from __future__ import annotations

import pytest
import torch

from dfst.model import DFST, FORWARDS, DFSTConfig, hidden_states
from dfst.model.scan import prefix_products_hillis_steele, prefix_products_torch

# Relative to the largest reference value: products of 33 random matrices reach values in the tens.
TOLERANCE = {torch.float64: 1e-11, torch.float32: 1e-5}


def reference_states(A, h0, reads, mask, noise, normalize):
    """h_0 … h_{T-1} one step at a time: h = A[x_t] h on real steps, |h| = 1 before the step's noise."""
    batch, T = reads.shape
    h, states = h0.expand(batch, A.shape[-1]), []
    for t in range(T):
        if normalize:
            h = h / h.norm(dim=-1, keepdim=True)
        if noise is not None:
            h = h + torch.where(mask[:, t, None], noise[:, t], 0.0)
        states.append(h)
        step = torch.stack([A[reads[b, t]] @ h[b] for b in range(batch)])  # (batch, d)
        h = torch.where(mask[:, t, None], step, h)
    return torch.stack(states, dim=1) if states else A.new_zeros(batch, 0, A.shape[-1])


def random_inputs(batch: int, T: int, d: int, dtype: torch.dtype, k: int = 3, seed: int = 0):
    """A symbol table near the identity (products neither vanish nor explode), h0, reads, lengths, noise."""
    g = torch.Generator().manual_seed(seed)
    A = torch.eye(d, dtype=dtype) + 0.3 * torch.randn(k, d, d, generator=g, dtype=dtype)
    h0 = torch.randn(d, generator=g, dtype=dtype)
    reads = torch.randint(0, k, (batch, T), generator=g)
    lengths = torch.randint(1, T + 1, (batch,), generator=g)
    lengths[0] = T
    mask = torch.arange(T) < lengths[:, None]
    noise = 0.1 * torch.randn(batch, T, d, generator=g, dtype=dtype)
    return A, h0, reads, mask, noise


def values_and_grads(states_fn, A, h0, mask, noise):
    """The states on real steps and the gradients of a random linear function of them."""
    A, h0 = A.clone().requires_grad_(), h0.clone().requires_grad_()
    states = states_fn(A, h0, mask, noise)
    weights = torch.randn(states.shape, generator=torch.Generator().manual_seed(9), dtype=states.dtype)
    real = torch.where(mask[..., None], states, 0.0)
    grads = torch.autograd.grad((real * weights).sum(), (A, h0), allow_unused=True, materialize_grads=True)
    return real, *grads


def assert_agree(got, want, dtype):
    for g, w in zip(got, want):
        assert g.dtype == dtype
        scale = float(w.detach().abs().max()) or 1.0
        torch.testing.assert_close(g, w, rtol=TOLERANCE[dtype] * 10, atol=TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("method", FORWARDS)
@pytest.mark.parametrize(("with_noise", "normalize"),
                         [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize(("batch", "T"), [(1, 1), (1, 2), (4, 7), (3, 16), (5, 33)])
def test_every_method_agrees_with_the_reference(dtype, method, with_noise, normalize, batch, T):
    if method != "loop" and with_noise and normalize:
        pytest.skip("noise with normalising is not a linear recurrence: the loop only")
    A, h0, reads, mask, noise = random_inputs(batch, T, 5, dtype, seed=T)
    noise = noise if with_noise else None
    got = values_and_grads(lambda A, h0, m, n: hidden_states(A, h0, reads, m, n, normalize=normalize,
                                                             method=method), A, h0, mask, noise)
    want = values_and_grads(lambda A, h0, m, n: reference_states(A, h0, reads, m, n, normalize),
                            A, h0, mask, noise)
    assert_agree(got, want, dtype)


@pytest.mark.parametrize("method", FORWARDS)
def test_a_restart_axis_gives_each_restart_its_own_states(method):
    """(R, k, d, d) tables: restart r's states are those of its table alone, noise (R, b, T, d) included."""
    tables, h0s, noises = [], [], []
    for r in range(3):
        A, h0, reads, mask, noise = random_inputs(4, 9, 5, torch.float64, seed=0)  # same reads and mask
        g = torch.Generator().manual_seed(r + 10)
        tables.append(A + 0.1 * torch.randn(A.shape, generator=g, dtype=A.dtype))
        h0s.append(h0 + r)
        noises.append(noise * (r + 1))
    together = hidden_states(torch.stack(tables), torch.stack(h0s), reads, mask, torch.stack(noises),
                             method=method)
    assert together.shape == (3, 4, 9, 5)
    for r in range(3):
        alone = reference_states(tables[r], h0s[r], reads, mask, noises[r], False)
        torch.testing.assert_close(together[r][mask], alone[mask])


def test_the_two_scans_give_the_same_prefixes():
    steps = torch.randn(3, 13, 4, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    want = [steps[:, 0]]
    for t in range(1, 13):
        want.append(steps[:, t] @ want[-1])  # later matrices on the left
    for scan in (prefix_products_torch, prefix_products_hillis_steele):
        torch.testing.assert_close(scan(steps), torch.stack(want, dim=1))


def test_states_are_the_models_teacher_forced_states():
    """DFST.unroll holds the same states, h_0 … h_T, and its scores are read off them."""
    g = torch.Generator().manual_seed(1)
    model = DFST.from_weights(torch.randn(3, 6, 6, generator=g) / 6**0.5, torch.randn(3, 3, 6, generator=g),
                              torch.randn(3, 5, 6, generator=g), torch.randn(6, generator=g))
    reads = torch.randint(0, 3, (4, 11), generator=g)
    hidden, symbols, _ = model.unroll(reads)  # (4, 12, 6)
    with torch.no_grad():
        want = reference_states(model.A, model.h0, reads, torch.ones(4, 11, dtype=torch.bool), None, False)
        torch.testing.assert_close(hidden[:, :-1], want)
        torch.testing.assert_close(symbols, torch.einsum("btij,btj->bti", model.B[reads], want))
        for method in FORWARDS:
            torch.testing.assert_close(hidden_states(model.A, model.h0, reads, method=method), want)


@pytest.mark.parametrize("method", FORWARDS)
def test_padding_never_matters(method):
    """A huge symbol and noise on padded steps change no real state, and padded states stay finite."""
    A, h0, reads, mask, noise = random_inputs(4, 9, 4, torch.float32, k=3, seed=3)
    wild_A = torch.cat([A, torch.full_like(A[:1], 1e30)])  # symbol 3: read only on padded steps
    wild_reads = torch.where(mask, reads, 3)
    wild_noise = torch.where(mask[..., None], noise, 1e30)
    clean = hidden_states(A, h0, reads, mask, noise, method=method)
    wild = hidden_states(wild_A, h0, wild_reads, mask, wild_noise, method=method)
    assert torch.isfinite(wild).all()
    torch.testing.assert_close(wild[mask], clean[mask], rtol=0, atol=0)


@pytest.mark.parametrize("method", FORWARDS)
def test_empty_sequences(method):
    A, h0, reads, _, _ = random_inputs(3, 5, 4, torch.float64)
    assert hidden_states(A, h0, reads[:, :0], method=method).shape == (3, 0, 4)


def test_noise_with_normalisation_needs_the_loop():
    A, h0, reads, mask, noise = random_inputs(2, 4, 3, torch.float64)
    for method in ("scan", "hillis"):
        with pytest.raises(ValueError, match="loop"):
            hidden_states(A, h0, reads, mask, noise, normalize=True, method=method)
    states = hidden_states(A, h0, reads, mask, noise, normalize=True, method="loop")
    # each state is a unit vector plus that step's noise
    torch.testing.assert_close((states - noise).norm(dim=-1)[mask], torch.ones(int(mask.sum()),
                                                                                 dtype=torch.float64))


def test_identity_init_states_stay_e0():
    """The published init keeps h = e0 under teacher forcing: the start of training."""
    model = DFST.init_identity(DFSTConfig(3, 5))
    reads = torch.randint(0, 3, (2, 8), generator=torch.Generator().manual_seed(5))
    for method in FORWARDS:
        states = hidden_states(model.A, model.h0, reads, method=method).detach()
        assert torch.equal(states, torch.eye(5)[0].expand(2, 8, 5))
