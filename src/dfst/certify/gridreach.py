"""Which of the lockstep graph's departures can a grid run reach? An abstract interpretation of the grid.

The lockstep exploration lets the expert read, in each state, any symbol it has a rule for. The grid
is stricter: a cell holds what was last written there, or the layout's symbol. A DFST may depart from
the expert only on symbol paths no grid produces (an extracted mult2 automaton writes garbage where
the accumulator holds a digit in the first round, but there it is always blank). This module proves
such departures unreachable, for every instance of every length, where its abstraction is fine enough,
or finds an abstract path to one. mult2's extractions need the rows of a column kept together:
`gridjoin.py`'s joined abstraction; `gridproof.prove_unreachable` tries them in turn (docs/certify.md).

The grid is a tape of columns (the layout's rows, margins included). An abstract configuration is

    (lockstep node, head row, the column under the head, the columns to its left, to its right)

where a column is a tuple of symbol sets (bitmasks), one per row, and each side is a stack of *runs*
(column, one-or-more) nearest first. Reading refines the head's cell to the symbol read, writing sets
it; moving left pushes the head's column onto the right stack and pops one from the left (a run of
one-or-more leaves zero or one-or-more behind: both are explored). A stack longer than `cap` runs
merges its two deepest runs (per-row unions, one-or-more): a finite, sound over-approximation. In
the coarse abstraction a column leaving the head keeps, per row, only blank or digit (which digit
is forgotten): far fewer configurations, enough where a model's extra states track where blanks are;
in the shape abstraction the `NEAR` runs next to the head stay exact and deeper runs of the same
blank/digit shape are united.
Leaving the layout ends the run (the engine stops both the expert's and the model's run there).

Initial configurations: every layout of operands of 1 to `max_len` digits, each non-blank cell
generalised to any digit of the base (and any other symbol a layout shows) and each run of equal
columns to one-or-more. That the abstraction covers every length is an assumption, checked: lengths
past `max_len - 2` must add no configuration.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from dfst.automata import HALT_TARGET as HALT
from dfst.automata import MOVE_INDEX, STOP, Transducer
from dfst.certify.lockstep import Graph

Column = tuple[int, ...]  # one bitmask of possible symbols per row
Run = tuple[Column, bool]  # (column, one-or-more); False: exactly one
Config = tuple[int, int, Column, tuple[Run, ...], tuple[Run, ...]]
UP, DOWN, LEFT, RIGHT = (MOVE_INDEX[m] for m in "UDLR")
MAX_CONFIGS = 1_000_000  # ~0.5 GiB of configurations, ~30 s
MAX_LEN = 8  # initial configurations: operands of 1..MAX_LEN digits
MODES = ("coarse", "shape", "exact")
NEAR = 2  # shape abstraction: runs kept exact next to the head


@dataclass(frozen=True)
class Reach:
    """The result: `departure` None means no abstract run reaches one (a proof); else the (node,
    symbol) reached and the symbols read on the way. `configs` is the invariant's size."""

    configs: int
    departure: tuple[int, int] | None
    path: tuple[int, ...]
    cap: int
    mode: str
    near: int = NEAR


class TooManyConfigs(Exception):
    """The abstract exploration passed its budget."""


def initial_configs(task, max_len: int = MAX_LEN) -> tuple[frozenset[Config], bool]:
    """The abstract initial configurations of every layout of 1..max_len-digit operands, and whether
    the longest two lengths added none (the abstraction has stabilised)."""
    layouts = [(la, lb, task.layout(task.example(la, lb)))
               for la in range(1, max_len + 1) for lb in range(1, max_len + 1)]
    blank = task.blank
    shown = (1 << task.base) - 1  # an operand cell holds any digit (leading zeros included)
    for _, _, layout in layouts:
        for s in set(layout.cells.flatten().tolist()) - {blank}:
            shown |= 1 << s
    short, every = set(), set()
    for la, lb, layout in layouts:
        config = _abstract_layout(layout, blank, shown)
        every.add(config)
        if max(la, lb) <= max_len - 2:
            short.add(config)
    return frozenset(every), short == every


def _abstract_layout(layout, blank: int, shown: int) -> Config:
    cells = layout.cells
    r0, c0 = layout.head
    columns = [tuple(shown if s != blank else 1 << blank for s in cells[:, c].tolist())
               for c in range(cells.shape[1])]
    return (0, int(r0), columns[c0], _runs(columns[c0 - 1::-1] if c0 else []), _runs(columns[c0 + 1:]))


def _runs(columns: list[Column]) -> tuple[Run, ...]:
    runs: list[list] = []
    for col in columns:
        if runs and runs[-1][0] == col:
            runs[-1][1] = True
        else:
            runs.append([col, False])
    return tuple((c, plus) for c, plus in runs)


def departures(graph: Graph, agent: Transducer) -> set[tuple[int, int]]:
    """The (node, symbol) edges where the DFST's action is not the expert's."""
    _, wrt, mov = agent.tables()
    return {(n, x) for (n, x), got in graph.outputs.items()
            if got != (int(wrt[graph.nodes[n].q, x]), int(mov[graph.nodes[n].q, x]))}


def reach(graph: Graph, agent: Transducer, initial: frozenset[Config], cap: int = 4, mode: str = "exact",
          max_configs: int = MAX_CONFIGS) -> Reach:
    """Breadth-first over abstract configurations from `initial`; stops at the first departure."""
    bad = departures(graph, agent)
    nonblank = ((1 << agent.k) - 1) & ~(1 << agent.alphabet.index(agent.blank))
    step = Stepper(graph, agent, cap, nonblank, mode)
    parent: dict[Config, tuple[Config, int] | None] = dict.fromkeys(sorted(initial))
    queue = deque(parent)
    while queue:
        config = queue.popleft()
        for x, successors in step.successors(config):
            if (config[0], x) in bad:
                return Reach(len(parent), (config[0], x), (*_path(parent, config), x), cap, mode)
            for nxt in successors:
                if nxt not in parent:
                    if len(parent) >= max_configs:
                        raise TooManyConfigs(f"more than {max_configs:,} abstract configurations")
                    parent[nxt] = (config, x)
                    queue.append(nxt)
    return Reach(len(parent), None, (), cap, mode)


def _path(parent: dict, config: Config) -> tuple[int, ...]:
    symbols = []
    while parent[config] is not None:
        config, x = parent[config]
        symbols.append(x)
    return tuple(reversed(symbols))


class Stepper:
    """The abstract step: for a configuration, each readable symbol and the configurations after it."""

    def __init__(self, graph: Graph, agent: Transducer, cap: int, nonblank: int, mode: str):
        if mode not in MODES:
            raise ValueError(f"unknown grid abstraction {mode!r}")
        self.graph, self.cap, self.nonblank, self.mode = graph, cap, nonblank, mode
        self.same = _same_shape(nonblank) if mode == "shape" else None  # built once: _push is hot
        _, self.wrt, self.mov = agent.tables()

    def successors(self, config: Config):
        n, row, cur, left, right = config
        q = self.graph.nodes[n].q
        for x in range(self.mov.shape[1]):
            if not cur[row] >> x & 1 or self.mov[q, x] < 0:
                continue  # the cell cannot hold x, or the expert has no rule (it never reads x here)
            m = self.graph.edges.get((n, x), HALT)
            if self.mov[q, x] == STOP or m == HALT:
                yield x, ()
                continue
            written = (*cur[:row], 1 << int(self.wrt[q, x]), *cur[row + 1:])
            yield x, tuple(self._moved(m, row, written, left, right, int(self.mov[q, x])))

    def _moved(self, m: int, row: int, col: Column, left, right, move: int):
        return moved(m, row, len(col), col, left, right, move, self._push)

    def _push(self, stack, col: Column):
        if self.mode == "coarse":  # every digit a row may hold becomes any digit
            col = tuple(mask | self.nonblank if mask & self.nonblank else mask for mask in col)
        return push(stack, col, self.cap, self.same, NEAR)


def moved(m: int, row: int, rows: int, col, left: tuple, right: tuple, move: int, push):
    """The configurations at node `m` after a move with `col` under the head: up or down within the
    layout's `rows` (past them the run stops, off_layout, for both), left or right popping the stack
    ahead and pushing `col` onto the one behind with `push(stack, col)`."""
    if move in (UP, DOWN):
        row += -1 if move == UP else 1
        if 0 <= row < rows:
            yield m, row, col, left, right
    elif move == LEFT:
        for new, rest in pop(left):
            yield m, row, new, rest, push(right, col)
    else:
        for new, rest in pop(right):
            yield m, row, new, push(left, col), rest


def pop(stack: tuple[Run, ...]):
    """The column next to the head and what stays behind it (nothing past the layout's edge)."""
    if not stack:
        return
    (col, plus), rest = stack[0], stack[1:]
    yield col, rest
    if plus:
        yield col, stack


def _same_shape(nonblank: int):
    """Columns of one shape: each row may hold a blank in both or in neither, a non-blank in both or
    in neither."""
    def shape(col: Column) -> tuple:
        return tuple((mask & nonblank != 0, mask & ~nonblank != 0) for mask in col)
    return lambda a, b: shape(a) == shape(b)


def push(stack: tuple[Run, ...], col: Column, cap: int, same=None, near: int = 0) -> tuple[Run, ...]:
    """`col` on top of `stack`, joined to an equal top run. With `same`, the run `near` places down
    joins the one below it when `same` says they have one shape (the masks united: exact next to
    the head, blurred further away). Past `cap` runs the deepest two merge."""
    if stack and stack[0][0] == col:
        return ((col, True), *stack[1:])
    stack = ((col, False), *stack)
    if same is not None and len(stack) > near + 1 and same(stack[near][0], stack[near + 1][0]):
        stack = (*stack[:near], _union(stack[near], stack[near + 1]), *stack[near + 2:])
    if len(stack) > cap:
        stack = (*stack[:-2], _union(stack[-2], stack[-1]))
    return stack


def _union(a: Run, b: Run) -> Run:
    return tuple(u | v for u, v in zip(a[0], b[0], strict=True)), True
