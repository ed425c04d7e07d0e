"""The column adder shared by the addition and multiplication experts.

It adds the operand on an upper row into the accumulator on the row below, right to left, keeping
the carry in its state:

    add{c}   on the upper row with carry c: read digit x, go down carrying v = x + c   -> sum{v}
    sum{v}   on the lower row: write (v + y) mod base, step left with the new carry      -> next{c}
    next{c}  on the lower row, one column left: go back up                               -> add{c}
    carry    the operand has ended with carry 1: ripple it through the lower row

Blank counts as 0 on the lower row. The caller says where to go when the operand ends with no carry
(`done`, taken on the blank just past the operand's leading digit) and after the carry has been
absorbed (`absorbed`, taken on the lower-row cell that absorbed it).
"""

from __future__ import annotations

from dfst.automata import Rule


def adder_states(base: int) -> list[str]:
    return ["add0", "add1", *(f"sum{v}" for v in range(base + 1)), "next0", "next1", "carry"]


def adder_rules(digits: tuple[str, ...], blank: str, *, done: tuple[str, str],
                absorbed: tuple[str, str]) -> list[Rule]:
    """Rules of the adder; `done` and `absorbed` are (next state, move) exits."""
    base = len(digits)
    rules = []
    for c in (0, 1):
        for x, sym in enumerate(digits):
            rules.append(Rule(f"add{c}", sym, f"sum{x + c}", sym, "D"))
        for sym in (*digits, blank):
            rules.append(Rule(f"next{c}", sym, f"add{c}", sym, "U"))
    rules.append(Rule("add0", blank, done[0], blank, done[1]))
    rules.append(Rule("add1", blank, "carry", blank, "D"))
    for v in range(base + 1):
        for y, sym in enumerate((*digits, blank)):
            total = v + (0 if sym == blank else y)
            rules.append(Rule(f"sum{v}", sym, f"next{total // base}", digits[total % base], "L"))
    for y, sym in enumerate(digits[:-1]):
        rules.append(Rule("carry", sym, absorbed[0], digits[y + 1], absorbed[1]))
    rules.append(Rule("carry", digits[-1], "carry", digits[0], "L"))
    rules.append(Rule("carry", blank, absorbed[0], digits[1], absorbed[1]))
    return rules
