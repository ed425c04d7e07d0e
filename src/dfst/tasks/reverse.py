"""Reversing a binary string onto another row (task reverse2): the agent carries one symbol at a time.

Layout: the string a on row 1 from column 1; its reversal is built on row 2, from the column under
a's last symbol rightwards; the agent starts on a's last symbol and the answer is read exactly
(leading zeros count) leftwards from row 2's last cell:

    row 1   . 1 1 0 . . .      a
    row 2   . . . . . . .      -> . . 0 1 1 . , the answer

Algorithm: take a's last symbol x (erase it), peek left (is it the last one?), go down and walk
right over row 2's blanks, then over the symbols already carried, and write x on the first blank
after them; stop there if it was the last, else go up and walk left to a's new last symbol. The
first symbol has no carried ones to walk over: it is written one step right of where it went down.

    start, take      erase x and step left                              -> peek{x} / first_peek{x}
    peek{x}          a blank: x was the last one; go down               -> blanks{x}{last?}
    blanks{x}{l}     walk right over blanks; on a symbol                -> over{x}{l}
    over{x}{l}       walk right over symbols; on a blank write x, stop or go up -> take
    first_peek{x}, first_down{x}{l}, first_write{x}{l}: the same for the first symbol

States: 23; alphabet: 0, 1 and the blank. Steps: quadratic, about 3·i for the i-th symbol.
"""

from __future__ import annotations

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.base import BLANK, alphabet_for
from dfst.tasks.oneline import draw_row, symbol_values

ROW_OUT = 2


def build_reverser_agent(base: int) -> Transducer:
    bits = alphabet_for(base)[:2]
    states, rules = ["start", "take"], []
    for first, take in ((True, "start"), (False, "take")):
        peek = "first_peek" if first else "peek"
        for x in bits:
            states.append(f"{peek}{x}")
            rules.append(Rule(take, x, f"{peek}{x}", BLANK, "L"))
            for last in (True, False):
                rules += _carry_rules(x, last, first, bits, states)
    rules += [Rule("take", BLANK, "take", BLANK, "L")]  # back along row 1 to a's last symbol
    return make_transducer([*states, "halt"], alphabet_for(base), rules, initial="start", final="halt",
                           blank=BLANK, name="reverse2")


def _carry_rules(x: str, last: bool, first: bool, bits: tuple[str, ...], states: list[str]) -> list[Rule]:
    """From peeking left of the erased x (`last`: a blank there) to writing x on row 2."""
    tag = f"{x}_{'last' if last else 'more'}"
    peek = f"first_peek{x}" if first else f"peek{x}"
    seen = [BLANK] if last else list(bits)
    done = ("halt", "S") if last else ("take", "U")
    if first:  # down, one step right, write
        down, write = f"first_down{tag}", f"first_write{tag}"
        states += [down, write]
        return [*(Rule(peek, s, down, s, "D") for s in seen), Rule(down, BLANK, write, BLANK, "R"),
                Rule(write, BLANK, done[0], x, done[1])]
    blanks, over = f"blanks{tag}", f"over{tag}"
    states += [blanks, over]
    return [*(Rule(peek, s, blanks, s, "D") for s in seen), Rule(blanks, BLANK, blanks, BLANK, "R"),
            *(Rule(blanks, s, over, s, "R") for s in bits), *(Rule(over, s, over, s, "R") for s in bits),
            Rule(over, BLANK, done[0], x, done[1])]


def draw_reversal(a: str, b: str, base: int) -> Layout:
    n = len(a)
    return draw_row(symbol_values(a, alphabet_for(base)), base, rows=4, extra_columns=n - 1, head=n,
                    answer=(ROW_OUT, 2 * n - 1))


def reversal_answer(a: str, b: str, base: int) -> str:
    return a[::-1]


def reversal_steps(n: int, m: int, base: int) -> int:
    """Symbol i: erase, peek, down, about 2i + 1 steps right, write, up and i + 1 steps back."""
    return 4 * (n + 2) ** 2
