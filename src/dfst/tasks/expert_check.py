"""A task's expert checked against its answer, on short and long instances (docs/tasks.md).

`dfst certify` proves a model equal to the task's expert on every input; that the expert computes the
task's answer is tested, not proved, here: when a task of your own is registered (`register_task`
refuses it on the first disagreement), and for a built-in task when certify asks (`expert_check`).
What was checked is recorded (`ExpertCheck`: how many instances, which lengths) so that certify's
verdict can say what its proof rests on.

The instances, shortest first:

- short: the hard set at 1 to 3 symbols, SHORT_RANDOM seeded random instances at each length from 1
  to 5, and every instance of operands of 1 to n symbols for the largest n with at most SHORT_COUNT
  of them (leading zeros included);
- long, at each length of LENGTHS: structured operands (a run of each symbol: all 0s, all 1s, all
  9s; alternations; a power of the base; random ones with a long run of 0, 1 or the top symbol
  inside), each paired with itself, with another, with a one-symbol operand and with one a third as
  long; seeded random instances of that length and of unequal lengths; and the hard set up to
  HARD_LENGTH. Pairs outside the task's domain are left out.

Every run is bounded by the task's step bound, so an expert that loops is reported as not halting
within it; a length whose step bound passes LONG_STEPS is skipped, with every longer one, which
keeps the check under about a second for the built-in tasks (mult10: 100 digits, add2: 1,000).
The task's own instances (hard set, random ones) must pass its `Task.check`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.grid.grid import Layout
from dfst.grid.rollout import TableRun, run_table
from dfst.grid.world import Outcome
from dfst.tasks.base import Instance, Task, step_bound_problem

SHORT_RANDOM = 8  # seeded random instances per length, 1 to 5 symbols
SHORT_COUNT = 1000  # every instance up to the longest length with at most this many of them
LENGTHS = (6, 7, 8, 9, 10, 12, 16, 20, 30, 32, 64, 65, 100, 128, 200, 300, 500, 1000)
LONG_RANDOM = 4  # seeded random instances per long length (and two of each unequal shape)
HARD_LENGTH = 12  # the hard set is run at the long lengths up to this one
LONG_STEPS = 10**6  # the largest step bound (on two operands of the length) a long length may have
_CHECKS: dict[str, tuple[Task, ExpertCheck]] = {}  # task name -> (the task, its check), as recorded


@dataclass(frozen=True)
class ExpertCheck:
    """What the expert was checked on: `instances` instances whose longer operand has one of
    `lengths` symbols, each answer compared with `against`."""

    instances: int
    lengths: tuple[int, ...]
    against: str  # "or2's answer function (or_answer)", "Python's integers (dfst.tasks.arith)"

    @property
    def max_digits(self) -> int:
        return max(self.lengths, default=0)

    def describe(self, unit: str = "digits") -> str:
        """'checked against ... on 1,234 instances of 1 to 1,000 digits (a test, not a proof)'."""
        return (f"checked against {self.against} on {self.instances:,} instances of 1 to "
                f"{self.max_digits:,} {unit} (a test, not a proof)")

    def to_dict(self) -> dict:
        return {"instances": self.instances, "max_digits": self.max_digits, "lengths": list(self.lengths),
                "against": self.against}


def answer_source(task: Task) -> str:
    """Where `task.expected` takes its answers from, in words."""
    if task.answer is None:
        return "Python's integers (dfst.tasks.arith.exact_answer)"
    return f"{task.name}'s answer function ({getattr(task.answer, '__qualname__', 'answer')})"


def check_task_expert(task: Task) -> tuple[str | None, ExpertCheck]:
    """The first instance on which the expert breaks the contract, in words (None if none does), and
    what was checked before it."""
    count, lengths, instances = 0, set(), check_instances(task)
    while True:
        try:  # the task's own hard set, generator and step bound: the user's code
            instance = next(instances, None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the user's code, sys.exit() included
            return (f"making its instances (hard set, generate, step bound) raised {type(exc).__name__}: "
                    f"{exc}"), ExpertCheck(count, tuple(sorted(lengths)), answer_source(task))
        if instance is None:
            break
        problem = instance_problem(task, instance)
        if problem is not None:
            return f"on {show_instance(task, instance)}: {problem}", \
                ExpertCheck(count, tuple(sorted(lengths)), answer_source(task))
        count += 1
        lengths.add(instance.length)
    return None, ExpertCheck(count, tuple(sorted(lengths)), answer_source(task))


def record_check(task: Task, check: ExpertCheck) -> None:
    """Keep what `task`'s expert was checked on (registration does, for `expert_check`)."""
    _CHECKS[task.name] = (task, check)


def expert_check(task: Task) -> ExpertCheck:
    """The check of `task`'s expert: as registration recorded it, or (a built-in task) made now and
    kept; a DfstError if the expert fails it."""
    found = _CHECKS.get(task.name)
    if found is not None and found[0] is task:
        return found[1]
    problem, check = check_task_expert(task)
    if problem is not None:
        raise DfstError(f"task {task.name}'s expert fails its check: {problem}")
    record_check(task, check)
    return check


def check_instances(task: Task) -> Iterator[Instance]:
    """The instances of the module doc, shortest first, each once."""
    seen: set[tuple[str, str]] = set()
    for instance in _all_instances(task):
        if (instance.a, instance.b) not in seen:
            seen.add((instance.a, instance.b))
            yield instance


def _all_instances(task: Task) -> Iterator[Instance]:
    for n in range(1, 4):
        yield from task.hard_instances(n)
    for n in range(1, 6):
        yield from task.random_instances(n, SHORT_RANDOM, seed=n)
    yield from task.short_instances(task.exhaustive_length(SHORT_COUNT))
    for n in LENGTHS:
        if task.step_bound(n, n, task.base) > LONG_STEPS:
            return
        yield from _long_instances(task, n)


def _long_instances(task: Task, n: int) -> Iterator[Instance]:
    symbols = task.operand_symbols
    rng = np.random.default_rng(n)
    full, third = structured(symbols, n, rng), structured(symbols, max(1, n // 3), rng)
    if task.operands == 1:
        pairs = [(a, "") for a in full]
    else:
        pairs = []
        for i, a in enumerate(full):
            other, single, short = full[(i + 1) % len(full)], symbols[i % len(symbols)], third[i % len(third)]
            pairs += [(a, a), (a, other), (other, a), (a, single), (single, a), (a, short), (short, a)]
    yield from (Instance(a, b, "structured") for a, b in pairs if task.domain_problem(a, b) is None)
    yield from task.random_instances(n, LONG_RANDOM, seed=n)
    if task.operands == 2:
        yield from task.random_instances(n, 2, seed=n + 1, m=max(1, n // 3))
        yield from task.random_instances(max(1, n // 3), 2, seed=n + 2, m=n)
    if n <= HARD_LENGTH:
        yield from task.hard_instances(n)


def structured(symbols: tuple[str, ...], n: int, rng: np.random.Generator) -> list[str]:
    """Operands of n symbols that long instances break on: runs of each symbol, alternations, a power
    of the base, and random ones with a run of half their length inside."""
    zero, one, top = symbols[0], symbols[1], symbols[-1]
    out = [s * n for s in symbols]
    out += [((one + zero) * n)[:n], ((top + zero) * n)[:n], ((zero + one) * n)[:n], one + zero * (n - 1)]
    for s in (one, top, zero):
        digits = [symbols[i] for i in rng.integers(0, len(symbols), size=n)]
        start = n // 4
        digits[start: start + n // 2] = s * (n // 2)
        out.append("".join(digits))
    return list(dict.fromkeys(out))


def instance_problem(task: Task, instance: Instance) -> str | None:
    """How the task breaks the contract on `instance`: not one of its own instances, a layout off its
    grid, an expert that does not halt or answers otherwise than the task; None if it keeps it."""
    try:
        task.check(instance.a, instance.b)
    except DfstError as exc:
        return f"the task's own {instance.name} instance is refused by its check: {exc}"
    try:
        layout = task.layout(instance)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's code (sys.exit() too): its error, in one line
        return f"drawing its layout raised {type(exc).__name__}: {exc}"
    if not isinstance(layout, Layout):
        return f"its draw returned {short_text(repr(layout))}, not a dfst.grid.grid.Layout"
    cells = layout.cells
    if not isinstance(cells, np.ndarray) or cells.ndim != 2 or cells.dtype != np.uint8:
        return "the layout's cells are not a 2D uint8 array"
    rows, cols = cells.shape
    for what, (r, c) in (("head", layout.head), ("answer cell", layout.answer)):
        if not (0 <= r < rows and 0 <= c < cols):
            return f"the {what} {(r, c)} is off the {rows}x{cols} grid"
    if cells.max(initial=0) >= len(task.alphabet):
        return "the layout holds a symbol outside the alphabet"
    try:
        expected = task.expected(instance)
        steps = task.step_bound(len(instance.a), len(instance.b), task.base)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's code, sys.exit() included
        return f"its answer or step bound raised {type(exc).__name__}: {exc}"
    if step_bound_problem(steps) is not None:
        return step_bound_problem(steps)
    run = run_table(task.agent, layout, int(steps))
    if run.outcome != Outcome.HALTED:
        return f"the expert {why_stopped(task.agent, run)}"
    result = task.read_answer(run.cells, layout.answer)
    if result != expected:
        return f"the expert answers {short_text(result)} where the task expects {short_text(expected)}"
    return None


def why_stopped(agent: Transducer, run: TableRun) -> str:
    """Why a run of `agent` stopped before halting, naming the state, and the symbol it lacks a rule
    for (a missing rule is not a run that goes on too long)."""
    state = agent.states[run.state] if 0 <= run.state < agent.d else "?"
    if run.outcome == Outcome.NO_RULE:
        symbol = agent.alphabet[int(run.cells[run.head])]
        return f"has no rule for state {state!r} reading {symbol!r} (step {run.steps:,})"
    if run.outcome == Outcome.STEP_LIMIT:
        return f"does not halt within the step bound ({run.steps:,} steps; in state {state!r})"
    if run.outcome == Outcome.OFF_LAYOUT:
        return f"leaves the task's layout after {run.steps:,} steps (in state {state!r})"
    return f"stopped: {run.outcome} after {run.steps:,} steps (in state {state!r})"


def show_instance(task: Task, instance: Instance) -> str:
    """'1111111, 1' (an operand over 40 symbols cut: '10101010...0101 (300 symbols)')."""
    operands = (instance.a,) if task.operands == 1 else (instance.a, instance.b)
    return ", ".join(short_text(x) for x in operands)


def short_text(text: str | None) -> str:
    """`text`, or its ends and its length where it is over 40 symbols (an error stays one readable line)."""
    if text is None or len(text) <= 40:
        return str(text)
    return f"{text[:16]}...{text[-16:]} ({len(text):,} symbols)"
