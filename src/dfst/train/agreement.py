"""Did the run find the algorithm its traces show? The honest end of a training run.

A run whose d comes from the data (`dfst.train.dsize`) tests the automaton read off against the
expert's PTOs on longer operands it never trained on (`dfst.train.validation`), and grows d until one
reproduces them. The run's summary records the outcome (`agreement`): the validation PTOs checked and
their lengths, and either agreement or where the automaton departs from the expert, with the sizes
tried and the largest the rule allows. `dfst train` says it on its last line and exits 1 when the
traces were not enough, the model still written.
"""

from __future__ import annotations

from dfst.data.pto import PtoDataset

UNFIT_LOSS = 0.01  # a final loss at least this high: the PTOs were not fit, whatever the data


def agreement(extracted: dict | None, validation: PtoDataset | None, model: dict,
              sizes: list[int]) -> dict | None:
    """The summary's record (None: the run checks nothing: d given, or no automaton read off asked).
    `extracted`: the run's extraction record; `model`: its {"d", "tried"}; `sizes`: the d it may try."""
    if validation is None:
        return None
    tried = [t["d"] for t in model.get("tried", [])] + [model["d"]]
    record = {"checked": {"samples": validation.samples,
                          "digits": [validation.sampling["min_digits"], validation.sampling["max_digits"]]},
              "d_tried": tried, "d_limit": max(sizes)}
    if extracted is None:
        return record | {"agreed": False, "departs": None}
    departs = (extracted.get("validation") or {}).get("disagreement")
    return record | {"agreed": departs is None, "departs": departs}


def agreement_line(summary: dict, cfg: dict) -> str | None:
    """The last line of `dfst train`: what was checked and what it found, and what to raise when the
    traces were not enough (None: nothing was checked)."""
    found = summary.get("agreement")
    if found is None:
        return None
    low, high = found["checked"]["digits"]
    lengths = f"{found['checked']['samples']} expert PTOs of {low}-{high} digits held out of training"
    if found["agreed"]:
        return f"the automaton read off agrees with the expert on {lengths}"
    grown = " -> ".join(str(d) for d in found["d_tried"])
    at_limit = "its limit" if found["d_tried"][-1] >= found["d_limit"] else f"at most {found['d_limit']}"
    departs = found["departs"]
    where = ("no automaton read off explains the training PTOs" if departs is None else
             f"the automaton read off departs from the expert on {_operands(departs)} after "
             f"{departs['steps']} agreeing steps")
    tips = [f"more samples (--samples {2 * summary['samples']}, now {summary['samples']})",
            f"longer PTOs (--max-digits {cfg['max_digits'] + 1}, now {cfg['max_digits']})"]
    if (summary.get("final_loss") or 0.0) >= UNFIT_LOSS:  # training never fit the PTOs: effort first
        tips.insert(0, f"more iterations (--iters {2 * cfg['iters']}, now {cfg['iters']})")
    return (f"NOT ENOUGH DATA: {where} (checked on {lengths}); d grew {grown} ({at_limit}). "
            f"Try {' or '.join(tips)}")


def _operands(departs: dict) -> str:
    a, b = departs["a"], departs["b"]
    return f"{_short(a)}, {_short(b)}" if b else _short(a)


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}…{text[-10:]} ({len(text)} symbols)"
