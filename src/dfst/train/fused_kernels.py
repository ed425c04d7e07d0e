"""The numba kernels of the fused teacher-forced engine (`dfst.train.fused`): the objective of every
restart and its gradient in one pass over restarts x samples x steps, with no autograd graph.

One sequence (restart r, sample i) runs forward through its real steps t = 0 … L-1, keeping each
state s_t and the norm it was divided by, then backward from the last step to h0:

    forward   h_0 = h0;  s_t = h_t / |h_t| (normalising) + n_t;  h_{t+1} = A[x_t] s_t
              y_t = B[x_t] s_t, m_t = C[x_t] s_t;   objective = loss(y, m) + w_v · vertex(s)
    backward  g_s = B[x_t]ᵀ ∂y + C[x_t]ᵀ ∂m + ∂vertex + A[x_t]ᵀ g_{h_{t+1}};  g_h = (g_s - s(s·g_s)) / |h|

Padded steps (t ≥ L) change no state and weigh nothing, so the kernel stops at L. Sequences are split
into a fixed number of chunks, one gradient buffer each, summed in chunk order: the result depends
on the chunk count, never on how threads were scheduled (a fixed seed reproduces a run bit for bit).
"""

from __future__ import annotations

import math

import numba
import numpy as np

MSE, CE = 0, 1  # the losses the kernel knows (dfst.train.objectives.LOSSES)
# Reassociation lets the compiler vectorise the d-long dot products, contraction use fused
# multiply-adds; NaN and inf keep IEEE semantics, so a diverging restart is still seen as one.
FAST = {"reassoc", "contract"}


@numba.njit(cache=True, fastmath=FAST)
def _normalise(h, norms, t, normalise):
    """s = h / max(|h|, tiny) in place (when normalising); the divisor is kept for the backward pass."""
    if not normalise:
        norms[t] = 1.0
        return
    total = np.float32(0.0)
    for j in range(h.shape[0]):
        total += h[j] * h[j]
    norm = max(np.float32(math.sqrt(total)), np.float32(1.1754944e-38))
    norms[t] = norm
    for j in range(h.shape[0]):
        h[j] = h[j] / norm


@numba.njit(cache=True, fastmath=FAST)
def _readout_grad(W, x, s, target, scale, loss, g_s, gW, value_scale, y):
    """One readout y = W[x] s against `target`: adds ∂(its loss)/∂s to g_s and ∂/∂W[x] to gW[x];
    returns the loss (unscaled: the per-step error). `y`: a work buffer of at least W's rows."""
    n, d = W.shape[1], W.shape[2]
    for a in range(n):
        acc = np.float32(0.0)
        for j in range(d):
            acc += W[x, a, j] * s[j]
        y[a] = acc
    err = np.float32(0.0)
    if loss == MSE:
        for a in range(n):
            diff = y[a] - (np.float32(1.0) if a == target else np.float32(0.0))
            err += diff * diff
            y[a] = diff * scale  # ∂ = 2·diff / (2N), `scale` = 1/N
    else:
        top = y[0]
        for a in range(1, n):
            top = max(top, y[a])
        total = np.float32(0.0)
        for a in range(n):
            total += np.float32(math.exp(y[a] - top))
        err = np.float32(math.log(total)) + top - y[target]
        for a in range(n):
            y[a] = (np.float32(math.exp(y[a] - top)) / total - (np.float32(1.0) if a == target else
                                                                  np.float32(0.0))) * scale * value_scale
    for a in range(n):
        for j in range(d):
            g_s[j] += W[x, a, j] * y[a]
            gW[x, a, j] += y[a] * s[j]
    return err


@numba.njit(cache=True, fastmath=FAST)
def _sequence(A, AT, B, C, h0, reads, writes, moves, length, noise, has_noise, normalise, loss, n_real,
              vertex_weight, gA, gB, gC, gh0, states, norms, work):
    """Objective (loss, vertex) of one sequence of one restart, its gradient added into the buffers.
    `work` (4, max(d, k, 5)): scratch rows, so that no step allocates."""
    d = A.shape[2]
    scale = np.float32(1.0) / n_real
    h, g_s, g_next, y = work[0, :d], work[1, :d], work[2, :d], work[3]
    h[:] = h0
    for t in range(length):  # forward: the states
        _normalise(h, norms, t, normalise)
        if has_noise:
            for j in range(d):
                h[j] += noise[t, j]
        states[t, :] = h
        if t + 1 < length:
            x = reads[t]
            for i in range(d):
                acc = np.float32(0.0)
                for j in range(d):
                    acc += A[x, i, j] * states[t, j]
                h[i] = acc
    total_loss, total_vertex = np.float32(0.0), np.float32(0.0)
    g_next[:] = 0.0  # ∂/∂h_{t+1}
    value_scale = np.float32(0.5) if loss == CE else np.float32(1.0)
    for t in range(length - 1, -1, -1):  # backward
        x, s = reads[t], states[t]
        g_s[:] = 0.0
        err = _readout_grad(B, x, s, writes[t], scale, loss, g_s, gB, value_scale, y)
        err += _readout_grad(C, x, s, moves[t], scale, loss, g_s, gC, value_scale, y)
        total_loss += err
        if vertex_weight != 0.0:
            total_vertex += _vertex_grad(s, vertex_weight * np.float32(2.0) / n_real, g_s)
        if t + 1 < length:
            for j in range(d):  # A[x]ᵀ g as dot products along AT = Aᵀ's rows: one store per entry
                acc = np.float32(0.0)
                for i in range(d):
                    acc += AT[x, j, i] * g_next[i]
                g_s[j] += acc
            for i in range(d):  # then the outer product into gA, a row at a time
                g = g_next[i]
                for j in range(d):
                    gA[x, i, j] += g * s[j]
        _through_normalise(g_s, s, norms[t], normalise, noise[t] if has_noise else s, has_noise, g_next)
    for j in range(d):
        gh0[j] += g_next[j]
    return total_loss, total_vertex


@numba.njit(cache=True, fastmath=FAST)
def _vertex_grad(s, scale, g_s):
    """|s - onehot(argmax s)|², adding scale·(s - corner) to g_s (`scale` = w_v · 2 / N)."""
    top = 0
    for j in range(1, s.shape[0]):
        if s[j] > s[top]:
            top = j
    err = np.float32(0.0)
    for j in range(s.shape[0]):
        diff = s[j] - (np.float32(1.0) if j == top else np.float32(0.0))
        err += diff * diff
        g_s[j] += scale * diff
    return err


@numba.njit(cache=True, fastmath=FAST)
def _through_normalise(g_s, s, norm, normalise, noise, has_noise, out):
    """∂/∂h into `out` from ∂/∂s, s = h/|h| + n: (g - u(u·g)) / |h| with u = s - n = h/|h| (g itself
    without normalising; a clamped, all-but-zero h passes g / tiny)."""
    d = s.shape[0]
    if not normalise:
        out[:] = g_s
        return
    dot = np.float32(0.0)
    if norm != np.float32(1.1754944e-38):
        for j in range(d):
            dot += (s[j] - noise[j] if has_noise else s[j]) * g_s[j]
    for j in range(d):
        u = s[j] - noise[j] if has_noise else s[j]
        out[j] = (g_s[j] - u * dot) / norm


@numba.njit(cache=True, parallel=True, fastmath=FAST)
def objective_and_gradient(A, AT, B, C, h0, reads, writes, moves, lengths, noise, has_noise, normalise, loss,
                           vertex_weight, chunks):
    """Per restart: the loss, the vertex penalty, and the gradient of loss + vertex_weight·vertex with
    respect to A, B, C and h0 (float32 arrays shaped like them). Shapes: A (R,k,d,d) and AT (A with
    its last two axes swapped), B (R,k,K,d), C (R,k,5,d), h0 (R,d), reads/writes/moves (b,T) int64,
    lengths (b,) int64, noise (R,b,T,d) (a (1,1,T,d) array, unread, when has_noise is False).

    A parallel loop even for one chunk: numba then tells LLVM that the arrays do not alias, and the
    same arithmetic ran in 4.8 ms instead of 6.0 compiled serially (add10's batch, one process). Its
    workers must not spin between calls (`dfst.train.fused` picks numba's workqueue threads)."""
    R, b, T, d = A.shape[0], reads.shape[0], reads.shape[1], A.shape[2]
    n_real = np.float32(lengths.sum())
    jobs = R * b
    per_chunk = (jobs + chunks - 1) // chunks
    gA = np.zeros((chunks,) + A.shape, dtype=np.float32)
    gB = np.zeros((chunks,) + B.shape, dtype=np.float32)
    gC = np.zeros((chunks,) + C.shape, dtype=np.float32)
    gh0 = np.zeros((chunks,) + h0.shape, dtype=np.float32)
    parts = np.zeros((chunks, R, 2), dtype=np.float32)  # (loss, vertex) sums per chunk and restart
    for c in numba.prange(chunks):
        states = np.zeros((T, d), dtype=np.float32)
        norms = np.zeros(T, dtype=np.float32)
        work = np.zeros((4, max(d, B.shape[2], C.shape[2])), dtype=np.float32)
        for job in range(c * per_chunk, min(jobs, (c + 1) * per_chunk)):
            r, i = job // b, job % b
            nz = noise[r, i] if has_noise else noise[0, 0]
            lv, vv = _sequence(A[r], AT[r], B[r], C[r], h0[r], reads[i], writes[i], moves[i], lengths[i],
                               nz, has_noise, normalise, loss, n_real, vertex_weight,
                               gA[c, r], gB[c, r], gC[c, r], gh0[c, r], states, norms, work)
            parts[c, r, 0] += lv
            parts[c, r, 1] += vv
    out = parts.sum(axis=0)
    losses = out[:, 0] / (np.float32(2.0) * n_real)
    vertex = out[:, 1] / n_real
    return losses, vertex, gA.sum(axis=0), gB.sum(axis=0), gC.sum(axis=0), gh0.sum(axis=0)
