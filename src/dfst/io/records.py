"""Checked access to the JSON records dfst reads back (summary.json, eval.json, metrics lines).

A record edited by hand, cut short or written by an older dfst must give a one-line error naming
the file and the field, never a KeyError or TypeError deep inside a table or a plot.
"""

from __future__ import annotations

from dfst.errors import DfstError

NUMBER = (int, float)


def require(data: object, spec: dict[str, type | tuple[type, ...]], where: str) -> dict:
    """`data` if it is an object whose fields in `spec` exist with the given types (None allowed
    only where the type tuple includes type(None)); otherwise a DfstError naming `where`."""
    if not isinstance(data, dict):
        raise DfstError(f"{where} does not hold a JSON object")
    for key, kind in spec.items():
        if key not in data:
            raise DfstError(f"{where} lacks the field {key!r} (damaged, or not written by this dfst)")
        value = data[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
            raise DfstError(f"{where}: field {key!r} is {value!r}, not {_names(kind)}")
    return data


def require_list(data: object, spec: dict, where: str) -> list[dict]:
    """A list of objects, each checked with `require`."""
    if not isinstance(data, list):
        raise DfstError(f"{where} is not a list")
    return [require(item, spec, f"{where}[{i}]") for i, item in enumerate(data)]


def _types(kind) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _names(kind) -> str:
    return " or ".join("null" if t is type(None) else t.__name__ for t in _types(kind))


# The fields each reader relies on.
LEVEL = {"digits": int, "instances": int, "exact": int, "robust": bool}
METRIC = {"iteration": int}
METRIC_EVAL = {"robust_max_digits": int, "levels": list}
EVAL_REPORT = {"task": str, "mode": str, "robust_max_digits": int, "probabilistic_max_digits": int,
               "levels": list}
SUMMARY = {"samples": int, "d": int, "iterations": int, "seconds": NUMBER,
           "final_loss": (int, float, type(None)), "eval": (dict, type(None)), "task": str}


def eval_report(data: object, where: str) -> dict:
    """An eval.json (or a summary's eval) with at least one well-formed level."""
    report = require(data, EVAL_REPORT, where)
    levels = require_list(report["levels"], LEVEL, f"{where} levels")
    if not levels:
        raise DfstError(f"{where} has no evaluated lengths")
    return report


def summary(data: object, where: str) -> dict:
    """A run's summary.json, its last evaluation checked too when there is one."""
    found = require(data, SUMMARY, where)
    if found["eval"] is not None:
        require(found["eval"], {"robust_max_digits": int, "probabilistic_max_digits": int},
                f"{where} eval")
    return found
