"""Did the run find the algorithm its traces show? The honest end of a training run.

A run whose d comes from the data (`dfst.train.dsize`) tests the automaton read off against the
expert's PTOs on operands it never trained on (`dfst.train.validation`). It grows d until an
automaton read off explains the training PTOs, then grows the data where that automaton departs on
the held-out ones (`dfst.train.growth`), while rounds of growth are left; in the last round d grows
on until one reproduces them too. The run's
summary records the outcome (`agreement`): the validation PTOs checked and their lengths, either
agreement or where the automaton departs from the expert, the sizes tried and the largest the rule
allows, the rounds of data growth and the PTOs of each, and why it stopped (`stopped`: agreed; no
automaton read off explains the PTOs; the data rounds ran out; growing: a later round follows).
`dfst train` says it on its last line and exits 1 when the traces were not enough, the model still
written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dfst.data.pto import PtoDataset

if TYPE_CHECKING:  # (growth imports torch; dfst train's last line must not)
    from dfst.train.growth import Growth

UNFIT_LOSS = 0.01  # a final loss at least this high: the PTOs were not fit, whatever the data


def agreement(extracted: dict | None, validation: PtoDataset | None, model: dict, sizes: list[int],
              growth: Growth, grow_limit: int) -> dict | None:
    """The summary's record (None: the run checks nothing: d given, or no automaton read off asked).
    `extracted`: the run's extraction record; `model`: its {"d", "tried"}; `sizes`: the d it may try;
    `growth`: where its data stands, of at most `grow_limit` rounds (`dfst.train.growth`)."""
    if validation is None:
        return None
    tried = [t["d"] for t in model.get("tried", [])] + [model["d"]]
    record = {"checked": {"samples": validation.samples,
                          "digits": [validation.sampling["min_digits"], validation.sampling["max_digits"]]},
              "d_tried": tried, "d_limit": max(sizes),
              "data": {"rounds": growth.round, "limit": grow_limit,
                       "samples": [r["samples"] for r in growth.rounds] + [growth.data.samples]}}
    departs = None if extracted is None else (extracted.get("validation") or {}).get("disagreement")
    agreed = extracted is not None and departs is None
    stopped = ("agreed" if agreed else "no automaton" if departs is None else
               "data rounds" if growth.round >= grow_limit else "growing")
    return record | {"agreed": agreed, "departs": departs, "stopped": stopped}


def agreement_line(summary: dict, cfg: dict) -> str | None:
    """The last line of `dfst train`: what was checked and what it found, and what to raise when the
    traces were not enough (None: nothing was checked)."""
    found = summary.get("agreement")
    if found is None:
        return None
    low, high = found["checked"]["digits"]
    lengths = f"{found['checked']['samples']} expert PTOs of {low}-{high} digits held out of training"
    grew = _data_grew(found.get("data"))
    if found["agreed"]:
        return f"the automaton read off agrees with the expert on {lengths}{grew}"
    grown = " -> ".join(str(d) for d in found["d_tried"])
    at_limit = "its limit" if found["d_tried"][-1] >= found["d_limit"] else f"at most {found['d_limit']}"
    departs = found["departs"]
    where = ("no automaton read off explains the training PTOs" if departs is None else
             f"the automaton read off departs from the expert on {_operands(departs)} after "
             f"{departs['steps']} agreeing steps")
    return (f"NOT ENOUGH DATA: {where} (checked on {lengths}); d grew {grown} ({at_limit}){grew}. "
            f"Try {' or '.join(_tips(summary, cfg, found))}")


def _data_grew(data: dict | None) -> str:
    """`; the PTOs grew 20 -> 28 -> 36 (2 rounds of 3)` where the data grew, else ''."""
    if not data or not data["rounds"]:
        return ""
    counts = " -> ".join(str(n) for n in data["samples"])
    rounds = f"{data['rounds']} of {data['limit']} rounds"
    return f"; the PTOs grew {counts} where earlier automata departed ({rounds})"


def _tips(summary: dict, cfg: dict, found: dict) -> list[str]:
    """What to raise: more rounds of growth where they ran out, else more or longer PTOs; iterations
    first where training never fit the PTOs."""
    tips = [f"more samples (--samples {2 * cfg['samples']}, now {cfg['samples']})",
            f"longer PTOs (--max-digits {cfg['max_digits'] + 1}, now {cfg['max_digits']})"]
    data = found.get("data") or {}
    if found.get("stopped") == "data rounds":
        limit = data.get("limit", 0)
        tips.insert(0, f"more rounds of data growth (--grow-rounds {max(1, 2 * limit)}, now {limit})")
    if (summary.get("final_loss") or 0.0) >= UNFIT_LOSS:  # training never fit the PTOs: effort first
        tips.insert(0, f"more iterations (--iters {2 * cfg['iters']}, now {cfg['iters']})")
    return tips


def _operands(departs: dict) -> str:
    a, b = departs["a"], departs["b"]
    return f"{_short(a)}, {_short(b)}" if b else _short(a)


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}…{text[-10:]} ({len(text)} symbols)"
