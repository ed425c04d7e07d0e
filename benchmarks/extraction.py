"""Extraction with its compiled loops against their plain definitions, on a trained run, in one process.

    .venv/bin/python benchmarks/extraction.py RUN [--checkpoint trained] [--repeats 3]

RUN is a `dfst train` run directory (its data.pto.zip and the checkpoint named). Times
`dfst.extract.extract` (the default method: cluster, fold, merge nearest-first) as dfst runs it, and
with leader clustering and nearest-first merging swapped for the plain numpy and Python definitions
of tests/extract_reference.py; CPU seconds, best of `--repeats`, after one untimed call of each
(numba's compilation). Both must read off the same automaton.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import dfst.extract.merge as merge
from dfst.data import load_dataset
from dfst.extract import extract
from dfst.model.checkpoint import load_checkpoint
from dfst.tasks import get_task

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from extract_reference import reference_cluster, reference_merge  # noqa: E402


def plain_merge_nearest(part, centres):
    """`merge._merge_nearest` by the reference: the folded partition's roots and their edges."""
    roots = [part.find(c) for c in range(len(centres))]
    edges = {(c, x): tuple(int(v) for v in part.table[c, x]) for c in set(roots)
             for x in range(part.table.shape[1]) if part.table[c, x, 0] != merge.ABSENT}
    return np.array(reference_merge(edges, centres, roots), dtype=np.int64)


def best_time(call, repeats: int) -> tuple[float, object]:
    call()
    times, found = [], None
    for _ in range(repeats):
        start = time.process_time()
        found = call()
        times.append(time.process_time() - start)
    return min(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--checkpoint", default="trained")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    model = load_checkpoint(args.run / args.checkpoint)[0]
    data = load_dataset(args.run / "data.pto.zip")
    agent = get_task(model.config.task).agent

    def run():
        return extract(model, data, agent=agent).agent

    compiled, ours = best_time(run, args.repeats)
    merge.cluster, merge._merge_nearest = reference_cluster, plain_merge_nearest
    plain, theirs = best_time(run, args.repeats)
    tables = zip(ours.tables(), theirs.tables())
    same = ours.states == theirs.states and all(np.array_equal(a, b) for a, b in tables)
    print(f"{model.config.task} {args.run}/{args.checkpoint}: {ours.d} states; compiled {compiled:.2f} CPU s,"
          f" plain {plain:.2f} CPU s, ratio {plain / compiled:.1f}x; same automaton: {same}")


if __name__ == "__main__":
    main()
