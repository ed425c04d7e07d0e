"""README's headline: the paper's Table 1 beside dfst's stored results, each row named by the machine
that made its number, with the PTOs kept and every expert run read.

One training run delivers three machines, each scored under the same protocol and stored as its own
result (`dfst.studies.seeds`):
    gradient descent's own weights     RUN/trained   system "DFST (before fine-tuning)"
    the automaton read off them        RUN/extracted system "DFST (extracted)"
    the weights re-fitted to it        RUN/model     system "DFST"
The paper's row is what the paper states: its sample count and training length (how the samples were
chosen is not published), its parameter count, and its robust LG, a lower bound from one model.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from dfst.io.outputs import rewrite_between
from dfst.results.certified import certified_counts, certified_text
from dfst.results.schema import Result
from dfst.train.recipes import TARGET_DIGITS

MARK_START, MARK_END = "<!-- headline:start -->", "<!-- headline:end -->"
# The machines of one run, in the order a reader meets them, with the words the table uses.
MACHINES = {"DFST (before fine-tuning)": "gradient descent's own weights (`RUN/trained`)",
            "DFST (extracted)": "the automaton read off them (`RUN/extracted`)",
            "DFST": "the weights re-fitted to that automaton (`RUN/model`)"}
# The paper's Table 1 (samples, max training digits, parameters, robust LG: a lower bound).
PAPER = {"add2": (20, 3, 1_020, 3_850), "add10": (225, 3, 8_900, 2_450), "mult2": (750, 5, 5_280, 600),
         "mult10": (10_000, 5, 162_108, 180)}
COLUMNS = ("task", "what made the number", "PTOs kept (digits)", "expert runs read (digits)", "size",
           "seeds robust at the target", "robust LG (median, best)",
           "proved: every length / bounded / no (seeds)")


def headline_rows(results: Sequence[Result]) -> list[dict]:
    """Per paper task: the paper's row, then one row per machine over the stored seeds."""
    rows = []
    for task, (samples, digits, params, robust) in PAPER.items():
        rows.append({"task": task, "what made the number": "the paper: gradient descent's weights",
                     "PTOs kept (digits)": f"{samples:,} (≤ {digits}); selection not published",
                     "expert runs read (digits)": "not published", "size": f"{params:,} params",
                     "seeds robust at the target": "one model; seeds not published",
                     "robust LG (median, best)": f"{robust:,} (a lower bound)",
                     "proved: every length / bounded / no (seeds)": "not claimed"})
        for system, words in MACHINES.items():
            runs = [r for r in results if r.task == task and r.system == system]
            if runs:
                rows.append(machine_row(task, words, runs))
    return rows


def machine_row(task: str, words: str, runs: list[Result]) -> dict:
    target = TARGET_DIGITS[task]
    robust = [r.robust_lg for r in runs]
    return {"task": task, "what made the number": f"dfst: {words}",
            "PTOs kept (digits)": kept_text(runs), "expert runs read (digits)": read_text(runs),
            "size": size_text(runs),
            "seeds robust at the target": f"{sum(lg >= target for lg in robust)} of {len(runs)} at "
                                          f"{target:,}",
            "robust LG (median, best)": f"{statistics.median(robust):,.0f}, {max(robust):,}",
            "proved: every length / bounded / no (seeds)": certified_text(certified_counts(runs))}


def size_text(runs: list[Result]) -> str:
    """An automaton's states and rules; a DFST's parameters (over the seeds)."""
    if runs[0].system == "DFST (extracted)":
        found = [r.details.get("extracted") or {} for r in runs]
        if all("states" in f for f in found):
            return f"{_span(f['states'] for f in found)} states, {_span(f['rules'] for f in found)} rules"
    return f"{_span(r.params for r in runs)} params"


def kept_text(runs: list[Result]) -> str:
    return f"{_span(r.samples for r in runs)} (≤ {_span(r.max_train_digits for r in runs)})"


def read_text(runs: list[Result]) -> str:
    """Every expert run the learner read, over the seeds: `4,195 (1-6)`; '-' where not recorded."""
    traces = [r.details.get("traces") for r in runs]
    if any(t is None for t in traces):
        return "-"
    digits = [d for t in traces for part in t.values() if isinstance(part, dict) and part.get("runs")
              for d in part.get("digits") or ()]
    span = f" ({min(digits)}-{max(digits)})" if digits else ""
    return _span(t["total"] for t in traces) + span


def _span(values) -> str:
    """`20`, or `4,634-8,568` where the seeds differ."""
    values = sorted(set(values))
    return f"{values[0]:,}" if len(values) == 1 else f"{values[0]:,}-{values[-1]:,}"


def markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write_headline(readme: Path, rows: list[dict], source: str) -> None:
    """Rewrite the block between README's headline marks (atomically; a README without them is refused
    before anything is written)."""
    note = f"Regenerate: `dfst table --headline --readme {readme.name}` (rows from `{source}/`)."
    rewrite_between(readme, MARK_START, MARK_END, note + "\n\n" + markdown(rows))
