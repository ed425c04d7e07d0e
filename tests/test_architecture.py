"""docs/architecture.md's layers hold: no module of dfst imports from a layer above its own.

The order below is the page's, bottom to top; the learning layer is ordered inside too (certify,
then extract, then train). Imports inside functions count as much as those at the top.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dfst"
LAYERS = [
    {"errors", "io", "model_size"},
    {"automata", "drawing", "grid"},
    {"tasks"},
    {"data"},
    {"model"},
    {"results", "plots"},
    {"protocol"},
    {"certify"},
    {"extract"},
    {"train"},
    {"studies", "baselines", "report_html", "library"},
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

# Entries at the top of src/dfst (packages and loose modules). The goal is 15; the bound only ever
# goes down, so that a new loose module has to find its package.
TOP_ENTRIES_AT_MOST = 20


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
