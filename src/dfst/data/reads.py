"""Every expert run a learner reads, by what it was read for, with the lengths (digits) of each part.

A learner that may query the expert reads more than the PTOs it keeps: the contexts sampler runs the
expert on a pool of candidates and keeps a cover of what their PTOs show, then fills up with random
pairs (new runs); training tests the automaton read off against validation PTOs a little longer;
counterexample-guided training adds the instances that failed. The PTOs kept are counted apart
(`samples`); the parts here are disjoint, so their runs add up to `total`:
    candidates       the pool a sampler ran the expert on (the cover it kept is among them)
    fill-up          random pairs recorded after the cover, to reach `samples`
    kept             a sampler that reads nothing but what it keeps (uniform, a given file)
    counterexamples  instances added by counterexample-guided rounds
    validation       the PTOs the automaton read off is tested against
"""

from __future__ import annotations


def part(runs: int, digits: tuple[int, int] | list[int]) -> dict:
    """One part: its expert runs and the [shortest, longest] operand lengths among them."""
    return {"runs": int(runs), "digits": [int(digits[0]), int(digits[1])]}


def traces_read(sampling: dict, samples: int, validation: dict | None = None,
                lengths: tuple[int, int] | None = None) -> dict:
    """The parts (module docstring) of a dataset's `sampling` record and its `samples` PTOs, with the
    validation part (`part`) if the run was validated, and their `total`. The sampler's lengths are
    its record's, else `lengths` (the data's own shortest and longest operands)."""
    counterexamples = [tuple(pair) for pair in sampling.get("counterexamples", [])]
    drawn = samples - len(counterexamples)  # the sampler's own PTOs
    if "max_digits" in sampling:
        lengths = (sampling.get("min_digits", 1), sampling["max_digits"])
    elif lengths is None:
        raise ValueError("traces_read needs the sampling record's lengths or the data's")
    parts = {}
    if sampling.get("queries") is not None:
        parts["candidates"] = part(sampling["queries"], lengths)
        if fill := drawn - sampling.get("covering", drawn):
            parts["fill-up"] = part(fill, lengths)
    else:
        parts["kept"] = part(drawn, lengths)
    if counterexamples:
        sizes = [max(len(a), len(b)) for a, b in counterexamples]
        parts["counterexamples"] = part(len(counterexamples), (min(sizes), max(sizes)))
    if validation:
        parts["validation"] = validation
    return {**parts, "total": sum(p["runs"] for p in parts.values())}


def digits_span(traces: dict) -> tuple[int, int] | None:
    """The shortest and longest operands over every part that read a run."""
    spans = [p["digits"] for p in traces.values() if isinstance(p, dict) and p.get("runs")]
    return (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None


def reads_text(traces: dict | None) -> str:
    """`4,037 candidates (1-3 digits), 8 fill-up (1-3), 158 validation (4-6)`; '-' where not recorded."""
    if not traces:
        return "-"
    parts = [(name, p) for name, p in traces.items() if isinstance(p, dict) and p.get("runs")]
    return ", ".join(f"{p['runs']:,} {name} ({p['digits'][0]}-{p['digits'][1]}{' digits' if i == 0 else ''})"
                     for i, (name, p) in enumerate(parts))
