"""Fast closed-loop execution on the grid (the hot path).

`run_table` runs an automaton given as integer lookup tables inside a numba loop over a dense grid:
one step is a table lookup, a write and a move. It halts on the move S, and reports a missing rule,
the step limit, or leaving the layout's region. Tested equal to the reference simulator
(`dfst.grid.world.run_agent`) on every task.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numba
import numpy as np

from dfst.automata import MOVE_DELTAS, STOP, Transducer
from dfst.grid.grid import Layout
from dfst.grid.world import Outcome

# Outcome codes shared with the compiled kernels.
OUTCOMES = (Outcome.HALTED, Outcome.STEP_LIMIT, Outcome.NO_RULE, Outcome.OFF_LAYOUT,
            Outcome.NON_FINITE)
HALTED, STEP_LIMIT, NO_RULE, OFF_LAYOUT, NON_FINITE = range(len(OUTCOMES))
# Row and column change per move index: dfst.automata's one move table, as arrays numba can read.
_DR = np.array([dr for dr, _ in MOVE_DELTAS], dtype=np.int64)
_DC = np.array([dc for _, dc in MOVE_DELTAS], dtype=np.int64)
_STOP = STOP  # a module global, so numba compiles it in as a constant


@dataclass
class TableRun:
    """Result of one compiled run; `cells` is the final grid (the layout's array, updated)."""

    outcome: Outcome
    steps: int
    head: tuple[int, int]
    state: int
    cells: np.ndarray
    trace: np.ndarray  # (steps, 3) read, write, move; empty unless recorded


@numba.njit(cache=True, nogil=True)
def _run_table(nxt, wrt, mov, cells, r, c, q, max_steps, trace):
    record = trace.shape[0] > 0
    rows, cols = cells.shape
    for t in range(max_steps):
        x = cells[r, c]
        m = mov[q, x]
        if m < 0:
            return NO_RULE, t, r, c, q
        cells[r, c] = wrt[q, x]
        if record:
            trace[t, 0], trace[t, 1], trace[t, 2] = x, wrt[q, x], m
        q = nxt[q, x]
        if m == _STOP:
            return HALTED, t + 1, r, c, q
        r += _DR[m]
        c += _DC[m]
        if r < 0 or r >= rows or c < 0 or c >= cols:
            return OFF_LAYOUT, t + 1, r, c, q
    return STEP_LIMIT, max_steps, r, c, q


def run_table(agent: Transducer, layout: Layout, max_steps: int, *, record: bool = False) -> TableRun:
    """Run `agent` compiled to lookup tables on a copy of the layout's grid."""
    nxt, wrt, mov = agent.tables()
    cells = layout.cells.copy()
    trace = np.zeros((max_steps if record else 0, 3), dtype=np.uint8)
    code, steps, r, c, q = _run_table(nxt, wrt, mov, cells, layout.head[0], layout.head[1],
                                      agent.states.index(agent.initial), max_steps, trace)
    return TableRun(OUTCOMES[code], int(steps), (int(r), int(c)), int(q), cells, trace[:steps])


@numba.njit(cache=True, nogil=True)
def _matvec_t(Wt, x, h, out):
    """out = W[x] @ h from the transposed weights Wt[x] = W[x].T, in float32.

    Each out[i] is summed over j = 0..d-1 in order, exactly as a row-by-row dot product, but the
    loop over i is innermost and contiguous so it vectorises without reordering any sum. Columns
    where h[j] == 0 add exact zeros and are skipped, which makes compiled (one-hot) models fast.
    """
    out[:] = 0
    for j in range(h.shape[0]):
        hj = h[j]
        if hj != 0:
            for i in range(out.shape[0]):
                out[i] += Wt[x, j, i] * hj


@numba.njit(cache=True, nogil=True)
def _argmax(v, lo, hi):
    """Index (from lo) of the first maximum of v[lo:hi] (the documented tie rule)."""
    best = lo
    for i in range(lo + 1, hi):
        if v[i] > v[best]:
            best = i
    return best - lo


@numba.njit(cache=True, nogil=True)
def _run_dfst(Wt, cells, r, c, h, steps_done, max_steps, rescale, out):
    """Advance a DFST closed-loop until it halts or `max_steps` in total; `h` is updated in place.

    One fused product per step: out = [A[x]; B[x]; C[x]] @ h_t gives h_{t+1}, the symbol scores and
    the move scores (float32); symbol and move are argmaxes. Returns (code, steps, r, c); code -1
    means "still running" after this chunk.
    """
    rows, cols = cells.shape
    d = h.shape[0]
    k = Wt.shape[0]
    for t in range(steps_done, max_steps):
        x = cells[r, c]
        _matvec_t(Wt, x, h, out)
        m = _argmax(out, d + k, d + k + 5)
        cells[r, c] = _argmax(out, d, d + k)
        if m == _STOP:
            return HALTED, t + 1, r, c
        scale = np.float32(0.0)
        for i in range(d):
            v = out[i]
            if not np.isfinite(v):
                return NON_FINITE, t + 1, r, c
            h[i] = v
            scale = max(scale, abs(v))
        if rescale and scale > 0:  # argmax readouts are invariant to a positive scale
            h /= scale
        r += _DR[m]
        c += _DC[m]
        if r < 0 or r >= rows or c < 0 or c >= cols:
            return OFF_LAYOUT, t + 1, r, c
    return -1, max_steps, r, c


CHUNK_STEPS = 1 << 22  # steps per kernel call between progress updates
SIMD_FLOATS = 16  # the fused weight rows are padded to a multiple of this (AVX-512 width)


@dataclass
class InstanceResult:
    """The verdict on one instance. Reports keep only `answer_digits`: answers can be huge."""

    name: str
    a: str
    b: str
    outcome: Outcome
    steps: int
    exact: bool
    answer_digits: int  # 0 when there is no answer
    answer: str | None = None  # canonical digits read off the grid after halting

    @property
    def verdict(self) -> str:
        """exact, wrong_answer, no_answer, or why the run did not halt (step_limit, off_layout, ...)."""
        if self.outcome != Outcome.HALTED:
            return str(self.outcome)
        return "exact" if self.exact else ("wrong_answer" if self.answer else "no_answer")


@dataclass(frozen=True)
class DfstWeights:
    """Float32 arrays of a DFST: A (k,d,d), B (k,k,d), C (k,5,d), h0 (d), and the fused transposed
    copy Wt (k, d, d+k+5), Wt[x] = [A[x]; B[x]; C[x]].T, that the engine reads contiguously."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    h0: np.ndarray
    Wt: np.ndarray

    @classmethod
    def of(cls, A, B, C, h0) -> DfstWeights:
        A, B, C, h0 = (np.ascontiguousarray(w, dtype=np.float32) for w in (A, B, C, h0))
        fused = np.concatenate([A, B, C], axis=1).transpose(0, 2, 1)  # (k, d, d+k+5)
        pad = -fused.shape[2] % SIMD_FLOATS  # zero columns: whole vectors, no remainder loop
        Wt = np.ascontiguousarray(np.pad(fused, ((0, 0), (0, 0), (0, pad))))
        return cls(A, B, C, h0, Wt)


def run_dfst(weights: DfstWeights, layout: Layout, max_steps: int, *, rescale: bool = False,
             on_steps=None) -> TableRun:
    """Run a DFST closed-loop on a copy of the layout; `on_steps(n)` is told of progress."""
    cells, h = layout.cells.copy(), weights.h0.copy()
    out = np.empty(weights.Wt.shape[2], dtype=np.float32)
    (r, c), steps, code = layout.head, 0, -1
    while code < 0:
        limit = min(steps + CHUNK_STEPS, max_steps)
        code, new_steps, r, c = _run_dfst(weights.Wt, cells, r, c, h, steps, limit, rescale, out)
        if on_steps is not None:
            on_steps(new_steps - steps)
        steps = new_steps
        if code < 0 and steps >= max_steps:
            code = STEP_LIMIT
    return TableRun(OUTCOMES[code], int(steps), (int(r), int(c)), -1, cells, np.zeros((0, 3), np.uint8))


# The engine's step callable from Python: a proof about the engine (dfst.certify) must reason about
# the very numbers it computes, so this calls the compiled kernels and then does what `_run_dfst`
# does with their result (finiteness check, optional rescale by max|h|). A test checks the two bit
# for bit.


@dataclass(frozen=True)
class Step:
    """What the engine does reading one symbol: written symbol, move, next h (None if not finite)."""

    write: int
    move: int
    h: np.ndarray | None


def engine_step(weights: DfstWeights, h: np.ndarray, x: int, rescale: bool) -> Step:
    """The engine's step from float32 `h` reading symbol `x` (h is not modified)."""
    d, k = h.shape[0], weights.B.shape[1]
    out = np.empty(weights.Wt.shape[2], dtype=np.float32)
    _matvec_t(weights.Wt, x, h, out)
    move = int(_argmax(out, d + k, d + k + len(MOVE_DELTAS)))
    write = int(_argmax(out, d, d + k))
    nxt = out[:d].copy()
    if not np.isfinite(nxt).all():
        return Step(write, move, None)
    scale = np.abs(nxt).max() if d else np.float32(0)
    if rescale and scale > 0:
        nxt /= scale  # float32 division, as the engine's `h /= scale`
    return Step(write, move, nxt)


def first_disagreement(weights: DfstWeights, trace: np.ndarray, rescale: bool):
    """The first step t of an expert's recorded `trace` ((read, write, move) rows, `run_table(...,
    record=True)`) where the engine, from h0 and fed the same reads, writes or moves otherwise, or
    leaves the finite range before the expert halts: (t, h before step t, the engine's Step); None
    when it follows the whole trace. While the two agree the grids are the same, so the engine reads
    what the expert read: one engine step per expert step is the closed-loop run."""
    h = weights.h0.copy()
    for t, (x, write, move) in enumerate(trace):
        step = engine_step(weights, h, int(x), rescale)
        if (step.write, step.move) != (int(write), int(move)) or (step.h is None and move != STOP):
            return t, h, step
        h = step.h
    return None


def direction(h: np.ndarray) -> np.ndarray:
    """h / max|h| in float64 (h itself if zero): the ray of h, which the readouts depend on."""
    top = float(np.abs(h).max()) if h.size else 0.0
    return h.astype(np.float64) / top if top > 0 else h.astype(np.float64)


def judge(task, instance, run: TableRun, answer_at: tuple[int, int]) -> InstanceResult:
    """Exact iff the run halted and the answer read off the grid equals Python's."""
    answer = task.read_answer(run.cells, answer_at) if run.outcome == Outcome.HALTED else None
    exact = answer is not None and answer == task.expected(instance)
    return InstanceResult(instance.name, instance.a, instance.b, run.outcome, run.steps, exact,
                          len(answer) if answer else 0, answer)


def rollout(task, instances, *, weights: DfstWeights | None = None, agent: Transducer | None = None,
            rescale: bool = False, workers: int = 0, on_steps=None) -> list[InstanceResult]:
    """Run a DFST (`weights`) or an automaton (`agent`, default the task's expert) on every instance.

    Instances run in parallel threads (the kernels release the GIL); results keep the input order.
    """
    from concurrent.futures import ThreadPoolExecutor

    def one(instance):
        layout = task.layout(instance)
        limit = task.max_steps(instance)
        if weights is not None:
            run = run_dfst(weights, layout, limit, rescale=rescale, on_steps=on_steps)
        else:
            run = run_table(agent or task.agent, layout, limit)
            if on_steps is not None:
                on_steps(run.steps)
        return judge(task, instance, run, layout.answer)

    workers = workers or min(len(instances), os.cpu_count() or 1) or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, instances))
