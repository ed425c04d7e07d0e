"""Teacher-forced hidden states (`dfst.model.hidden_states`): its methods, forward + backward.

    python benchmarks/scan.py [--quick] [--threads N]

For each (batch, T, k, d): milliseconds per forward + backward (gradients to the symbol table A, as
in training) of the methods "scan" (torch's associative_scan), "hillis" (the hand-rolled
Hillis-Steele scan) and "loop" (T steps over the symbol table), of a plain loop over the gathered
per-step matrices A[reads] written here, and the speed-up of each over that plain loop, measured
in the same run (ratios, not absolute times, are
what carries over to another machine). The scans do d× the arithmetic of the loop (matrix products
instead of mat-vecs) in O(log T) sequential steps, so they win on long sequences and small batches.
"""

import json
import sys
import time

import torch

from dfst.model import hidden_states


def gathered_loop(A, h0, reads, mask):
    """The plain loop: one mat-vec per step with the gathered matrices A[reads] (batch, T, d, d)."""
    steps, h, states = A[reads], h0.expand(reads.shape[0], A.shape[-1]), []
    for t, A_t in enumerate(steps.unbind(1)):
        states.append(h)
        h = torch.where(mask[:, t, None], (A_t @ h.unsqueeze(-1)).squeeze(-1), h)
    return torch.stack(states, dim=1)


METHODS = {  # (A (k, d, d), h0, reads, mask) -> states; gradients flow to the symbol table A
    "scan": lambda A, h0, reads, mask: hidden_states(A, h0, reads, mask, method="scan"),
    "hillis": lambda A, h0, reads, mask: hidden_states(A, h0, reads, mask, method="hillis"),
    "loop": gathered_loop,
    "loop_by_symbol": lambda A, h0, reads, mask: hidden_states(A, h0, reads, mask, method="loop"),
}
# (batch, T, k, d): the add2 expert's sizes (k = 3, d = 9) at batch 1 and the full batch of 20, short
# (training) and long sequences; then a mult2 full batch (750 samples, mean length 67, d = 19).
CASES = [(1, 10, 3, 9), (20, 10, 3, 9), (1, 500, 3, 9), (20, 500, 3, 9), (750, 67, 3, 19)]


def time_ms(fn, seconds: float) -> float:
    """Median milliseconds of fn() over repeated calls for about `seconds`."""
    fn()  # warm-up
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 3:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * sorted(times)[len(times) // 2]


def bench_case(batch: int, T: int, k: int, d: int, seconds: float) -> dict:
    g = torch.Generator().manual_seed(0)
    A = (torch.eye(d) + 0.1 * torch.randn(k, d, d, generator=g) / d**0.5).requires_grad_()
    h0 = torch.eye(d)[0]
    reads = torch.randint(0, k, (batch, T), generator=g)
    mask = torch.ones(batch, T, dtype=torch.bool)

    def run(method):
        return lambda: METHODS[method](A, h0, reads, mask).square().sum().backward()

    row = {"batch": batch, "T": T, "k": k, "d": d}
    for method in METHODS:
        row[f"{method}_ms"] = round(time_ms(run(method), seconds), 3)
    for method in ("scan", "hillis", "loop_by_symbol"):
        row[f"{method}_speedup"] = round(row["loop_ms"] / row[f"{method}_ms"], 2)
    return row


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    torch.set_num_threads(threads)
    cases = [c for c in CASES if not quick or c[0] * c[1] * c[3] ** 2 < 10**6]
    rows = [bench_case(*case, seconds=0.3 if quick else 2.0) for case in cases]
    print(json.dumps({"torch": torch.__version__, "threads": threads, "rows": rows}, indent=1))
