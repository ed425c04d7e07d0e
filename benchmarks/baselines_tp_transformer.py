"""Train the Turing-Program transformer baseline's benchmark config on add10 and print its curve.

    .venv/bin/python benchmarks/baselines_tp_transformer.py [--seed 0] [--set KEY=VALUE ...]

Prints exact match by length (hard instances + random pairs, the DFST's protocol) and writes the
record to results/baselines/tp-transformer-add10-s<seed>.json. Not run by the test suite: the default
config trains for about 18 CPU minutes on one thread (42 minutes of wall time on shared cores).

Measured (seed 0, default config): 6/29 exact at 8 digits, 2/29 at 12-40 (only the all-zero cases),
robust and probabilistic LG 0. The model copies lines but has not learned the per-step digit sum
(teacher-forced errors sit on the new result digits): this budget is far below the paper's 200k
steps; `--set paper_size=true` gives the paper's 150M-parameter setup for a GPU.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dfst.baselines import tp_transformer
from dfst.cli.baselines import parse_config
from dfst.tasks import get_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", type=Path, default=Path("results/baselines"))
    args = parser.parse_args()
    config = parse_config(args.set, tp_transformer.DEFAULTS)
    result = tp_transformer.run(get_task("add10"), seed=args.seed, config=config)
    print(f"params {result.params:,}  samples {result.samples:,}  train CPU s {result.train_seconds:.0f}  "
          f"max train digits {result.max_train_digits}")
    for lv in result.levels:
        print(f"N={lv['digits']:>4}  exact {lv['exact']}/{lv['instances']}  "
              f"random {lv['random_exact']}/{lv['random']}  failed: {', '.join(lv['failures']) or '-'}")
    print(f"robust LG {result.robust_lg}  probabilistic LG {result.probabilistic_lg}  ({result.notes})")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"tp-transformer-add10-s{args.seed}.json"
    path.write_text(json.dumps(result.to_json(), indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
