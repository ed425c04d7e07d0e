"""The checker's own grid abstraction, for "grid" certificates (a separate code path from `gridreach.py`).

It rebuilds the abstract initial configurations from the task's layouts, walks every abstract grid
run over the certificate's lockstep graph with its own step, and accepts only if no run reads a
symbol on an edge where the weights' action is not the expert's.
"""

from __future__ import annotations

from dfst.automata import MOVE_DELTA, MOVES, STOP

MAX_CONFIGS = 1_000_000  # the largest abstraction a certificate may claim (the prover's budget)
MAX_COLUMNS = 30_000_000  # the most columns the joined abstraction may hold (gridjoin.py's budget)


def check_grid(cert: dict, nodes, edges, wrong: set, agent) -> tuple[bool, str]:
    """(True, 'ok') if no abstract grid run from the task's layouts reaches a `wrong` (node, symbol)."""
    from dfst.tasks import get_task

    task = get_task(cert["task"])
    cap, max_len, mode = int(cert["stack_cap"]), int(cert["max_len"]), cert.get("grid_mode")
    near = int(cert.get("near", 0))
    claimed = cert.get("configurations")
    if cap < 1 or not 3 <= max_len <= 12 or mode not in ("coarse", "shape", "exact", "joined") \
            or not isinstance(claimed, int) or not 0 < claimed <= MAX_CONFIGS:
        return False, "stack cap, layout length, abstraction or configuration count out of range"
    nonblank = sum(1 << s for s in range(len(agent.alphabet)) if s != task.blank)
    layouts = {(la, lb): task.layout(task.example(la, lb))
               for la in range(1, max_len + 1) for lb in range(1, max_len + 1)}
    shown = sum(1 << s for s in range(task.base))  # an operand cell may hold any digit
    for layout in layouts.values():
        for s in layout.cells.flatten().tolist():
            shown |= 0 if s == task.blank else 1 << s
    starts = {key: _start(layout, task.blank, shown) for key, layout in layouts.items()}
    if {s for (la, lb), s in starts.items() if max(la, lb) <= max_len - 2} != set(starts.values()):
        return False, "the layouts' abstraction is not stable in the operands' length"
    if mode == "joined":
        return _check_joined(set(starts.values()), nodes, edges, wrong, agent, task.blank, (cap, near),
                             claimed)
    _, wrt, mov = agent.tables()
    seen, todo = set(starts.values()), list(starts.values())
    def push(stack, col):
        return _pushed(stack, col, cap, mode, nonblank, near)

    while todo:
        n, row, col, left, right = todo.pop()
        q = nodes[n][0]
        readable = (x for x in range(mov.shape[1]) if (col[row] >> x) & 1)
        for x, m in _rules(n, q, readable, mov, edges, wrong):
            if m is None:
                return False, f"an abstract grid run reaches node {n} reading {agent.alphabet[x]}"
            col2 = list(col)
            col2[row] = 1 << int(wrt[q, x])
            for nxt in _after(m, row, len(col2), tuple(col2), left, right, MOVES[mov[q, x]], push):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if len(seen) > claimed:  # the walk is bounded by the claim, so a forged claim costs no more
            break
    if len(seen) != claimed:  # two implementations of one abstraction must agree
        return False, f"the grid abstraction has {len(seen)}+ configurations, the certificate says {claimed}"
    return True, "ok"


def _start(layout, blank: int, shown: int):
    """The abstract configuration of one layout: a non-blank cell may hold any symbol in `shown`."""
    cells = layout.cells
    cols = [tuple(1 << blank if s == blank else shown for s in cells[:, c].tolist())
            for c in range(cells.shape[1])]
    r, c = int(layout.head[0]), int(layout.head[1])
    return 0, r, cols[c], _compress(list(reversed(cols[:c]))), _compress(cols[c + 1:])


def _compress(cols):
    out = []
    for col in cols:
        if out and out[-1][0] == col:
            out[-1] = (col, True)
        else:
            out.append((col, False))
    return tuple(out)


def _rules(n, q, symbols, mov, edges, wrong):
    """(symbol, next node) for each of `symbols` the expert reads in state q at node n and goes on
    from; (symbol, None) for the first whose edge is `wrong` (then nothing more)."""
    for x in symbols:
        if mov[q, x] < 0:
            continue
        if (n, x) in wrong:
            yield x, None
            return
        m = edges.get((n, x), -1)
        if mov[q, x] != STOP and m >= 0:
            yield x, m


def _after(m, row, rows, col, left, right, move, push):
    """The configurations after `move` with `col` under the head: within the layout's `rows`, or
    popping the stack ahead and pushing `col` onto the one behind with `push(stack, col)`."""
    dr, dc = MOVE_DELTA[move]
    if dc == 0:
        if 0 <= row + dr < rows:
            yield m, row + dr, col, left, right
        return
    ahead, behind = (left, right) if dc < 0 else (right, left)
    if not ahead:
        return
    top, plus = ahead[0]
    behind = push(behind, col)
    for rest in ((ahead[1:], ahead) if plus else (ahead[1:],)):
        yield (m, row, top, rest, behind) if dc < 0 else (m, row, top, behind, rest)


def _pushed(stack, col, cap, mode, nonblank, near):
    """The column leaving the head on top of the stack behind it, as the certificate's mode keeps it."""
    if mode == "coarse":
        col = tuple(m | nonblank if m & nonblank else m for m in col)
    if stack and stack[0][0] == col:
        return ((col, True),) + stack[1:]
    stack = [(col, False), *stack]
    if mode == "shape" and len(stack) > near + 1:
        a, b = stack[near][0], stack[near + 1][0]
        if _shape(a, nonblank) == _shape(b, nonblank):
            stack[near:near + 2] = [(tuple(u | v for u, v in zip(a, b, strict=True)), True)]
    if len(stack) > cap:
        a, b = stack[-2][0], stack[-1][0]
        stack[-2:] = [(tuple(u | v for u, v in zip(a, b, strict=True)), True)]
    return tuple(stack)


def _shape(col, nonblank):
    return tuple((bool(m & nonblank), bool(m & ~nonblank)) for m in col)


# ---------------------------------------------------------------- the joined abstraction (gridjoin.py)


def _check_joined(starts, nodes, edges, wrong, agent, blank, how, claimed) -> tuple[bool, str]:
    """The joined fixpoint over sets of whole columns, walked with this module's own step: no
    `wrong` edge read, and as many skeletons as the certificate claims. The skeletons are visited
    first in, first out and the symbols in order, as the prover does: an absorbed run depends on
    the order joins happen in, so the count is the same only in the same order."""
    from collections import deque

    _, wrt, mov = agent.tables()
    table, todo, waiting, held, shapes = {}, deque(), set(), [0], {}

    def shape(cols):  # memoised: mult10's column sets hold hundreds of columns each
        found = shapes.get(cols)
        if found is None:
            found = shapes[cols] = frozenset(tuple(v != blank for v in c) for c in cols)
        return found

    def push(stack, col):
        return _joined_push(stack, col, shape, *how)

    def merge(config):
        n, row, head, left, right = config
        key = (n, row, shape(head), tuple(shape(c) for c, _ in left), tuple(shape(c) for c, _ in right))
        if key in table:
            o = table[key]
            sides = (tuple((c | d, p or q) for (c, p), (d, q) in zip(a, b, strict=True))
                     for a, b in ((o[3], left), (o[4], right)))
            config = (n, row, o[2] | head, *sides)
            if config == o:
                return
        held[0] += _size(config) - (_size(table[key]) if key in table else 0)
        table[key] = config
        if key not in waiting:
            waiting.add(key)
            todo.append(key)

    for n, row, col, left, right in sorted(starts):
        merge((n, row, _sets(col), tuple((_sets(c), p) for c, p in left),
               tuple((_sets(c), p) for c, p in right)))
    while todo and len(table) <= claimed and held[0] <= MAX_COLUMNS:
        key = todo.popleft()
        waiting.discard(key)
        n, row, head, left, right = table[key]
        q = nodes[n][0]
        for x, m in _rules(n, q, sorted({c[row] for c in head}), mov, edges, wrong):
            if m is None:
                return False, f"a joined abstract grid run reaches node {n} reading {agent.alphabet[x]}"
            col = frozenset(c[:row] + (int(wrt[q, x]),) + c[row + 1:] for c in head if c[row] == x)
            for nxt in _after(m, row, len(next(iter(col))), col, left, right, MOVES[mov[q, x]], push):
                merge(nxt)
    if held[0] > MAX_COLUMNS:
        return False, f"the joined abstraction holds more than {MAX_COLUMNS:,} columns (the prover's budget)"
    if len(table) != claimed:
        return False, f"the joined abstraction has {len(table)}+ skeletons, the certificate says {claimed}"
    return True, "ok"


def _size(config) -> int:
    return len(config[2]) + sum(len(c) for c, _ in config[3]) + sum(len(c) for c, _ in config[4])


def _sets(masks) -> frozenset:
    """A column of symbol masks as the set of columns it allows."""
    cols = [()]
    for mask in masks:
        cols = [c + (s,) for c in cols for s in range(mask.bit_length()) if mask >> s & 1]
    return frozenset(cols)


def _joined_push(stack, col, shape, cap, near):
    if stack and stack[0][0] == col:
        return ((col, True),) + stack[1:]
    runs = [(col, False), *stack]
    if len(runs) > near + 2 and shape(runs[near][0]) == shape(runs[near + 1][0]) == shape(runs[near + 2][0]):
        runs[near:near + 2] = [(runs[near][0] | runs[near + 1][0], True)]
    if len(runs) > cap:
        runs[-2:] = [(runs[-2][0] | runs[-1][0], True)]
    return tuple(runs)
