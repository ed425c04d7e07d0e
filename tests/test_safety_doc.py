"""docs/safety.md stays true: its table of caps is the one in dfst.io.limits, defaults included."""

from __future__ import annotations

from pathlib import Path

from dfst.io.limits import CAPS, human_bytes

DOC = Path(__file__).resolve().parents[1] / "docs" / "safety.md"


def _pretty(n: int) -> str:
    return human_bytes(n).replace(".0 ", " ")


def test_caps_table_matches_limits():
    text = DOC.read_text()
    table = text[text.index("<!-- caps:start -->"):text.index("<!-- caps:end -->")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    expected = [f"| `{var}` | {_pretty(default)} | {what} |" for var, default, what in CAPS.values()]
    assert rows == expected


def test_fixed_limits_are_the_documented_ones():
    from dfst.io import limits

    text = " ".join(DOC.read_text().split())
    for phrase in (f"{limits.MAX_JSON_DEPTH} deep", f"{limits.MAX_JSON_CONTAINERS:,} arrays",
                   f"at most {limits.MAX_ZIP_MEMBERS} members", f"{limits.MAX_ZIP_RATIO}×",
                   f"over {_pretty(limits.ZIP_RATIO_FLOOR)}",
                   f"at most {_pretty(limits.MAX_SAFETENSORS_HEADER)}",
                   "half of the machine's RAM" if limits.MEMORY_FRACTION == 0.5 else "MEMORY_FRACTION"):
        assert phrase in text, phrase
