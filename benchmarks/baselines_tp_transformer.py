"""Train the Turing-Program transformer baseline's benchmark config on add10 or mult10x1 (n x 1
multiplication) and print its curve.

    .venv/bin/python benchmarks/baselines_tp_transformer.py [--task add10] [--seed 0] [--set K=V ...]

Prints exact match by length (hard instances + random pairs, the DFST's protocol) and writes the
record to results/baselines/tp-transformer-<task>-s<seed>.json. Not run by the test suite: the default
config (5000 steps, lr 3e-3, operands of 2..8 digits) trains for about 20 CPU minutes on one thread.

Measured (seed 0, default config; N = 8, 12, 16, 24, 40 digits):
  add10     train 1238 CPU s, final loss 2e-4: exact 12/29, 1/29, 1/29, 1/29, 1/29 (random 8/10 at
            N = 8, 0/10 beyond); robust LG 0, probabilistic LG 0.
  mult10x1  train 1166 CPU s, final loss 2e-4: exact 18/23, 1/23, 0/23, 0/23, 0/23 (random 10/10 at
            N = 8, 0/10 beyond); robust LG 0, probabilistic LG 8.
Both learn the step in distribution but not beyond it, and fail the repeated-digit hard cases (99..9,
00..0, 11..1) even at N = 8: copying a run of equal digits defeats local n-gram matching. The paper
trains 150M parameters for 200k steps (`--set paper_size=true`, a GPU job).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dfst.baselines import parse_config, tp_transformer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=list(tp_transformer.PROGRAMS), default="add10")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", type=Path, default=Path("results/baselines"))
    args = parser.parse_args()
    config = parse_config(args.set, tp_transformer.DEFAULTS)
    result = tp_transformer.run(tp_transformer.PROGRAMS[args.task].task, seed=args.seed, config=config)
    print(f"params {result.params:,}  samples {result.samples:,}  train CPU s {result.train_seconds:.0f}  "
          f"max train digits {result.max_train_digits}")
    for lv in result.levels:
        print(f"N={lv['digits']:>4}  exact {lv['exact']}/{lv['instances']}  "
              f"random {lv['random_exact']}/{lv['random']}  failed: {', '.join(lv['failures']) or '-'}")
    print(f"robust LG {result.robust_lg}  probabilistic LG {result.probabilistic_lg}  ({result.notes})")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"tp-transformer-{args.task}-s{args.seed}.json"
    path.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
