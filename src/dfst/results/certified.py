"""The certification a result carries (`details["certified"]`, from `dfst certify`), counted over seeds:
every length, a bound in digits, or none. `dfst reproduce` and `dfst table` show the same column."""

from __future__ import annotations

from collections.abc import Sequence

from dfst.results.schema import Result


def certified_kind(result: Result) -> str | None:
    """"all" (CERTIFIED for every length), "bounded", "none", or None (not certified)."""
    cert = result.details.get("certified")
    if cert is None:
        return None
    if cert["verdict"] != "CERTIFIED" or cert.get("checker") != "ok":
        return "none"
    return "all" if cert.get("max_digits") is None else "bounded"


def certified_counts(results: Sequence[Result]) -> dict | None:
    """{"all", "bounded", "none", "not_run": seeds; "bounded_digits": [min, max] of the bounds}, None
    if no result was certified. A seed never given to `dfst certify` is "not_run", never "none"."""
    kinds = [certified_kind(r) for r in results]
    if all(kind is None for kind in kinds):
        return None
    bounds = [r.details["certified"]["max_digits"] for r, kind in zip(results, kinds) if kind == "bounded"]
    return {"all": kinds.count("all"), "bounded": len(bounds), "none": kinds.count("none"),
            "not_run": kinds.count(None), "bounded_digits": [min(bounds), max(bounds)] if bounds else None}


def certified_text(counts: dict | None) -> str:
    """`2 / 7 (444-738 digits) / 1`, `3 / 0 / 0 (2 not run)`, or "not run"."""
    if counts is None:
        return "not run"
    span = counts["bounded_digits"]
    bounds = f" ({span[0]:,}-{span[1]:,} digits)" if span and span[0] != span[1] else \
        f" ({span[0]:,} digits)" if span else ""
    not_run = f" ({counts['not_run']} not run)" if counts.get("not_run") else ""
    return f"{counts['all']} / {counts['bounded']}{bounds} / {counts['none']}{not_run}"
