"""The results table of docs/research/baselines.md, from the sequence-model policies' stored results.

    python scripts/policy_table.py [RESULTS_DIR]      # default results/baselines; Markdown on stdout

One row per (task, system) over the seeds stored: medians unless a column lists each seed (see the
column notes under the table in docs/research/baselines.md). Reads only `*policy*.json` result files.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from dfst.results import load_results
from dfst.results.over_seeds import by_group
from dfst.results.training_data import samplers_of

COLUMNS = ("task", "system", "sampler", "seeds", "samples", "params", "train-step acc",
           "exact at train length", "robust LG", "probabilistic LG",
           "longest length with a random pair exact", "last length run", "train CPU s")
TASK_ORDER = ("add2", "add10", "mult2")


def row(task: str, system: str, results: list) -> list[str]:
    """The table's cells for the seeds `results` (stored results, in seed order) of one system."""
    runs = [r.to_dict() for r in results]

    def each(cell) -> str:
        return ", ".join(cell(r) for r in runs)

    def at_train_length(r: dict) -> str:
        level = next(lv for lv in r["levels"] if lv["digits"] == r["max_train_digits"])
        return f"{level['exact']}/{level['instances']}"

    def longest_random(r: dict) -> str:
        return str(max((lv["digits"] for lv in r["levels"] if lv.get("random_exact")), default=0))

    def last_run(r: dict) -> str:
        return f"{r['levels'][-1]['digits'] if r['levels'] else 0} ({r['details']['stopped_by']})"

    median = statistics.median
    return [task, system, samplers_of(results), str(len(runs)),
            f"{runs[0]['samples']:,}", f"{runs[0]['params']:,}",
            f"{median(r['details']['train_step_accuracy'] for r in runs):.3f}", each(at_train_length),
            f"{median(r['robust_lg'] for r in runs):,.0f}",
            f"{median(r['probabilistic_lg'] for r in runs):,.0f}",
            each(longest_random), each(last_run), f"{median(r['train_seconds'] for r in runs):.1f}"]


def main(results: Path) -> str:
    found = [r for r in load_results(results) if "policy" in r.system]
    groups = by_group(sorted(found, key=lambda r: r.seed), lambda r: (r.task, r.system))
    keys = sorted(groups, key=lambda key: (TASK_ORDER.index(key[0]) if key[0] in TASK_ORDER else 99, key))
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(*key, groups[key])) + " |" for key in keys]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else "results/baselines")))
