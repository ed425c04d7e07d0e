"""How a result's training data were chosen, as the tables name it: the sampler of its PTOs (those
that read the expert's hidden states say so) and, for a DFST, how its d was chosen. `dfst table` and
`dfst reproduce` show the same labels."""

from __future__ import annotations

from dfst.results.schema import Result

SAMPLER_LABELS = {"contexts": "PTO contexts", "cover": "rule cover (reads states)",
                  "pairs": "rule-pair cover (reads states)", "uniform": "uniform"}
# a stored config without d_rule chose the expert's state count
D_LABELS = {"data": "d from the PTOs", "expert": "the expert's d (reads states)"}
NO_PTOS = "-"  # a system trained on something else than PTOs (input/output pairs, answers)


def sampler_label(config: dict) -> str:
    """'PTO contexts': the sampler named in a result's `config`; NO_PTOS where it names none."""
    sampler = config.get("sampler")
    return NO_PTOS if sampler is None else SAMPLER_LABELS.get(sampler, str(sampler))


def trained_with(config: dict) -> str:
    """'PTO contexts, d from the PTOs': a DFST result's sampler and d rule (`config`: its TrainConfig)."""
    d = "d given" if config.get("d") is not None else D_LABELS.get(config.get("d_rule", "expert"), "?")
    return f"{sampler_label(config)}, {d}"


def samplers_of(results: list[Result]) -> str:
    """The samplers of a group of results (seeds of one system), one label each, sorted."""
    return "; ".join(sorted({sampler_label(r.config or {}) for r in results}))
