"""The register machine's instruction set: names, operand shapes and what each computes on integers.

The seed (002) builds its interpreter on one 4D lookup table T[op, u, v, out] (its eq. 7). Every
*table* instruction here is such a slice, given as a Python function g(u, v) mod n: the dense slice
is T[op, u, v, g(u, v)] = 1 (`dense_table`). Control and memory instructions (const, read, write,
jump, jumpr, call, store, ret, halt) are the special cases the seed describes beside the table;
circuit instructions compute their table entry with probabilistic logic gates instead (circuits.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dfst.errors import DfstError

# Operand shapes, as written in the assembly text: r = a register, v = an immediate value,
# L = a label (a line of the program).
TABLE_OPS: dict[str, Callable[[int, int, int], int]] = {
    "add": lambda u, v, n: (u + v) % n,
    "sub": lambda u, v, n: (u - v) % n,
    "mul": lambda u, v, n: (u * v) % n,
    "min": lambda u, v, n: min(u, v),
    "max": lambda u, v, n: max(u, v),
    "eq": lambda u, v, n: int(u == v),
    "lt": lambda u, v, n: int(u < v),
}
UNARY_OPS: dict[str, Callable[[int, int], int]] = {
    "inc": lambda u, n: (u + 1) % n,
    "dec": lambda u, n: (u - 1) % n,
    "copy": lambda u, n: u,
    "isz": lambda u, n: int(u == 0),
}
CIRCUIT_OPS: dict[str, str] = {"addc": "add", "subc": "sub", "mulc": "mul"}  # the table op each equals
# Instructions that write no register of their own: the seed writes a register at every step, so
# these write their first operand back where it came from (a no-op), see `Instr.out`.
NO_WRITE = ("write", "jump", "jumpr", "ret", "halt")
SPECIAL_OPS = ("const", "read", "store", "call") + NO_WRITE

OPCODES: tuple[str, ...] = tuple(TABLE_OPS) + tuple(UNARY_OPS) + tuple(CIRCUIT_OPS) + SPECIAL_OPS
OPCODE_INDEX = {name: i for i, name in enumerate(OPCODES)}

# Assembly operand shapes: what follows the opcode on a line.
SHAPES: dict[str, str] = {
    **{op: "r r r" for op in TABLE_OPS}, **{op: "r r r" for op in CIRCUIT_OPS},
    **{op: "r r" for op in UNARY_OPS},
    "const": "v r", "read": "r r", "write": "r r", "store": "r", "call": "L r",
    "jump": "r L", "jumpr": "r r", "ret": "r", "halt": "",
}


@dataclass(frozen=True)
class Instr:
    """One compiled line: opcode, operand registers a and b, output register, immediate value, target.

    `value` is the immediate of `const` (a number or a label's line); `target` the line of `jump`
    and `call`. Unused fields are 0, and `out` of a NO_WRITE instruction is `a` (written back as is).
    """

    op: str
    a: int = 0
    b: int = 0
    out: int = 0
    value: int = 0
    target: int = 0


def table_value(op: str, u: int, v: int, n: int) -> int:
    """The value a table, unary or circuit instruction computes from operand values u and v, base n."""
    op = CIRCUIT_OPS.get(op, op)
    if op in UNARY_OPS:
        return UNARY_OPS[op](u, n)
    return TABLE_OPS[op](u, v, n)


@dataclass(frozen=True)
class MachineConfig:
    """The machine's sizes: values 0..base-1, `registers` registers, `cells` memory cells, a step cap."""

    base: int = 16
    registers: int = 8
    cells: int = 8
    max_steps: int = 1000


def check_program(program: list[Instr], config: MachineConfig) -> None:
    """A DfstError listing every reason `program` cannot run exactly on a machine of `config`'s sizes."""
    n, problems = config.base, []
    if n < 2:
        problems.append(f"base {n} is below 2 (jump conditions read the value 1)")
    for line, ins in enumerate(program):
        if ins.op == "const" and not 0 <= ins.value < n:
            problems.append(f"line {line}: const {ins.value} is not a value of base {n}")
        if ins.op in CIRCUIT_OPS and n & (n - 1):
            problems.append(f"line {line}: circuit {ins.op} needs a base that is a power of two, not {n}")
    if any(ins.op in ("call", "store") for ins in program) and len(program) > n:
        problems.append(f"return addresses are values: a program of {len(program)} lines that calls "
                        f"or stores needs base >= {len(program)}, not {n}")
    if problems:
        raise DfstError("; ".join(problems))
