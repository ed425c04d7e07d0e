"""External faults: does the protocol catch a model that is wrong on one kind of instance only?

`dfst bench mutations` rewires the expert's rules; a model learned otherwise (an external one, scored
by `dfst score`) can be wrong in ways no rewired rule is. Each fault here is a model of its own: the
exact answer (Python's integers, `Task.expected`), made wrong (its last digit moved on by one) on the
instances of one kind, right on every other:

    carry_travels_K   addition: a carry out of the shorter operand enters exactly K digits of the
                      longer one and stops inside it (K = 1, 2, 3, 5, 10, 37, 98: the hard set
                      had 2-10, 16, 64, 256 and 1,024 until a carry went every distance to 100;
                      777, 2,500 and 4,096: every distance up to 1,000 digits, and past what 10^7
                      digit columns pay for at 10^4 only powers of two and a few others)
    borrow_travels_K  subtraction: the same for a borrow
    unequal_by_J      the operands' lengths differ by exactly J (J = 1, 2)
    new_top_digit     addition: the answer is longer than both operands (a carry out of the top)
    carry_chain_L     addition: some carry runs through at least L columns in a row (L = 8)

Each is scored by the protocol (`dfst.protocol.score`: at each length the hard set and `random`
seeded pairs, none held out), which catches it at the first length with a wrong answer, or never.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dfst.errors import DfstError
from dfst.protocol import score
from dfst.tasks import Instance, Task, get_task
from dfst.tasks.arith import digit_symbols

Kind = Callable[[str, str, int], bool]  # (a, b, base) -> is this instance of the fault's kind?
TRAVELS = (1, 2, 3, 5, 10, 37, 98, 777, 2500, 4096)
CHAIN = 8
LENGTHS = (10, 30, 100, 1_000, 10_000)  # the first two, then the protocol's ladder


def _digits(x: str, base: int) -> list[int]:
    """Least significant first."""
    symbols = digit_symbols(base)
    return [symbols.index(ch) for ch in reversed(x)]


def carry_travel(a: str, b: str, base: int) -> int | None:
    """How many digits of the longer operand a carry out of the shorter one enters before it stops
    inside it; None when no carry leaves the shorter operand, or it runs out of the top."""
    x, y = _digits(a, base), _digits(b, base)
    short, long_ = sorted((x, y), key=len)
    carry = 0
    for i, digit in enumerate(short):
        carry = (digit + long_[i] + carry) // base
    if not carry or len(long_) == len(short):
        return None
    for entered, digit in enumerate(long_[len(short):], start=1):
        if digit + 1 < base:
            return entered
    return None


def borrow_travel(a: str, b: str, base: int) -> int | None:
    """`carry_travel` for a - b (a the larger): the digits of a past b's that a borrow enters."""
    x, y = _digits(a, base), _digits(b, base)
    if len(y) >= len(x):
        return None
    borrow = 0
    for i, digit in enumerate(y):
        borrow = 1 if x[i] - digit - borrow < 0 else 0
    if not borrow:
        return None
    for entered, digit in enumerate(x[len(y):], start=1):
        if digit > 0:
            return entered
    return None


def longest_carry_chain(a: str, b: str, base: int) -> int:
    """The most columns in a row that pass a carry on, in a + b."""
    x, y = _digits(a, base), _digits(b, base)
    carry, run, best = 0, 0, 0
    for i in range(max(len(x), len(y))):
        total = (x[i] if i < len(x) else 0) + (y[i] if i < len(y) else 0) + carry
        carry = total // base
        run = run + 1 if carry else 0
        best = max(best, run)
    return best


def kinds(task: Task) -> dict[str, Kind]:
    """The faults that apply to `task` (by its operation), each with the instances it is wrong on."""
    faults: dict[str, Kind] = {f"unequal_by_{j}": (lambda a, b, base, j=j: abs(len(a) - len(b)) == j)
                               for j in (1, 2)}
    if task.operation == "add":
        faults |= {f"carry_travels_{k}": (lambda a, b, base, k=k: carry_travel(a, b, base) == k)
                   for k in TRAVELS}
        faults["new_top_digit"] = lambda a, b, base: len(task.expected(Instance(a, b))) > max(len(a), len(b))
        faults[f"carry_chain_{CHAIN}"] = lambda a, b, base: longest_carry_chain(a, b, base) >= CHAIN
    if task.operation == "sub":
        faults |= {f"borrow_travels_{k}": (lambda a, b, base, k=k: borrow_travel(a, b, base) == k)
                   for k in TRAVELS}
    return faults


def faulty(task: Task, kind: Kind) -> Callable[[list[tuple[str, str]]], list[str]]:
    """A model right on every instance but those of `kind`, where its last digit is one more."""
    symbols = digit_symbols(task.base)

    def wrong(answer: str) -> str:
        return answer[:-1] + symbols[(symbols.index(answer[-1]) + 1) % task.base]

    def predict(pairs: list[tuple[str, str]]) -> list[str]:
        answers = [task.expected(Instance(a, b)) for a, b in pairs]
        return [wrong(x) if kind(a, b, task.base) else x for (a, b), x in zip(pairs, answers)]
    return predict


def _fault_task(name: str) -> Task:
    task = get_task(name)
    if task.operation not in ("add", "sub"):
        raise DfstError(f"the fault bench knows addition and subtraction; {name} is {task.operation}")
    return task


def _after_a_failure(levels: list[dict]) -> bool:
    return not levels[-1]["robust"]


def run_faults(tasks: Sequence[str], digits: Sequence[int] = LENGTHS, random: int = 10,
               on_fault: Callable[[str, str], None] | None = None) -> list[dict]:
    """One row per (task, fault): the first length of `digits` at which the protocol saw a wrong
    answer (None: it never did), and the instances it saw wrong there."""
    checked = [_fault_task(name) for name in tasks]  # every name before any work
    if not checked:
        raise DfstError("no task to put faults in: give addition or subtraction tasks")
    rows = []
    for task in checked:
        for fault, kind in kinds(task).items():
            if on_fault is not None:
                on_fault(task.name, fault)
            result = score(faulty(task, kind), task, digits, random, after_level=_after_a_failure)
            caught = next((lv for lv in result.levels if not lv["robust"]), None)
            rows.append({"task": task.name, "fault": fault, "caught_at": caught and caught["digits"],
                         "wrong": caught and caught["instances"] - caught["exact"],
                         "instances": sum(lv["instances"] for lv in result.levels)})
    return rows
