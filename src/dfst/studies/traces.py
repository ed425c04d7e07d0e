"""Every expert run behind each stored result, by what it was read for (`dfst.data.reads`): the table of
`dfst table --traces`, and the counts the headline sets beside the PTOs kept.

A result trained since runs recorded their reads carries them (details["traces"]). An older one is
re-derived from its configuration: the sampler is run again with the result's task, samples, length
and seed (samplers are seeded, so it draws what the run drew), and the validation PTOs are the count
the run stored with its automaton. A result whose data came from elsewhere (a file) or whose expert
was a user's agent gives None (shown as "-").
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from dfst.data.reads import digits_span, part, traces_read
from dfst.results.schema import Result
from dfst.results.tables import markdown_of
from dfst.studies.seeds import SYSTEMS

MARK_START, MARK_END = "<!-- traces:start -->", "<!-- traces:end -->"
MACHINES = tuple(SYSTEMS)  # a run's three results
PARTS = ("candidates", "fill-up", "kept", "counterexamples", "validation")
COLUMNS = ("task", "seeds", "sampler", "PTOs kept (digits)", *PARTS, "expert runs read (digits)")


class Rederived:
    """Re-derived reads, each (task, sampler, samples, max_digits, seed) sampled once."""

    def __init__(self) -> None:
        self.sampled: dict[tuple, dict] = {}

    def traces_of(self, result: Result) -> dict | None:
        """The result's reads: stored, or re-derived from its configuration (module docstring)."""
        if result.details.get("traces"):
            return result.details["traces"]
        from dfst.tasks import TASKS

        config = result.config or {}
        if config.get("data") or config.get("agent") or result.task not in TASKS or \
                not {"sampler", "samples", "max_digits", "seed"} <= set(config):
            return None  # data from a file, or a user's agent: nothing to sample again
        sampling = self.sampling(result.task, config["sampler"], config["samples"], config["max_digits"],
                                 config["seed"])
        checked = ((result.details.get("extracted") or {}).get("validation") or {}).get("samples")
        return traces_read(sampling, config["samples"], None if not checked else part(
            checked, validation_digits(config["max_digits"])))

    def sampling(self, task: str, sampler: str, samples: int, max_digits: int, seed: int) -> dict:
        key = (task, sampler, samples, max_digits, seed)
        if key not in self.sampled:
            from dfst.data import SAMPLERS
            from dfst.tasks import get_task

            self.sampled[key] = SAMPLERS[sampler](get_task(task), samples, max_digits, seed).sampling
        return self.sampled[key]


def record_traces(root: Path, derived: Rederived | None = None) -> list[Path]:
    """Store the re-derived reads (`Rederived.traces_of`) in every result of a dfst training run under
    `root` that lacks them, as details["traces"]: nothing else in the file changes, its dfst_version
    included. Every file is checked (a regular file of dfst's) before any is written. Returns those
    rewritten."""
    from dataclasses import replace

    from dfst.io.inputs import read_json
    from dfst.io.outputs import check_output_file, json_bytes, write_atomic
    from dfst.results.schema import is_result

    derived = derived or Rederived()
    found = []
    for path in sorted(root.rglob("*.json")):
        data = read_json(path, "result file")
        if not is_result(data):
            continue
        result = Result.from_dict(data, str(path))
        traces = None if result.system not in MACHINES or result.details.get("traces") else \
            derived.traces_of(result)
        if traces is not None:
            check_output_file(path, force=True)
            found.append((path, replace(result, details={**result.details, "traces": traces})))
    for path, result in found:
        write_atomic(path, json_bytes(result.to_dict()))
    return [path for path, _ in found]


def validation_digits(max_digits: int) -> tuple[int, int]:
    """The lengths training validates at (`dfst.train.validation`): just past the training data's."""
    from dfst.train.validation import VALIDATION_LENGTHS

    return max_digits + 1, max_digits + VALIDATION_LENGTHS


def traces_rows(results: Sequence[Result], derived: Rederived | None = None) -> list[dict]:
    """One row per task and sampler over the seeds' runs (a run's three machines read the same traces:
    the re-fitted weights' results stand for it, else any)."""
    derived = derived or Rederived()
    runs: dict[tuple, dict[int, Result]] = {}
    for r in sorted(trained_runs(results), key=lambda r: r.system != "DFST"):
        runs.setdefault((r.task, (r.config or {}).get("sampler", "-")), {}).setdefault(r.seed, r)
    rows = []
    for (task, sampler), by_seed in sorted(runs.items()):
        found = [t for t in (derived.traces_of(r) for r in by_seed.values()) if t]
        if found:
            rows.append(traces_row(task, sampler, list(by_seed.values()), found))
    return rows


def trained_runs(results: Sequence[Result]) -> list[Result]:
    """The results of dfst's own training runs (any of a run's three machines)."""
    return [r for r in results if r.system in MACHINES]


def traces_row(task: str, sampler: str, runs: list[Result], traces: list[dict]) -> dict:
    kept = f"{_median(r.samples for r in runs)} (≤ {max(r.max_train_digits for r in runs)})"
    row = {"task": task, "seeds": f"{len(traces)} of {len(runs)}", "sampler": sampler,
           "PTOs kept (digits)": kept}
    for name in PARTS:
        counts = [t.get(name, {}).get("runs", 0) for t in traces]
        row[name] = _median(counts) if any(counts) else "-"
    return row | {"expert runs read (digits)": read_text(traces)}


def read_text(traces: list[dict]) -> str:
    """Every expert run read over the seeds, the median and the lengths: `4,195 (1-6)`."""
    spans = [s for s in map(digits_span, traces) if s]
    lengths = f" ({min(s[0] for s in spans)}-{max(s[1] for s in spans)})" if spans else ""
    return _median(t["total"] for t in traces) + lengths


def _median(values) -> str:
    """`4,195`, or `4,195 (4,037-4,310)` where the seeds differ."""
    values = sorted(values)
    middle = f"{statistics.median(values):,.0f}"
    return middle if values[0] == values[-1] else f"{middle} ({values[0]:,}-{values[-1]:,})"


def markdown(rows: list[dict]) -> str:
    return markdown_of(rows, COLUMNS)


def write_table(path: Path, rows: list[dict], source: str) -> None:
    """Rewrite the block between the traces marks of `path` (refused before anything is written when
    they are missing)."""
    from dfst.io.outputs import rewrite_between

    note = (f"Regenerate: `dfst table --traces --readme {path}` (rows from `{source}/`; runs "
            "recorded before reads were stored are re-derived from their configuration). Medians over the "
            "seeds, the range in brackets where they differ.")
    rewrite_between(path, MARK_START, MARK_END, note + "\n\n" + markdown(rows))
