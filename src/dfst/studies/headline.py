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
from dfst.results.tables import markdown_of
from dfst.studies.traces import Rederived, read_text
from dfst.train.recipes import TARGET_DIGITS

MARK_START, MARK_END = "<!-- headline:start -->", "<!-- headline:end -->"
# The machines of one run, in the order a reader meets them, with the words the table uses.
MACHINES = {"DFST (before fine-tuning)": "gradient descent's own weights (`RUN/trained`)",
            "DFST (extracted)": "the automaton read off them (`RUN/extracted`)",
            "DFST": "the weights re-fitted to that automaton (`RUN/model`)"}
# The paper's Table 1 (samples, max training digits, parameters, robust LG: a lower bound).
PAPER = {"add2": (20, 3, 1_020, 3_850), "add10": (225, 3, 8_900, 2_450), "mult2": (750, 5, 5_280, 600),
         "mult10": (10_000, 5, 162_108, 180)}
PROVED = "proved: every length / bounded / refuted / undecided (seeds)"
COLUMNS = ("task", "what made the number", "PTOs kept (digits)", "expert runs read (digits)", "size",
           "seeds robust at the target", "robust LG (median, best)",
           PROVED)


def headline_rows(results: Sequence[Result], derived: Rederived | None = None) -> list[dict]:
    """Per paper task: the paper's row, then one row per machine over the stored seeds (their expert runs
    read as stored, or re-derived: `dfst.studies.traces`)."""
    derived = derived or Rederived()
    rows = []
    for task, (samples, digits, params, robust) in PAPER.items():
        rows.append({"task": task, "what made the number": "the paper: gradient descent's weights",
                     "PTOs kept (digits)": f"{samples:,} (≤ {digits}); selection not published",
                     "expert runs read (digits)": "not published", "size": f"{params:,} params",
                     "seeds robust at the target": "one model; seeds not published",
                     "robust LG (median, best)": f"{robust:,} (a lower bound)",
                     PROVED: "not claimed"})
        for system, words in MACHINES.items():
            runs = [r for r in results if r.task == task and r.system == system]
            if runs:
                rows.append(machine_row(task, words, runs, [derived.traces_of(r) for r in runs]))
    return rows


def machine_row(task: str, words: str, runs: list[Result], traces: list[dict | None]) -> dict:
    target = TARGET_DIGITS[task]
    robust = [r.robust_lg for r in runs]
    return {"task": task, "what made the number": f"dfst: {words}",
            "PTOs kept (digits)": kept_text(runs),
            "expert runs read (digits)": "-" if None in traces else read_text(traces),
            "size": size_text(runs),
            "seeds robust at the target": f"{sum(lg >= target for lg in robust)} of {len(runs)} at "
                                          f"{target:,}",
            "robust LG (median, best)": f"{statistics.median(robust):,.0f}, {max(robust):,}",
            PROVED: proved_text(runs)}


def size_text(runs: list[Result]) -> str:
    """An automaton's states and rules; a DFST's parameters (over the seeds)."""
    if runs[0].system == "DFST (extracted)":
        found = [r.details.get("extracted") or {} for r in runs]
        if all("states" in f for f in found):
            return f"{_span(f['states'] for f in found)} states, {_span(f['rules'] for f in found)} rules"
    return f"{_span(r.params for r in runs)} params"


def proved_text(runs: list[Result]) -> str:
    """`dfst certify`'s verdicts over the seeds: `2 / 7 (444-738 digits) / 1 / 0`, a counterexample apart
    from a check that decided nothing (INCONCLUSIVE: neither proof nor refutation)."""
    counts = certified_counts(runs)
    if counts is None:
        return "not run"
    refuted = sum((r.details.get("certified") or {}).get("verdict") == "COUNTEREXAMPLE" for r in runs)
    not_run = f" ({counts['not_run']} not run)" if counts["not_run"] else ""
    undecided = counts["none"] - refuted
    return certified_text({**counts, "none": refuted, "not_run": 0}) + f" / {undecided}{not_run}"


def kept_text(runs: list[Result]) -> str:
    return f"{_span(r.samples for r in runs)} (≤ {_span(r.max_train_digits for r in runs)})"


def _span(values) -> str:
    """`20`, or `4,634-8,568` where the seeds differ."""
    values = sorted(set(values))
    return f"{values[0]:,}" if len(values) == 1 else f"{values[0]:,}-{values[-1]:,}"


def markdown(rows: list[dict]) -> str:
    return markdown_of(rows, COLUMNS)


def write_table(readme: Path, rows: list[dict], source: str) -> None:
    """Rewrite the block between README's headline marks (atomically; a README without them is refused
    before anything is written)."""
    note = f"Regenerate: `dfst table --headline --readme {readme}` (rows from `{source}/`)."
    rewrite_between(readme, MARK_START, MARK_END, note + "\n\n" + markdown(rows))
