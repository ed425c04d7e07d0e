"""What a rollout will cost, estimated before it starts, so that `solve` and `eval` can refuse a
request beyond `--max-memory` in a second instead of taking the machine's memory for hours.

Everything a run holds grows linearly with the operand lengths n and m; nothing is built to estimate:

    grid      the task's layout, rows × cols uint8 cells (GEOMETRY, tested against `task.layout`),
              held twice (the layout and the engine's working copy), and the digit arrays drawn into it
    operands  the digit strings held, and the int64 draws that generate random ones
    answer    Python's exact answer (int, or libmpdec for long base-10 operands: linear to convert,
              see `dfst.tasks.arith`), the readout of the grid (an index array and the text) and the
              answers kept
    report    JSON of the operands and the answer (`solve --json`, eval's saved failure)

The engines' own working arrays do not grow with N (a DFST run keeps h and one output vector; the
table engine keeps its d×k tables), except the optional trace of `run_table(record=True)`, which the
data recorder uses on short operands only. The step bound is `task.max_steps`.

The per-digit constants below were measured with tracemalloc at 10^6 digits (each phase alone) and
checked against the peak RSS of whole commands on a 2-core, 23 GiB machine (Python 3.11),
above the process's RSS after imports (446 MiB for solve, 499 MiB for eval):

    dfst solve add2 --random N --json    N = 10^7: +19.2 B/digit   3·10^7: +19.7   10^8: +19.0
    dfst solve add10 --random N --json   N = 10^7: +19.2 B/digit   3·10^7: +19.7
    dfst eval CKPT --digits N            N = 3·10^6: add2 +77 B/digit, add10 +85 (29 instances,
                                         2 at a time)
    dfst compile of a k=3, d=5000 agent  +865 MiB for 287 MiB of dense weights (see model/compile.py)

(multiplication is quadratic in steps, so its constants were measured phase by phase instead, at
10^5 to 10^6 digits). The estimate adds up the peak of every phase instead of taking the largest,
so it stays an upper bound: 48 B/digit for solve add2/add10 --random N --json (39 without --json),
78 for mult2/mult10; 131 to 136 B/digit for those evals (2 workers; more cores hold more runs).
Python's own ~0.5 GiB after imports is not counted: --max-memory bounds what the request adds.
With the default bound (half the RAM: 11.8 GiB here) solve add2 takes up to ~2.6·10^8 digits
(3.2·10^8 without --json) and eval ~9·10^7, beyond its own --max-digits 10^7.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dfst.errors import DfstError
from dfst.io.limits import check_work, human_bytes
from dfst.tasks.base import Task
from dfst.tasks.hard import TRAVEL_FAMILY, travel_lengths

# (rows, cols) of the layout for operands of n and m digits, by task operation (tasks/addition.py,
# tasks/multiplication.py and the others draw them; tests/test_budget.py checks these against every task).
GEOMETRY: dict[str, Callable[[int, int], tuple[int, int]]] = {
    "add": lambda n, m: (4, max(n, m) + 3),
    "sub": lambda n, m: (4, max(n, m) + 3),
    "compare": lambda n, m: (4, max(n, m) + 3),
    "mult": lambda n, m: (5, n + m + 3),
    "div": lambda n, m: (6, n + 5),
    "parity": lambda n, m: (3, n + 3),
    "sort": lambda n, m: (3, n + 2),
    "dyck": lambda n, m: (3, n + 2),
    "reverse": lambda n, m: (4, 2 * n + 1),
}
# Digits (symbols) of the answer, at most.
RESULT_DIGITS: dict[str, Callable[[int, int], int]] = {
    "add": lambda n, m: max(n, m) + 1,
    "sub": lambda n, m: max(n, m),
    "mult": lambda n, m: n + m,
    "div": lambda n, m: n + 2,
    "sort": lambda n, m: n,
    "reverse": lambda n, m: n,
    **{op: lambda n, m: 1 for op in ("compare", "parity", "dyck")},
}

# Bytes per digit, measured at 10^6 digits (tracemalloc peaks, rounded up).
DRAW_BYTES = 10     # random_operand: int64 draws (8), their digit indices and text (2)
HARD_BYTES = 9      # the hard-instance generator: a join over one-character strings (8 per digit)
LAYOUT_BYTES = 2    # text_to_digits while drawing: the encoded operand and its digit array
EXACT_BYTES = 4     # exact_answer per answer digit: 0.7 (add2) to 3.05 (mult10, libmpdec)
READOUT_BYTES = 9   # read_row_answer per answer digit: an intp index array (8) and the text (1)
JSON_BYTES = 3      # json.dumps and the write to stdout, per character of operands and answer
# Per instance of an evaluation, whatever its length: the Instance, its strings' headers, the pool's
# future and the InstanceResult (measured 1.9 to 2.2 KiB with 10^5 one-digit random pairs).
INSTANCE_BYTES = 3 << 10
ANSWER_OVERHEAD = 1 << 10  # a one-symbol answer (compare2's <) still allocates ~600 B the first time
PROBE_DIGITS = 8    # the candidate pool of the cover sampler is sized from the hard set at this length
PROBE_LIMIT = 128  # no family of a hard set but the carry travels gains instances past this length


@dataclass(frozen=True)
class Estimate:
    """The planned cost of a request: grid cells and step bound of its largest run, memory by part."""

    digits: tuple[int, int]
    cells: int
    steps: int
    parts: dict[str, int] = field(default_factory=dict)
    replays: int = 0  # steps of the expert on the reference simulator (the replay_steps cap)

    @property
    def bytes(self) -> int:
        return sum(self.parts.values())

    def describe(self) -> str:
        """'about 2.7 TiB (grid 1.8 TiB, operands 0.4 TiB, ...)'."""
        parts = ", ".join(f"{name} {human_bytes(b)}" for name, b in self.parts.items() if b)
        return f"about {human_bytes(self.bytes)} ({parts})"


def _geometry(task: Task, n: int, m: int) -> tuple[int, int]:
    if task.operation in GEOMETRY:
        return GEOMETRY[task.operation](n, m)
    return _measured_geometry(task)(n, m)


@functools.cache
def _measured_geometry(task: Task) -> Callable[[int, int], tuple[int, int]]:
    """A task of your own: an upper bound on its layout's rows and columns, affine in the longer
    operand's length L (fitted on layouts of two L-digit operands, L = 4 and 8, and checked at 12,
    where operands of 12 and 4 digits must fit it too); a layout that grows otherwise is refused."""
    def shape(n: int, m: int) -> tuple[int, int]:
        return task.layout(task.example(n, m)).cells.shape

    (r4, c4), (r8, c8) = shape(4, 4), shape(8, 8)

    def grid(n: int, m: int) -> tuple[int, int]:
        longer = max(n, m)
        return r4 + (r8 - r4) * (longer - 4) // 4, c4 + (c8 - c4) * (longer - 4) // 4

    fits = all(a <= b for probe in ((12, 4), (4, 12)) for a, b in zip(shape(*probe), grid(12, 12)))
    if (r8 - r4) % 4 or (c8 - c4) % 4 or shape(12, 12) != grid(12, 12) or not fits:
        raise DfstError(f"no memory estimate for task {task.name}: its layout does not grow linearly "
                        "in the operands' lengths")
    return grid


def _result_digits(task: Task, n: int, m: int) -> int:
    """Digits of the answer, at most (a task of your own: the width of its layout)."""
    if task.operation in RESULT_DIGITS:
        return RESULT_DIGITS[task.operation](n, m)
    return _geometry(task, n, m)[1]


def _run_parts(task: Task, n: int, m: int) -> dict[str, int]:
    """Memory of one run in flight: its grids, and the exact answer and readout of its result."""
    rows, cols = _geometry(task, n, m)
    result = _result_digits(task, n, m)
    return {"grid": 2 * rows * cols + LAYOUT_BYTES * (n + m),
            "answer": (EXACT_BYTES + READOUT_BYTES + 2) * result + ANSWER_OVERHEAD}


def estimate_of(task: Task, n: int, m: int, parts: dict[str, int]) -> Estimate:
    rows, cols = _geometry(task, n, m)
    return Estimate((n, m), rows * cols, task.step_bound_at(n, m), parts)


def estimate_solve(task: Task, n: int, m: int, *, generate: bool = False,
                   as_json: bool = False) -> Estimate:
    """One run on operands of n and m digits (`generate`: drawn at random; `as_json`: printed)."""
    run = _run_parts(task, n, m)
    result = _result_digits(task, n, m)
    parts = {"grid": run["grid"],
             "operands": n + m + (DRAW_BYTES * max(n, m) if generate else 0),
             "answer": run["answer"],
             "report": JSON_BYTES * (n + m + result) if as_json else 0}
    return estimate_of(task, n, m, parts)


def hard_digits(task: Task, n: int) -> tuple[int, int]:
    """(instances, digits of their distinct operand strings) of the hard set at n digits, from the
    set at min(n, PROBE_LIMIT): no family gains instances past it but the carry travels, whose count
    at n is known (`travel_lengths`); each operand of more than one digit is counted as n digits
    (none is longer, bar subtraction's n+1-digit sums)."""
    probe_n = min(n, PROBE_LIMIT)
    probe = task.hard_families(probe_n)
    travels = [inst for inst in probe if TRAVEL_FAMILY in inst.name]
    count = len(probe)
    long = len({s for inst in probe for s in (inst.a, inst.b) if len(s) > 1})
    if travels and n > probe_n:  # instances and long strings per travel length, times the lengths gained
        lengths = len(travel_lengths(probe_n))
        more = len(travel_lengths(n)) - lengths
        per_length = len({s for inst in travels for s in (inst.a, inst.b) if len(s) > 1})
        count += len(travels) * more // lengths
        long += -(-per_length * more // lengths)
    return count, long * n


def estimate_hard_set(task: Task, n: int, hard: bool = True) -> Estimate:
    """One length of `dfst score`: its hard set held whole (the task makes it as a list; 4 bytes a
    digit of its distinct operands), the random pairs streamed one at a time."""
    return estimate_of(task, n, n, {"hard set": 4 * hard_digits(task, n)[1] if hard else 0})


def estimate_eval(task: Task, n: int, *, random: int, hard: bool, workers: int | None = None) -> Estimate:
    """One length of `dfst eval`: the hard set and `random` pairs of n digits, held together, run
    `workers` at a time (default: as many as `rollout` uses), every answer kept until judged."""
    count, hard_held = hard_digits(task, n) if hard else (0, 0)
    count += random
    workers = workers or min(count, os.cpu_count() or 1) or 1
    run = _run_parts(task, n, n)
    result = _result_digits(task, n, n)
    generate = max(DRAW_BYTES * n if random else 0, HARD_BYTES * n if hard else 0)
    parts = {"grid": workers * run["grid"],
             "operands": hard_held + 2 * n * random + generate + INSTANCE_BYTES * count,
             "answer": workers * run["answer"] + count * result,
             "report": (2 * n + result) * (1 + JSON_BYTES)}  # the first failure, kept and saved
    return estimate_of(task, n, n, parts)


def check_memory(estimate: Estimate, max_memory: int, what: str) -> Estimate:
    """`estimate`, or a one-line DfstError saying what `what` needs when it is over `max_memory`."""
    if estimate.bytes > max_memory:
        raise DfstError(f"{what} needs {estimate.describe()}, over --max-memory {human_bytes(max_memory)} "
                        "(raise it with --max-memory or DFST_MAX_MEMORY)")
    return estimate


def check_rollout(task: Task, n: int, m: int, max_memory: int, what: str, *,
                  generate: bool = False, as_json: bool = False) -> Estimate:
    """The estimate of one run (`estimate_solve`), refused beyond `max_memory`."""
    return check_memory(estimate_solve(task, n, m, generate=generate, as_json=as_json), max_memory, what)


# Peak RSS per recorded PTO step (trace arrays, the dataset's concatenation, the zip buffer):
# measured 20 B/step for `dfst data add2` at 3·10^6 digits (9·10^6 steps) and 17 for mult2 at 400
# digits (6.5·10^5 steps); doubled, and charged on the step bound (3-6x the steps of a random mult).
RECORD_BYTES = 40


def estimate_recording(task: Task, samples: int, max_digits: int, sampler: str = "uniform") -> Estimate:
    """Recording `samples` PTOs of operands of at most `max_digits` digits (dfst data, train), chosen
    by `sampler` (dfst.data.SAMPLERS: the covers replay candidates first, `cover_instances`: its first
    pool once, the second, 8x larger and drawn when the first misses a rule, twice; `contexts`: at
    most POOL_BATCHES batches)."""
    steps = task.step_bound(max_digits, max_digits, task.base)
    run = _run_parts(task, max_digits, max_digits)
    parts = {"grid": run["grid"], "operands": 2 * max_digits * samples, "answer": run["answer"],
             "traces": RECORD_BYTES * steps * samples}
    estimate = estimate_of(task, max_digits, max_digits, parts)
    if sampler == "uniform":
        return estimate
    if sampler == "contexts":  # a pool of up to POOL_BATCHES batches, each PTO held with its contexts
        runs, held = candidate_pool(task, max_digits, POOL_BATCHES * COVER_CANDIDATES)
        first, _ = candidate_pool(task, max_digits, COVER_CANDIDATES)
        batch = 2 * COVER_CANDIDATES * steps  # none drawn past POOL_STEPS: at most one batch over it
        pool_steps = min(runs * steps, max(first * steps, POOL_STEPS + batch))
        pool = with_replays(estimate, task, max_digits, math.ceil(pool_steps / steps), held)
        return replace(pool, parts=pool.parts | {"pool traces": pool_steps * (RECORD_BYTES + CONTEXT_BYTES)})
    (runs, held), (more, more_held) = (candidate_pool(task, max_digits, n * COVER_CANDIDATES) for n in (1, 8))
    return with_replays(estimate, task, max_digits, runs + 2 * more, held + more_held)


def check_recording(task: Task, samples: int, max_digits: int, max_memory: int,
                    sampler: str = "uniform") -> Estimate:
    """`estimate_recording`, refused beyond `max_memory` or the replay_steps cap before a single PTO
    is recorded."""
    return check_estimate(estimate_recording(task, samples, max_digits, sampler), max_memory,
                          f"{samples:,} PTOs of up to {max_digits:,} digits")


def check_estimate(estimate: Estimate, max_memory: int, what: str) -> Estimate:
    """`check_memory`, after the replay_steps cap (dfst.io.limits.WORK_CAPS) on the steps it replays."""
    check_work("replay_steps", estimate.replays, what)
    return check_memory(estimate, max_memory, what)


# ----------------------------------------------------------------------------- replays of the expert
# dfst coverage and the cover samplers run the expert on the reference simulator (`run_agent`,
# record=True): measured 3.3 µs and 138 B per step (mult10 at 20 digits, tracemalloc), one run at a
# time, every instance and the rules its run used kept until the cover is chosen.
REPLAY_BYTES = 160          # per step of the run being replayed: its trace and its visited rules
HELD_INSTANCE_BYTES = 1024  # an Instance held with the set of rules its run used, besides its operands
COVER_CANDIDATES = 1000     # cover_instances' random candidates (each with a leading-zero twin)
POOL_BATCHES = 16           # the contexts sampler's pool: at most this many batches of them,
POOL_STEPS = 1_000_000      # and no batch drawn once its PTOs hold this many steps (about 240 MB)
CONTEXT_BYTES = 200         # a context of the trace-only sampler: a tuple of two observations in a set


def candidate_pool(task: Task, max_digits: int, count: int) -> tuple[int, int]:
    """(instances, bytes held) of `candidate_instances(task, max_digits, rng, count)`: the hard set at
    every length 1..max_digits (its long operands n characters at length n), and `count` random
    pairs of at most max_digits digits with a leading-zero twin each."""
    hard, long = hard_digits(task, PROBE_DIGITS)
    runs = hard * max_digits + 2 * count
    chars = long // PROBE_DIGITS * max_digits * (max_digits + 1) // 2 + 2 * hard * max_digits \
        + 4 * count * max_digits
    return runs, chars


def with_replays(estimate: Estimate, task: Task, max_digits: int, runs: int, held: int) -> Estimate:
    """`estimate` plus `runs` replays of instances of at most `max_digits` digits (`held`: the bytes of
    their operands, kept meanwhile): their steps on the step bound, and the memory of one replay."""
    steps = task.step_bound(max_digits, max_digits, task.base)
    parts = estimate.parts | {"candidates": held + HELD_INSTANCE_BYTES * runs, "replay": REPLAY_BYTES * steps}
    return replace(estimate, parts=parts, replays=estimate.replays + runs * steps)


def estimate_coverage(task: Task, samples: int, max_digits: int, sampler: str) -> Estimate:
    """dfst coverage --samples: the instances `sampler` records, each replayed once."""
    return with_replays(estimate_recording(task, samples, max_digits, sampler), task, max_digits, samples,
                        2 * max_digits * samples)
