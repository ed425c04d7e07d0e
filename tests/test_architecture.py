"""docs/architecture.md's layers hold: no module of dfst imports from a layer above its own.

The order below is the page's, bottom to top; the learning layer is ordered inside too (certify,
then extract, then train, then recipes). Imports inside functions count as much as those at the top.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dfst"
LAYERS = [
    {"errors", "limits", "inputs", "outputs", "records", "run_guard", "locks", "model_size", "executors"},
    {"automata", "drawing", "arith", "grid", "tasks", "rollout", "budget"},
    {"data"},
    {"model", "scan", "compile", "checkpoint"},
    {"evaluate", "plots", "eval_files", "targets"},
    {"certify"},
    {"extract"},
    {"train"},
    {"recipes"},
    {"results", "protocol", "reproduce", "cells", "sweep", "baselines", "bench", "mutations",
     "learnability", "report_html", "library"},
    {"cli"},
]
LEVEL = {name: i for i, layer in enumerate(LAYERS) for name in layer}
IMPORT = re.compile(r"^\s*(?:from|import) dfst\.(\w+)", re.M)


def _top(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def test_every_module_has_a_layer():
    tops = {_top(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert tops - set(LEVEL) == set(), "add the new module to docs/architecture.md and LAYERS"


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        top = _top(path)
        if top == "__init__":
            continue
        for target in IMPORT.findall(path.read_text()):
            if target != top and LEVEL[target] > LEVEL[top]:
                upward.append(f"{path.relative_to(PACKAGE)} imports dfst.{target}")
    assert upward == []
