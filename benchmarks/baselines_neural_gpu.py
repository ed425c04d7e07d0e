"""Train the Neural GPU benchmark config and score it on the protocol's ladder (20 ... 2,000 bits).

    .venv/bin/python benchmarks/baselines_neural_gpu.py --task add2 --seed 0 [--config KEY=VALUE ...]

Writes results/baselines/neural-gpu-<task>-s<seed>.json (Result.to_dict()) and prints the
per-level figures. One thread, so CPU process time is comparable between runs on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from dfst.baselines import neural_gpu, parse_config
from dfst.tasks import get_task

# neural_gpu.DEFAULTS is the benchmark config: about 3 CPU minutes of training and 9 of evaluation (up to
# 2,000 bits) for add2 on one core
BENCHMARK = {"threads": 1}


def report(result, path: Path, wall: float) -> None:
    print(f"{result.system} {result.task} seed {result.seed}: params {result.params:,}, "
          f"samples {result.samples:,}, train CPU s {result.train_seconds}, wall s {wall:.0f}")
    print(f"robust LG {result.robust_lg}, probabilistic LG {result.probabilistic_lg}; {result.notes}")
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="add2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", nargs="*", default=[], help="KEY=VALUE overrides")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = {**BENCHMARK, **parse_config(args.config, neural_gpu.DEFAULTS)}
    start = time.perf_counter()
    path = Path("results/baselines") / f"neural-gpu-{args.task}-s{args.seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)

    def save(result) -> None:  # after every length, so a long ladder leaves what it measured
        path.write_text(json.dumps(result.to_dict(), indent=1) + "\n")
        lv = result.levels[-1]
        print(f"  {lv['digits']:>5} bits: {lv['exact']}/{lv['instances']} exact, random {lv['random_exact']}/"
              f"{lv['random']}; failures {sorted(set(lv['failures']))}", flush=True)
    result = neural_gpu.run(get_task(args.task), seed=args.seed, config=config, progress=not args.quiet,
                            on_level=save)
    report(result, path, time.perf_counter() - start)

if __name__ == "__main__":
    main()
