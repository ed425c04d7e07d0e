"""docs/architecture.md's layers hold: no module of dfst imports from a layer above its own.

The order below is the page's, bottom to top; the learning layer is ordered inside too (certify,
then extract, then train). Imports inside functions count as much as those at the top.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dfst"
LAYERS = [
    {"errors", "io"},
    {"automata", "grid"},
    {"tasks"},
    {"data"},
    {"model"},
    {"results"},
    {"protocol"},
    {"certify"},
    {"extract"},
    {"train"},
    {"studies", "baselines"},
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


# ----------------------------------------------------------------------------- the module graph

# Entries at the top of src/dfst (packages and loose modules): 15, as the design asks; the bound only ever
# goes down, so that a new loose module has to find its package.
TOP_ENTRIES_AT_MOST = 15


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each module of dfst -> the modules of dfst it imports (inside functions too), read from the
    code. The package's own __init__ is left out: it sets __version__ before it imports anything,
    so `from dfst import __version__` always finds it whatever imports it first."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules.pop("dfst")
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_modules():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_top_of_the_package_stays_small():
    tops = {_top(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert len(tops) <= TOP_ENTRIES_AT_MOST, sorted(tops)


def test_a_module_at_the_top_says_why_it_stands_alone():
    loose = [p for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    unexplained = [p.name for p in loose if "at the top of the package" not in (ast.get_docstring(
        ast.parse(p.read_text())) or "")]
    assert loose and unexplained == []


# ----------------------------------------------------------------------------- one way to do each thing

def _uses(name: str) -> set[str]:
    """The modules of dfst that use `name` (a function, a method or an attribute), besides defining it."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            used = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if used == name and isinstance(node, ast.Attribute | ast.Name):
                found.add(str(path.relative_to(PACKAGE)))
    return found


def _protocol_configs() -> list[str]:
    """Classes that hold a protocol's lengths and random pairs (fields `digits`, `random`, `seed`)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                fields = {item.target.id for item in node.body
                          if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
                if {"digits", "random", "seed"} <= fields:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    return found


def test_one_ladder_loop_and_one_protocol_config():
    """A second evaluator would predict a length's time, or hold its own lengths: both fail here."""
    assert _uses("time_growth") == {"protocol/ladder.py"}
    assert _uses("climb") <= {"protocol/evaluate.py", "protocol/scorer.py"}
    assert _protocol_configs() == ["protocol/config.py:EvalConfig"]
    assert _uses("wilson_interval") <= {"protocol/tally.py", "protocol/evaluate.py"}


def test_one_grid_engine():
    """The head moves in two engines only, the reference step (grid/world.py, which policies and the
    Gymnasium environment step through) and the numba rollout tested equal to it (grid/rollout.py),
    besides the certifier's symbolic configurations of a grid (certify/check_grid.py)."""
    moves_heads = _uses("MOVE_DELTAS") | _uses("MOVE_DELTA")
    assert moves_heads <= {"automata.py", "grid/world.py", "grid/rollout.py", "certify/check_grid.py"}


def _refusing(phrase: str) -> set[str]:
    """The modules of dfst with a string constant (an error message's part) containing `phrase`."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and phrase in node.value:
                found.add(str(path.relative_to(PACKAGE)))
    return found


def test_one_rule_for_the_directories_dfst_writes_into():
    """A directory is refused for holding something else in one place (`io.outputs.check_directory`),
    which the run directory, the until-certified rounds and every replaced-whole output call."""
    assert _refusing("not empty") == {"io/outputs.py"}
    assert {"train/rundir.py", "train/cegis.py", "io/outputs.py"} <= _uses("check_directory")
    assert _uses("claim_directory") >= {"model/checkpoint.py", "train/finetune.py", "studies/html/site.py"}


def test_the_one_way_checks_can_fail(tmp_path, monkeypatch):
    second = tmp_path / "dfst"
    (second / "protocol").mkdir(parents=True)
    fields = "    digits: tuple\n    random: int\n    seed: int\n"
    (second / "protocol" / "config.py").write_text("class EvalConfig:\n" + fields)
    (second / "mine.py").write_text(f"class Mine:\n{fields}def f(task):\n    return task.time_growth(2, 1)\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", second)
    (second / "engine.py").write_text("from dfst.automata import MOVE_DELTAS\nr = 1 + MOVE_DELTAS[0][0]\n")
    (second / "mine_too.py").write_text('raise ValueError(f"{1} is not empty")\n')
    assert _refusing("not empty") == {"mine_too.py"}
    assert _uses("time_growth") == {"mine.py"}
    assert _uses("MOVE_DELTAS") == {"engine.py"}
    assert sorted(_protocol_configs()) == ["mine.py:Mine", "protocol/config.py:EvalConfig"]
