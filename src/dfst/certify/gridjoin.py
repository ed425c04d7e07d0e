"""Departures no grid run reaches, with the rows of a column kept together: the joined abstraction.

`gridreach.py` abstracts a column as one symbol set per row. A model that relies on a correlation
between the rows of one column then reaches departures no grid does. mult2's extractions do: they
remember a's units digit as `right` walks back and expect the accumulator below it to hold the same
digit, true on every grid, but the union of the columns (0,1,1) and (0,0,0) per row also holds
(0,0,1). Here a column is a *set of whole columns* (tuples of symbols, one per row), so reading a
cell keeps only the columns with that symbol and the other rows follow.

The stacks on either side are runs of columns as in `gridreach.py`, nearest first: `JOINED_NEAR`
runs next to the head stay apart; beyond them a run joins the run below it when that run and the
one below it have its blank/digit shape, so the far end of a block of same-shape runs stays apart
(b's current column, where a's run ends); past `cap` runs the deepest two join. Configurations
with the same *skeleton* (lockstep node, head row, the shape of the head's column and of every run)
are joined: their columns united position by position, a run one-or-more if either was. The
skeletons are finite, so the fixpoint is, and each joined configuration stands for every
configuration its columns allow: a sound over-approximation of every grid run.
"""

from __future__ import annotations

from collections import deque
from itertools import product

from dfst.automata import HALT_TARGET as HALT
from dfst.automata import STOP, Transducer
from dfst.certify.gridreach import Config, Reach, departures, moved
from dfst.certify.lockstep import Graph

Columns = frozenset  # of tuples, one symbol per row
JOINED_NEAR = 1  # runs next to the head kept apart
JOINED_CAP = 8  # the default stack cap (the one gridproof.ABSTRACTIONS tries)
MAX_SKELETONS = 500_000  # mult2's extractions need ~12,000, mult10's ~30,000
# and the columns held in all of them, counted per configuration (memory: ~120 bytes each, so ~3.5
# GiB): mult10's columns hold up to 11^3 digit tuples each, where mult2's hold a few; its
# extractions' fixpoints hold 13 million (1.6 GiB resident, ~200 CPU s)
MAX_COLUMNS = 30_000_000
MODE = "joined"


class TooManySkeletons(Exception):
    """The joined exploration passed its budget."""


def joined_start(config: Config) -> tuple:
    """A configuration of `gridreach.initial_configs` (one symbol mask per row) as sets of columns."""
    n, row, head, left, right = config

    def columns(masks) -> Columns:
        return frozenset(product(*([s for s in range(mask.bit_length()) if mask >> s & 1] for mask in masks)))

    return (n, row, columns(head), tuple((columns(c), plus) for c, plus in left),
            tuple((columns(c), plus) for c, plus in right))


class JoinedStepper:
    """The abstract step over sets of columns, and the skeleton that configurations are joined by."""

    def __init__(self, graph: Graph, agent: Transducer, cap: int, near: int = JOINED_NEAR):
        self.graph, self.cap, self.near = graph, cap, near
        self.blank = agent.alphabet.index(agent.blank)
        _, self.wrt, self.mov = agent.tables()
        self._shapes: dict[Columns, frozenset] = {}

    def shape(self, columns: Columns) -> frozenset:
        found = self._shapes.get(columns)
        if found is None:
            found = self._shapes[columns] = frozenset(tuple(s != self.blank for s in c) for c in columns)
        return found

    def skeleton(self, config: tuple) -> tuple:
        n, row, head, left, right = config
        return (n, row, self.shape(head), tuple(self.shape(c) for c, _ in left),
                tuple(self.shape(c) for c, _ in right))

    def successors(self, config: tuple):
        """(symbol, the configurations after it) for each symbol the head may read here."""
        n, row, head, left, right = config
        q = self.graph.nodes[n].q
        for x in sorted({c[row] for c in head}):
            if self.mov[q, x] < 0:
                continue  # the expert has no rule: it never reads x here
            m = self.graph.edges.get((n, x), HALT)
            if self.mov[q, x] == STOP or m == HALT:
                yield x, ()
                continue
            written = frozenset((*c[:row], int(self.wrt[q, x]), *c[row + 1:]) for c in head if c[row] == x)
            yield x, tuple(moved(m, row, len(next(iter(written))), written, left, right, int(self.mov[q, x]),
                                 self.push))

    def push(self, stack: tuple, columns: Columns) -> tuple:
        """`columns` on top of `stack`; the run `near` places down joins the next when both have the
        shape of the one below them (block ends stay apart); past `cap` runs the deepest two join."""
        if stack and stack[0][0] == columns:
            return ((columns, True), *stack[1:])
        stack = ((columns, False), *stack)
        i = self.near
        if len(stack) > i + 2 and self.shape(stack[i][0]) == self.shape(stack[i + 1][0]) \
                == self.shape(stack[i + 2][0]):
            stack = (*stack[:i], (stack[i][0] | stack[i + 1][0], True), *stack[i + 2:])
        if len(stack) > self.cap:
            stack = (*stack[:-2], (stack[-2][0] | stack[-1][0], True))
        return stack


def join(a: tuple, b: tuple) -> tuple:
    """The least configuration of their skeleton above both: columns united, runs one-or-more if either."""
    def sides(s, t):
        return tuple((c | d, p or q) for (c, p), (d, q) in zip(s, t, strict=True))
    return a[0], a[1], a[2] | b[2], sides(a[3], b[3]), sides(a[4], b[4])


def columns_in(config: tuple) -> int:
    """How many whole columns a joined configuration holds (its memory, roughly)."""
    return len(config[2]) + sum(len(c) for side in config[3:] for c, _ in side)


def reach_joined(graph: Graph, agent: Transducer, initial, cap: int = JOINED_CAP,
                 max_skeletons: int = MAX_SKELETONS, max_columns: int = MAX_COLUMNS) -> Reach:
    """The joined fixpoint from `initial` (gridreach's configurations); stops at the first departure.
    `configs` is the number of skeletons."""
    bad = departures(graph, agent)
    step = JoinedStepper(graph, agent, cap)
    table: dict[tuple, tuple] = {}
    queue: deque = deque()  # skeletons to step, each once however often it grew while waiting
    queued: set[tuple] = set()
    held = 0

    def add(config: tuple) -> None:
        nonlocal held
        key = step.skeleton(config)
        old = table.get(key)
        new = config if old is None else join(old, config)
        if new != old:
            held += columns_in(new) - (0 if old is None else columns_in(old))
            if (old is None and len(table) >= max_skeletons) or held > max_columns:
                raise TooManySkeletons(f"more than {max_skeletons:,} joined configurations or "
                                       f"{max_columns:,} columns in them")
            table[key] = new
            if key not in queued:
                queued.add(key)
                queue.append(key)

    for config in sorted(initial):
        add(joined_start(config))
    while queue:
        key = queue.popleft()
        queued.discard(key)
        config = table[key]
        for x, after in step.successors(config):
            if (config[0], x) in bad:
                return Reach(len(table), (config[0], x), (), cap, MODE, JOINED_NEAR)
            for nxt in after:
                add(nxt)
    return Reach(len(table), None, (), cap, MODE, JOINED_NEAR)
