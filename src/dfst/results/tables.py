"""Tables of results: the comparison over systems (`dfst table`, README's comparison block), and the
rows of `dfst report` (evaluated checkpoints) and `dfst report-runs` (training runs).

`table_rows` groups results by (system, task) and aggregates over seeds: the robust and
probabilistic LG as the best and the median seed, the rest as medians.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from dfst.io.outputs import replace_between, rewrite_between
from dfst.results.certified import certified_counts, certified_text
from dfst.results.over_seeds import by_group
from dfst.results.schema import Result
from dfst.results.store import load_results, read_checkpoint_result, read_run_result
from dfst.results.training_data import NO_PTOS, samplers_of
from dfst.results.wording import lg_cell
from dfst.tasks import TASKS

MARK_START, MARK_END = "<!-- comparison:start -->", "<!-- comparison:end -->"
DISPLAY_COLUMNS = ("system", "task", "seeds", "samples", "PTO sampler", "params", "max train digits",
                   "robust LG", "probabilistic LG", "certified (all / bounded / none)", "train s", "hardware")
REPORT_COLUMNS = ("task", "model", "params", "robust LG", "probabilistic LG", "largest N tested", "h mode",
                  "eval seconds")
# report-runs: the LG of RUN/model, the model the run delivers (fine-tuned where the recipe fine-tunes;
# what dfst eval RUN scores), who measured it (dfst eval RUN where it ran, else the run's own check),
# and the LG of the trained weights before fine-tuning (RUN/trained, h rescaled) in a column of its
# own, "-" for a run not fine-tuned; beside the PTOs kept, every expert run the learner read and what
# its own check on held-out PTOs found (`dfst.train.agreement`)
RUN_COLUMNS = ("run", "task", "samples", "expert runs read", "held-out check", "d", "iterations",
               "final loss", "model", "robust LG (model)",
               "probabilistic LG (model)", "model tested by", "robust LG (trained, before fine-tuning)",
               "CPU seconds", "wall seconds")


# ----------------------------------------------------------------------------- the comparison


def comparison(results: Path, readme: Path | None = None, *, sweeps: bool = False) -> list[dict]:
    """`dfst table`: the rows of every result under `results` (a sweep's cells only with `sweeps`);
    rewrites `readme`'s comparison block when given."""
    rows = table_rows(load_results(results, sweeps=sweeps))
    if readme is not None:
        write_readme(readme, rows, f"Regenerate: `dfst table --readme {readme}` (rows from "
                     f"`{results}/`). LG: best (median) over seeds; other numbers are medians.")
    return rows


def table_rows(results: Sequence[Result]) -> list[dict]:
    """One row per (system, task), seeds aggregated: DFST rows first, then by system and task."""
    groups = by_group(results, lambda r: (r.system, r.task))
    tasks = list(TASKS)
    order = sorted(groups, key=lambda key: (not key[0].startswith("DFST"), key[0].lower(),
                                            tasks.index(key[1]) if key[1] in tasks else len(tasks), key[1]))
    return [_aggregate(groups[key]) for key in order]


def _aggregate(runs: list[Result]) -> dict:
    def median(name: str):
        return _median([getattr(r, name) for r in runs])

    searched = [r.sample_search() for r in runs]
    reached = [samples for samples, _ in searched if samples is not None]
    caps = [cap for _, cap in searched if cap is not None]
    return {
        "system": runs[0].system, "task": runs[0].task, "seeds": len(runs),
        "samples": _median(reached), "samples_reached": len(reached), "samples_cap": max(caps, default=None),
        "sampler": samplers_of(runs),
        "params": median("params"),
        "max_train_digits": median("max_train_digits"),
        "robust_lg": max(r.robust_lg for r in runs), "robust_lg_median": median("robust_lg"),
        "probabilistic_lg": max(r.probabilistic_lg for r in runs),
        "probabilistic_lg_median": median("probabilistic_lg"),
        "certified": certified_counts(runs),
        "train_seconds": round(float(statistics.median(r.train_seconds for r in runs)), 1),
        "hardware": ", ".join(sorted({r.hardware for r in runs})),
    }


def _median(values: list) -> int | float | None:
    if not values:
        return None
    value = statistics.median(values)
    return int(value) if float(value).is_integer() else value


def samples_text(row: dict) -> str:
    """The median samples of the seeds that reached a robust model, and how many did where some
    did not: "40", "40 (2 of 3 seeds; 1 not reached up to 5,120)", "not reached (up to 5,120)"."""
    reached, seeds, cap = row.get("samples_reached", row["seeds"]), row["seeds"], row.get("samples_cap")
    if reached == seeds:
        return _num(row["samples"])
    if reached == 0:
        return f"not reached (up to {cap:,})"
    return f"{_num(row['samples'])} ({reached} of {seeds} seeds; {seeds - reached} not reached up to {cap:,})"


def display_rows(rows: list[dict]) -> list[dict]:
    """Rows for people: LG as "best (median)" over seeds, medians elsewhere."""
    return [{"system": r["system"], "task": r["task"], "seeds": r["seeds"], "samples": samples_text(r),
             "PTO sampler": r.get("sampler", NO_PTOS),
             "params": _num(r["params"]), "max train digits": _num(r["max_train_digits"]),
             "robust LG": f"{r['robust_lg']:,} ({_num(r['robust_lg_median'])})",
             "probabilistic LG": f"{r['probabilistic_lg']:,} ({_num(r['probabilistic_lg_median'])})",
             "certified (all / bounded / none)": certified_text(r.get("certified")),
             "train s": r["train_seconds"], "hardware": r["hardware"]} for r in rows]


def _num(value: int | float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def markdown_table(rows: list[dict]) -> str:
    return markdown_of(display_rows(rows), DISPLAY_COLUMNS)


def markdown_of(rows: list[dict], columns: Sequence[str]) -> str:
    """`rows` as a Markdown table of `columns`, in that order."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    """`text` with everything strictly between the comparison markers replaced by `block`."""
    return replace_between(text, MARK_START, MARK_END, block, "the README")


def write_readme(path: Path, rows: list[dict], note: str) -> None:
    rewrite_between(path, MARK_START, MARK_END, note + "\n\n" + markdown_table(rows))


# ----------------------------------------------------------------------------- checkpoints and runs


def report_rows(checkpoints: Sequence[Path]) -> list[dict]:
    """`dfst report`: one row per evaluated checkpoint directory (REPORT_COLUMNS); a run directory
    stands for its trained model, as in `dfst eval`."""
    return [checkpoint_row(result) for result in checkpoint_results(checkpoints)]


def checkpoint_results(checkpoints: Sequence[Path]) -> list[Result]:
    """The results of evaluated checkpoint directories (a run directory: its model, as `dfst eval`)."""
    from dfst.io.targets import resolve

    return [read_checkpoint_result(resolve(path).checkpoint) for path in checkpoints]


def checkpoint_display_row(result: Result) -> dict:
    """`checkpoint_row` for people: an LG of 0 says at which length the model fails."""
    return checkpoint_row(result) | {"robust LG": lg_cell(result.robust_lg, result.levels),
                                     "probabilistic LG": lg_cell(result.probabilistic_lg, result.levels)}


def checkpoint_row(result: Result) -> dict:
    """A checkpoint's result (`Result.from_eval_report`) as a row of `dfst report`."""
    return {"task": result.task, "model": f"{result.system} ({result.details['checkpoint']})",
            "params": result.params, "robust LG": result.robust_lg,
            "probabilistic LG": result.probabilistic_lg,
            "largest N tested": max(lv["digits"] for lv in result.levels),
            "h mode": result.details["mode"], "eval seconds": result.details["eval_seconds"]}


def run_rows(runs: Sequence[Path]) -> list[dict]:
    """`dfst report-runs`: one row per training run directory (RUN_COLUMNS)."""
    return [run_row(read_run_result(run)) for run in runs]


def run_row(result: Result) -> dict:
    """A run's result (`dfst.results.store.read_run_result`) as a row of `dfst report-runs`: the LG of
    the model the run delivers and, where it was fine-tuned, of the trained weights before; "CPU
    seconds" is the process time of the run (every resumed segment, fine-tuning included; "n/a" for a
    run from before dfst counted it), "wall seconds" the time on the clock. Numbers stay numbers (the
    JSON and CSV); `run_display_row` words them for people."""
    details = result.details
    loss = details["final_loss"]
    cpu = result.train_seconds
    return {"run": details["run"], "task": result.task, "samples": result.samples,
            "expert runs read": details.get("traces_read", "-"), "held-out check": details.get("check", "-"),
            "d": details["d"],
            "iterations": details["iterations"], "final loss": f"{loss:.2e}" if loss is not None else "nan",
            "model": details.get("model", "trained"),
            "robust LG (model)": result.robust_lg, "probabilistic LG (model)": result.probabilistic_lg,
            "model tested by": _tested_by(result),
            "robust LG (trained, before fine-tuning)": details["trained_robust_lg"]
            if details.get("fine_tuned") else "-",
            "CPU seconds": "n/a" if cpu is None else round(cpu, 1),
            "wall seconds": round(details["wall_seconds"], 1)}


def run_display_row(result: Result) -> dict:
    """`run_row` for people: an LG of 0 says at which length the model fails (never "robust to 0")."""
    row = run_row(result)
    row["robust LG (model)"] = lg_cell(result.robust_lg, result.levels)
    row["probabilistic LG (model)"] = lg_cell(result.probabilistic_lg, result.levels)
    if result.details.get("fine_tuned"):
        trained = result.details.get("trained_levels", [])
        row["robust LG (trained, before fine-tuning)"] = lg_cell(result.details["trained_robust_lg"], trained)
    return row


def _tested_by(result: Result) -> str:
    """Who measured the model's LG, and up to which length: 'dfst eval (plain h), 10 to 10,000 digits'."""
    if not result.levels:
        return "not evaluated"
    lengths = sorted(lv["digits"] for lv in result.levels)
    span = f"{lengths[0]:,} digits" if len(lengths) == 1 else f"{lengths[0]:,} to {lengths[-1]:,} digits"
    return f"{result.details.get('tested_by') or 'the run'}, {span}"
