"""Rollout throughput and memory, as `dfst bench rollout --json` prints them.

    python benchmarks/rollout.py [--quick]

Ratios are measured in the same run: the numba engine against a per-step PyTorch loop on the same
dense model and instance (see dfst.studies.bench). Absolute steps/s depend on the machine.
"""

import json
import sys

from dfst.studies.bench import bench_memory, bench_rollout

if __name__ == "__main__":
    quick = "--quick" in sys.argv
    rows = bench_rollout(digits=30_000 if quick else 300_000, torch_steps=5_000 if quick else 20_000)
    memory = bench_memory(10_000 if quick else 1_000_000)
    print(json.dumps({"rollout": rows, "memory": memory}, indent=1))
