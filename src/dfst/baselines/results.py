"""Stored results and the comparison table: one BaselineResult JSON per (system, task, seed).

`dfst baseline` writes `results/baselines/<name>-<task>-s<seed>.json`; `dfst reproduce` writes the
DFST's own rows in the same schema (system "DFST"). `table_rows` groups every result under a
directory by (system, task) and aggregates over seeds: the robust and probabilistic LG as the best
and the median seed, the rest as medians. A JSON file without a "system" key is not a result and is
skipped; a result file with missing or ill-typed fields is a one-line error naming it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import fields
from pathlib import Path

from dfst import __version__
from dfst.baselines.common import BaselineResult
from dfst.errors import DfstError
from dfst.inputs import read_json
from dfst.outputs import check_output_file, make_directory, replace_between, rewrite_between, write_atomic
from dfst.tasks import TASKS

RESULTS_DIR = Path("results")
REQUIRED = {"system": str, "task": str, "seed": int, "samples": int, "params": int,
            "max_train_digits": int, "robust_lg": int, "probabilistic_lg": int,
            "train_seconds": (int, float), "hardware": str}
MARK_START, MARK_END = "<!-- comparison:start -->", "<!-- comparison:end -->"


def default_path(name: str, task: str, seed: int, root: Path = RESULTS_DIR) -> Path:
    return root / "baselines" / f"{name}-{task}-s{seed}.json"


def save_result(result: BaselineResult, path: Path, *, overwrite: bool = False) -> None:
    """Write the result JSON atomically; refuses to replace a file unless told to."""
    save_record(result.to_json(), path, overwrite=overwrite)


def save_record(record: dict, path: Path, *, overwrite: bool = False) -> None:
    """Write any result-like dict (a baseline's own task too) as JSON, atomically, never over a file
    unless told to."""
    make_directory(path.parent, "results directory")
    check_output_file(path, force=overwrite)
    write_atomic(path, (json.dumps({"dfst_version": __version__} | record, indent=1) + "\n").encode())


def load_results(root: Path) -> list[dict]:
    """Every result-shaped JSON under `root` (recursively), checked, in path order."""
    if not root.is_dir():
        raise DfstError(f"results directory {root} does not exist")
    found = []
    for path in sorted(root.rglob("*.json")):
        data = read_json(path, "result file")  # a regular file, size and depth caps, no NaN
        if isinstance(data, dict) and "system" in data:
            found.append(_checked(path, data))
    return found


def _checked(path: Path, data: dict) -> dict:
    for key, kind in REQUIRED.items():
        value = data.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise DfstError(f"{path} is a malformed result: {key!r} is {value!r}")
    known = {f.name for f in fields(BaselineResult)}
    return {k: v for k, v in data.items() if k in known}


def table_rows(results: list[dict]) -> list[dict]:
    """One row per (system, task), seeds aggregated: DFST rows first, then by system and task."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        groups.setdefault((r["system"], r["task"]), []).append(r)
    tasks = list(TASKS)
    order = sorted(groups, key=lambda key: (not key[0].startswith("DFST"), key[0].lower(),
                                            tasks.index(key[1]) if key[1] in tasks else len(tasks), key[1]))
    return [_aggregate(groups[key]) for key in order]


def _aggregate(runs: list[dict]) -> dict:
    def median(key: str):
        value = statistics.median(r[key] for r in runs)
        return int(value) if float(value).is_integer() else value

    return {
        "system": runs[0]["system"], "task": runs[0]["task"], "seeds": len(runs),
        "samples": median("samples"), "params": median("params"),
        "max_train_digits": median("max_train_digits"),
        "robust_lg": max(r["robust_lg"] for r in runs), "robust_lg_median": median("robust_lg"),
        "probabilistic_lg": max(r["probabilistic_lg"] for r in runs),
        "probabilistic_lg_median": median("probabilistic_lg"),
        "train_seconds": round(float(statistics.median(r["train_seconds"] for r in runs)), 1),
        "hardware": ", ".join(sorted({r["hardware"] for r in runs})),
    }


def display_rows(rows: list[dict]) -> list[dict]:
    """Rows for people: LG as "best (median)" over seeds, medians elsewhere."""
    return [{"system": r["system"], "task": r["task"], "seeds": r["seeds"], "samples": _num(r["samples"]),
             "params": _num(r["params"]), "max train digits": _num(r["max_train_digits"]),
             "robust LG": f"{r['robust_lg']:,} ({_num(r['robust_lg_median'])})",
             "probabilistic LG": f"{r['probabilistic_lg']:,} ({_num(r['probabilistic_lg_median'])})",
             "train s": r["train_seconds"], "hardware": r["hardware"]} for r in rows]


DISPLAY_COLUMNS = ("system", "task", "seeds", "samples", "params", "max train digits", "robust LG",
                   "probabilistic LG", "train s", "hardware")


def _num(value: int | float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def markdown_table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(DISPLAY_COLUMNS) + " |", "|" + "---|" * len(DISPLAY_COLUMNS)]
    lines += ["| " + " | ".join(str(r[c]) for c in DISPLAY_COLUMNS) + " |" for r in display_rows(rows)]
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    """`text` with everything strictly between the comparison markers replaced by `block`."""
    return replace_between(text, MARK_START, MARK_END, block, "the README")


def write_readme(path: Path, rows: list[dict], note: str) -> None:
    rewrite_between(path, MARK_START, MARK_END, note + "\n\n" + markdown_table(rows))
