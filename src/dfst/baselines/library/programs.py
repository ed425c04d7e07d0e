"""The library: each program's source, machine sizes, inputs, answer readout and Python reference.

Arithmetic mod n comes as lookup tables (add, sub, mul, min, max) and as circuits (addc, subc,
mulc); fib is recursive (depth a compile-time parameter), sort an insertion sort in memory, add2
dfst's binary addition task digit by digit. `LIBRARY` maps each name to its `LibraryProgram`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dfst.baselines.library import sources
from dfst.baselines.library.isa import CIRCUIT_OPS, TABLE_OPS, MachineConfig, table_value
from dfst.errors import DfstError


@dataclass(frozen=True)
class Call:
    """One use of a program: its integer arguments, the machine's base and the recursion depth."""

    args: tuple[int, ...]
    base: int
    depth: int = 1


@dataclass(frozen=True)
class Setup:
    """What the machine needs for a call: source, sizes, initial values, and how to read the answer."""

    source: str
    config: MachineConfig
    registers: dict[int, int]
    memory: dict[int, int]
    read: Callable[[list[int], list[int]], object]  # (final registers, final memory) -> answer


@dataclass(frozen=True)
class LibraryProgram:
    """A library entry: `setup` places a call on the machine, `python` computes the same answer."""

    name: str
    summary: str
    usage: str
    setup: Callable[[Call], Setup]
    python: Callable[[Call], object]


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise DfstError(message)


def _values(call: Call, count: int | None, name: str) -> None:
    """Arguments are values of the base (and `count` of them, when fixed)."""
    _require(count is None or len(call.args) == count,
             f"{name} takes {count} argument(s), got {len(call.args)}")
    _require(all(0 <= a < call.base for a in call.args),
             f"{name}'s arguments must be values 0..{call.base - 1} of base {call.base}")


def _arithmetic(op: str) -> LibraryProgram:
    """`op r0 r1 r2; halt`: one lookup (table op) or one circuit evaluation."""
    table = op if op in TABLE_OPS else CIRCUIT_OPS[op]
    kind = "lookup table" if op in TABLE_OPS else "circuit of probabilistic gates"

    def setup(call: Call) -> Setup:
        _values(call, 2, op)
        return Setup(f"{op} r0 r1 r2\nhalt\n", MachineConfig(call.base, 3, 1, 4),
                     {0: call.args[0], 1: call.args[1]}, {}, lambda regs, mem: regs[2])

    what = f"{table} mod n" if table in ("add", "sub", "mul") else f"{table} of two values"
    return LibraryProgram(op, f"{what}, as a {kind}", f"{op} A B",
                          setup, lambda call: table_value(table, *call.args, call.base))


def _fib_setup(call: Call) -> Setup:
    _values(call, 2, "fib")
    _require(call.depth >= 0, "fib's --depth must be >= 0")
    config = MachineConfig(call.base, 8, call.depth + 1, 12 * call.depth + 12)
    _require(call.depth < call.base, f"fib's stack pointer reaches {call.depth}: use a base above it")
    return Setup(sources.FIB.replace("{depth}", str(call.depth)), config,
                 {0: call.args[0], 1: call.args[1]}, {}, lambda regs, mem: regs[1])


def _fib_python(call: Call) -> int:
    a, b = call.args
    for _ in range(call.depth):
        a, b = b, (a + b) % call.base
    return b


def _sort_setup(call: Call) -> Setup:
    _values(call, None, "sort")
    k = len(call.args)
    _require(1 <= k < call.base, f"sort takes 1..{call.base - 1} values in base {call.base}, got {k}")
    config = MachineConfig(call.base, 8, k, 14 * k * k + 10)
    return Setup(sources.SORT, config, {0: k}, dict(enumerate(call.args)),
                 lambda regs, mem: mem[:k])


def _add2_setup(call: Call) -> Setup:
    _require(len(call.args) == 2 and min(call.args) >= 0, "add2 takes 2 integers >= 0")
    a, b = call.args
    w = max(a.bit_length(), b.bit_length(), 1)
    _require(call.base >= max(3 * w + 1, 4), f"add2 of {w}-bit operands needs base >= {3 * w + 1}")
    bits = [(a >> i) & 1 for i in range(w)] + [(b >> i) & 1 for i in range(w)]
    config = MachineConfig(call.base, 8, 3 * w + 1, 16 * w + 12)
    return Setup(sources.ADD2, config, {0: w}, dict(enumerate(bits)),
                 lambda regs, mem: sum(bit << i for i, bit in enumerate(mem[2 * w:])))


LIBRARY: dict[str, LibraryProgram] = {
    **{op: _arithmetic(op) for op in list(TABLE_OPS)[:5] + list(CIRCUIT_OPS)},
    "fib": LibraryProgram("fib", "recursive Fibonacci: (a, b) -> F(depth + 1), F(0) = a, F(1) = b, mod n",
                          "fib A B (with --depth)", _fib_setup, _fib_python),
    "sort": LibraryProgram("sort", "insertion sort of values in memory, ascending", "sort V1 V2 ...",
                           _sort_setup, lambda call: sorted(call.args)),
    "add2": LibraryProgram("add2", "dfst's add2: binary addition digit by digit (any size integers)",
                           "add2 A B", _add2_setup, lambda call: call.args[0] + call.args[1]),
}


def get_program(name: str) -> LibraryProgram:
    """The library entry `name`; a DfstError naming the choices if there is none."""
    if name not in LIBRARY:
        raise DfstError(f"no library program {name!r}; choose from {', '.join(LIBRARY)}")
    return LIBRARY[name]
