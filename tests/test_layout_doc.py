"""The "Layout of the code" of docs/architecture.md names every module and package of src/dfst, and
nothing that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "dfst"


def _layout_block() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Layout of the code", 1)[1]
    return section.split("```", 2)[1]


def test_the_code_layout_names_every_module_and_package():
    block = _layout_block()
    named = set(re.findall(r"([A-Za-z_]\w*(?:\.py|/))", block))
    present = {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    present |= {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    assert present - named == set(), "modules missing from the layout in docs/architecture.md"
    gone = {n for n in named if n.endswith(".py")} - present
    assert gone == set(), "modules that are gone"
