"""Train the NTM benchmark configs: its own copy task (sanity check) or I/O pairs of a dfst task.

    .venv/bin/python benchmarks/baselines_ntm.py --task copy --seed 0
    .venv/bin/python benchmarks/baselines_ntm.py --task add2 --seed 0 [--config KEY=VALUE ...]

Writes results/baselines/ntm-<task>-s<seed>.json (copy: run_copy's dict; a dfst task:
Result.to_dict()) and prints the figures. One thread, so CPU process times compare.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from dfst.baselines import ntm, parse_config
from dfst.tasks import get_task

# add2: operands up to 8 bits (sequences of 2 x 17 + 1 steps), a few CPU minutes; the ladder stops at 500
# bits (an NTM trained on 8 bits is not expected to get that far; extend with --config eval_digits=...)
ARITH_BENCHMARK = {"steps": 1500, "max_digits": 8, "eval_digits": "4,8,16,20,40,100,200,500"}


def run_copy(seed: int, overrides: list[str], progress: bool) -> dict:
    """The copy benchmark is ntm.COPY_DEFAULTS (lengths 1..10, tests at 10..40), so defaults reproduce it."""
    result = ntm.run_copy(seed, parse_config(overrides, ntm.COPY_DEFAULTS), progress)
    for point in result["curve"]:
        print(f"  step {point['step']:>6}: mean loss {point['loss']:.4g}, held-out exact at length "
              f"{result['max_train_length']}: {point['exact']}/{result['config']['eval_count']}")
    print(f"ntm copy seed {seed}: params {result['params']:,}, sequences {result['samples']:,}, "
          f"train CPU s {result['train_seconds']}, mean loss of the last steps {result['loss']:.4g}")
    for n, exact in result["exact"].items():
        print(f"  length {n:>3}: {exact}/{result['test_count']} copied exactly")
    return result


def run_task(task: str, seed: int, overrides: list[str], progress: bool, path: Path) -> dict:
    config = {**ARITH_BENCHMARK, **parse_config(overrides, ntm.DEFAULTS)}

    def save(result) -> None:  # after every length, so a long ladder leaves what it measured
        path.write_text(json.dumps(result.to_dict(), indent=1) + "\n")
        lv = result.levels[-1]
        print(f"  {lv['digits']:>5} bits: {lv['exact']}/{lv['instances']} exact, random {lv['random_exact']}/"
              f"{lv['random']}; failures {sorted(set(lv['failures']))}", flush=True)
    result = ntm.run(get_task(task), seed=seed, config=config, progress=progress, on_level=save)
    print(f"ntm {task} seed {seed}: params {result.params:,}, samples {result.samples:,}, "
          f"train CPU s {result.train_seconds}; robust LG {result.robust_lg}, "
          f"probabilistic LG {result.probabilistic_lg}; {result.notes}")
    return result.to_dict()

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="copy", help="copy, or a dfst task (add2, ...)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", nargs="*", default=[], help="KEY=VALUE overrides")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    path = Path("results/baselines") / f"ntm-{args.task}-s{args.seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if args.task == "copy":
        result = run_copy(args.seed, args.config, not args.quiet)
    else:
        result = run_task(args.task, args.seed, args.config, not args.quiet, path)
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wall s {time.perf_counter() - start:.0f}; wrote {path}")


if __name__ == "__main__":
    main()
