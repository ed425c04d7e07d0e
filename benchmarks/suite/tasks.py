"""A frozen suite of algorithms that dfst does not ship, written before any training on them.

    dfst --tasks-file benchmarks/suite/tasks.py tasks                  # the suite, registered and checked
    dfst --tasks-file benchmarks/suite/tasks.py train palindrome2 --seed 0 --out runs/pal

Each task has an answer function written from its definition (Python's integers and strings) and an
expert written from the algorithm; registering the file checks every expert against its answer on
thousands of instances up to 1,000 symbols (docs/tasks.md). The suite is frozen: a task is edited
only to fix an expert that disagrees with its answer function, and the docs say so.

Two operands on addition's layout (a right-aligned on row 1 over b on row 2, the head on a's units
digit, the answer read in b's row), column by column from the right: read a's digit, step down,
write into b's row, step left and up:
    add3, add12     a + b in base 3 / 12            carries              13 / 31 states
    sub3            a - b in base 3 (a >= b)        borrows              13 (7 rules never fire)
    xor2, and2      bitwise XOR / AND in base 2     bitwise               6
    maxdigit10      each digit the larger of a's and b's, base 10       14
    eq3             is a = b (as numbers) in base 3: y or n at column 1  comparison   13
One operand on one row (the head on its first symbol):
    gray2           binary to Gray code, left to right (the string)      rewriting     3
    negate2         two's complement of the bit string, right to left    rewriting     4
    contains101     does the string contain 101: y or n after it         matching      5
    triple10        3a in base 10, right to left                         carries       5
    mod7_10         a mod 7 in base 10, left to right                    residue       8
    palindrome2     is the string a palindrome: y or n left of it,       matching,     9
                    crossing it once per symbol pair                     quadratic time
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dfst.automata import Rule, make_transducer
from dfst.tasks import Instance, Task
from dfst.tasks.addition import ROW_B, addition_steps, draw_addition
from dfst.tasks.base import BLANK, alphabet_for, random_operand
from dfst.tasks.hard import hard_addition
from dfst.tasks.oneline import ROW, draw_row, hard_strings, random_string, symbol_values
from dfst.tasks.subtraction import generate_subtraction, hard_subtraction, larger_first, subtraction_steps

VERDICT = ("n", "y")  # written after the blank: symbols of the alphabet beyond the operands'


def digits(base: int) -> tuple[str, ...]:
    return alphabet_for(base)[:base]


def value(symbol: str, base: int) -> int:
    """A digit's value; the blank (an operand that has ended) reads as 0."""
    return 0 if symbol == BLANK else int(symbol, base)


# ---- two operands, column by column -------------------------------------------------------------

def hard_columns(n: int, base: int) -> list[Instance]:
    """Addition's hard set; every pair of digits x over y in the top column above zeros (no carry
    into it) and above a carry chain (top digits over 0…01); the digits cycled against every rotation
    of themselves; each digit alone above zeros or top digits past a one-digit operand of 0 or 1,
    both ways round."""
    d = digits(base)
    cycled = "".join(d[i % base] for i in range(max(n, base)))
    cases = hard_addition(n, base)
    cases += [Instance(cycled, cycled[s:] + cycled[:s], f"rotated_{s}") for s in range(base)]
    if n >= 2:
        carry = d[0] * (n - 2) + d[1]
        cases += [Instance(x + d[0] * (n - 1), y + d[0] * (n - 1), f"{x}_over_{y}_top") for x in d for y in d]
        cases += [Instance(x + d[-1] * (n - 1), y + carry, f"{x}_over_{y}_top_carried") for x in d for y in d]
    for x in d[1:]:
        for fill in (d[0], d[-1]):
            for short in d[:2]:
                cases += [Instance(x + fill * (n - 1), short, f"{x}_over_{fill}s_past_{short}"),
                          Instance(short, x + fill * (n - 1), f"{short}_past_{x}_over_{fill}s")]
    return cases


def hard_larger_first(n: int, base: int) -> list[Instance]:
    """Subtraction's hard set, and `hard_columns` with the larger operand first."""
    columns = hard_columns(n, base)
    return hard_subtraction(n, base) + [c if int(c.a, base) >= int(c.b, base) else Instance(c.b, c.a, c.name)
                                        for c in columns]


def column_agent(name: str, base: int, write):
    """The column loop with nothing carried between columns: `write(x, y)` is the digit written over
    b's y below a's x (blanks where an operand has ended); both blank ends the run."""
    column = (*digits(base), BLANK)
    rules = [Rule("read", x, f"pair_{x}", x, "D") for x in column]
    rules += [Rule(f"pair_{x}", y, "up", write(x, y), "L") if x != BLANK or y != BLANK
              else Rule(f"pair_{x}", y, "halt", BLANK, "S") for x in column for y in column]
    rules += [Rule("up", y, "read", y, "U") for y in column]
    states = ["read", *(f"pair_{x}" for x in column), "up", "halt"]
    return make_transducer(states, column, rules, initial="read", final="halt", blank=BLANK,
                           name=name)


def carry_agent(name: str, base: int, combine):
    """The column loop with a carry (or borrow) c of 0 or 1 in the state: `combine(x, y, c)` is the
    digit written and the next c; both blank writes a last carry, or stops."""
    column = (*digits(base), BLANK)
    rules = []
    for c in (0, 1):
        rules += [Rule(f"read{c}", x, f"pair{c}_{x}", x, "D") for x in column]
        rules += [Rule(f"up{c}", y, f"read{c}", y, "U") for y in column]
        for x in column:
            for y in column:
                if x == y == BLANK:
                    rules.append(Rule(f"pair{c}_{x}", y, "halt", "1" if c else BLANK, "S"))
                else:
                    digit, after = combine(value(x, base), value(y, base), c)
                    rules.append(Rule(f"pair{c}_{x}", y, f"up{after}", digits(base)[digit], "L"))
    states = [s for c in (0, 1) for s in (f"read{c}", *(f"pair{c}_{x}" for x in column), f"up{c}")]
    return make_transducer([*states, "halt"], column, rules, initial="read0", final="halt", blank=BLANK,
                           name=name)


def build_adder(base: int):
    return carry_agent(f"add{base}", base, lambda x, y, c: ((x + y + c) % base, (x + y + c) // base))


def build_subtractor(base: int):
    return carry_agent(f"sub{base}", base, lambda x, y, c: ((x - y - c) % base, int(x - y - c < 0)))


def sum_answer(a: str, b: str, base: int) -> str:
    return np.base_repr(int(a, base) + int(b, base), base).lower()


def difference_answer(a: str, b: str, base: int) -> str:
    return np.base_repr(int(a, base) - int(b, base), base).lower()


def build_xor(base: int):
    return column_agent("xor2", base, lambda x, y: str(value(x, 2) ^ value(y, 2)))


def build_and(base: int):
    return column_agent("and2", base, lambda x, y: str(value(x, 2) & value(y, 2)))


def xor_answer(a: str, b: str, base: int) -> str:
    return format(int(a, 2) ^ int(b, 2), "b")


def and_answer(a: str, b: str, base: int) -> str:
    return format(int(a, 2) & int(b, 2), "b")


def build_max_digit(base: int):
    def larger(x: str, y: str) -> str:  # an operand that has ended gives way to the other's digit
        return y if x == BLANK else x if y == BLANK else max(x, y, key=lambda s: value(s, base))

    return column_agent(f"maxdigit{base}", base, larger)


def max_digit_answer(a: str, b: str, base: int) -> str:
    width = max(len(a), len(b))
    merged = "".join(max(x, y) for x, y in zip(a.rjust(width, "0"), b.rjust(width, "0")))
    return merged.lstrip("0") or "0"


def build_equality(base: int):
    """Right to left with "equal so far" or "differ" in the state; both blank: the verdict, column 1."""
    column = (*digits(base), BLANK)
    rules = []
    for flag in VERDICT:
        rules += [Rule(f"read_{flag}", x, f"pair_{flag}_{x}", x, "D") for x in column]
        rules += [Rule(f"up_{flag}", y, f"read_{flag}", y, "U") for y in column]
        for x in column:
            for y in column:
                if x == y == BLANK:
                    rules.append(Rule(f"pair_{flag}_{x}", y, "halt", flag, "S"))
                else:
                    same = flag == "y" and value(x, base) == value(y, base)
                    rules.append(Rule(f"pair_{flag}_{x}", y, f"up_{VERDICT[same]}", y, "L"))
    states = [s for f in VERDICT for s in (f"read_{f}", *(f"pair_{f}_{x}" for x in column), f"up_{f}")]
    return make_transducer([*states, "halt"], (*column, *VERDICT), rules, initial="read_y", final="halt",
                           blank=BLANK, name=f"eq{base}")


def equality_answer(a: str, b: str, base: int) -> str:
    return VERDICT[int(a, base) == int(b, base)]


def draw_equality(a: str, b: str, base: int):
    return replace(draw_addition(a, b, base), answer=(ROW_B, 1))


def equality_steps(n: int, m: int, base: int) -> int:
    return 3 * (max(n, m) + 2)


def generate_equality(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    """Random numbers; half the time b is a, a third of those with one digit changed."""
    a, b = random_operand(rng, n, base), random_operand(rng, m, base)
    if rng.random() < 0.5:
        b = a
        if rng.random() < 1 / 3:
            i = int(rng.integers(len(a)))
            b = a[:i] + digits(base)[(int(a[i], base) + 1) % base] + a[i + 1:]
            b = b if b[0] != "0" or len(b) == 1 else "1" + b[1:]
    return a, b


def hard_equality(n: int, base: int) -> list[Instance]:
    """`hard_columns`, equal numbers (leading zeros on either side too) and numbers that differ
    in one column only, at the top, the units or the middle."""
    cases = hard_columns(n, base)
    for case in list(cases):
        a = case.a
        flip = {i: a[:i] + digits(base)[(int(a[i], base) + 1) % base] + a[i + 1:]
                for i in {0, len(a) // 2, len(a) - 1}}
        cases += [Instance(a, a, f"{case.name}_equal"), Instance("0" + a, a, f"{case.name}_equal_zero_a"),
                  Instance(a, "0" + a, f"{case.name}_equal_zero_b"),
                  *(Instance(a, b, f"{case.name}_differs_at_{i}") for i, b in flip.items())]
    return cases


# ---- one operand on one row ---------------------------------------------------------------------

def build_gray(base: int):
    """Left to right, the previous bit in the state: each bit becomes itself XOR the one before."""
    rules = [Rule(f"prev{p}", str(b), f"prev{b}", str(b ^ p), "R") for p in (0, 1) for b in (0, 1)]
    rules += [Rule(f"prev{p}", BLANK, "halt", BLANK, "S") for p in (0, 1)]
    return make_transducer(["prev0", "prev1", "halt"], alphabet_for(2), rules, initial="prev0",
                           final="halt", blank=BLANK, name="gray2")


def gray_answer(a: str, b: str, base: int) -> str:
    return format(int(a, 2) ^ (int(a, 2) >> 1), f"0{len(a)}b")


def build_negation(base: int):
    """Right to the end, then leftwards: copy up to the first 1 (kept), flip every bit after it."""
    rules = [Rule("right", x, "right", x, "R") for x in "01"] + [Rule("right", BLANK, "copy", BLANK, "L")]
    rules += [Rule("copy", "0", "copy", "0", "L"), Rule("copy", "1", "flip", "1", "L"),
              Rule("flip", "0", "flip", "1", "L"), Rule("flip", "1", "flip", "0", "L")]
    rules += [Rule(s, BLANK, "halt", BLANK, "S") for s in ("copy", "flip")]
    return make_transducer(["right", "copy", "flip", "halt"], alphabet_for(2), rules, initial="right",
                           final="halt", blank=BLANK, name="negate2")


def negation_answer(a: str, b: str, base: int) -> str:
    return format(-int(a, 2) % 2 ** len(a), f"0{len(a)}b")


def build_contains(base: int):
    """The pattern 101's matching automaton, left to right; on the blank after the string, y or n."""
    step = {("s", "0"): "s", ("s", "1"): "s1", ("s1", "0"): "s10", ("s1", "1"): "s1",
            ("s10", "0"): "s", ("s10", "1"): "found", ("found", "0"): "found", ("found", "1"): "found"}
    rules = [Rule(state, x, after, x, "R") for (state, x), after in step.items()]
    rules += [Rule(s, BLANK, "halt", "y" if s == "found" else "n", "S") for s in ("s", "s1", "s10", "found")]
    return make_transducer(["s", "s1", "s10", "found", "halt"], (*alphabet_for(2), *VERDICT), rules,
                           initial="s", final="halt", blank=BLANK, name="contains101")


def contains_answer(a: str, b: str, base: int) -> str:
    return VERDICT["101" in a]


def build_triple(base: int):
    """Right to the end, then leftwards with the carry (0, 1 or 2) in the state; the last carry at
    the left margin."""
    d = digits(base)
    rules = [Rule("right", x, "right", x, "R") for x in d] + [Rule("right", BLANK, "carry0", BLANK, "L")]
    for c in range(3):
        rules += [Rule(f"carry{c}", x, f"carry{(3 * int(x) + c) // base}", d[(3 * int(x) + c) % base], "L")
                  for x in d]
        rules.append(Rule(f"carry{c}", BLANK, "halt", d[c] if c else BLANK, "S"))
    return make_transducer(["right", "carry0", "carry1", "carry2", "halt"], alphabet_for(base), rules,
                           initial="right", final="halt", blank=BLANK, name="triple10")


def triple_answer(a: str, b: str, base: int) -> str:
    return str(3 * int(a))


def build_mod7(base: int):
    """Left to right, the remainder so far in the state; on the blank after the string, the remainder."""
    d = digits(base)
    rules = [Rule(f"r{r}", x, f"r{(base * r + int(x)) % 7}", x, "R") for r in range(7) for x in d]
    rules += [Rule(f"r{r}", BLANK, "halt", d[r], "S") for r in range(7)]
    return make_transducer([*(f"r{r}" for r in range(7)), "halt"], alphabet_for(base), rules, initial="r0",
                           final="halt", blank=BLANK, name="mod7_10")


def mod7_answer(a: str, b: str, base: int) -> str:
    return str(int(a) % 7)


def build_palindrome(base: int):
    """Cross out the leftmost symbol (x) keeping it in the state, run right to the last one not crossed
    out and compare; equal: cross it out and run back. A mismatch, or nothing left, runs left to the
    margin and writes n or y there."""
    rules = []
    for s in "01":
        rules += [Rule("start", s, f"carry{s}", "x", "R"),
                  *(Rule(f"carry{s}", t, f"carry{s}", t, "R") for t in "01"),
                  *(Rule(f"carry{s}", t, f"check{s}", t, "L") for t in ("x", BLANK)),
                  Rule(f"check{s}", s, "back", "x", "L"), Rule(f"check{s}", "x", "yes", "x", "L"),
                  Rule(f"check{s}", "1" if s == "0" else "0", "no", "1" if s == "0" else "0", "L"),
                  Rule("back", s, "back", s, "L")]
    rules += [Rule("back", "x", "start", "x", "R"), Rule("start", "x", "yes", "x", "L")]
    for verdict, state in zip(VERDICT, ("no", "yes")):
        passed = "x" if state == "yes" else "01x"  # nothing is left to compare once it says yes
        rules += [Rule(state, t, state, t, "L") for t in passed] + [Rule(state, BLANK, "halt", verdict, "S")]
    states = ["start", "carry0", "carry1", "check0", "check1", "back", "yes", "no", "halt"]
    return make_transducer(states, (*alphabet_for(2), "x", *VERDICT), rules, initial="start", final="halt",
                           blank=BLANK, name="palindrome2")


def palindrome_answer(a: str, b: str, base: int) -> str:
    return VERDICT[a == a[::-1]]


def palindrome_steps(n: int, m: int, base: int) -> int:
    return (n + 2) ** 2 + 2 * n + 4


def generate_palindromic(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    """A third random strings, a third palindromes, a third palindromes with one symbol flipped."""
    text = random_string(rng, n, digits(base))
    kind = rng.integers(3)
    if kind:
        text = text[: (n + 1) // 2] + text[: n // 2][::-1]
    if kind == 2:
        i = int(rng.integers(n))
        text = text[:i] + ("1" if text[i] == "0" else "0") + text[i + 1:]
    return text, ""


def hard_palindromes(n: int, base: int) -> list[Instance]:
    """The strings' hard set, and palindromes of n symbols with one flipped at the ends and the middle."""
    cases = hard_strings(n, digits(base))
    for case in list(cases)[:12]:
        text = case.a[: (len(case.a) + 1) // 2] + case.a[: len(case.a) // 2][::-1]
        cases.append(Instance(text, "", f"{case.name}_mirrored"))
        for i in {0, len(text) // 2, len(text) - 1}:
            flipped = text[:i] + ("1" if text[i] == "0" else "0") + text[i + 1:]
            cases.append(Instance(flipped, "", f"{case.name}_mirrored_flip_{i}"))
    return cases


def generate_string(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    return random_string(rng, n, digits(base)), ""


def hard_digit_strings(n: int, base: int) -> list[Instance]:
    """The strings' hard set, and runs of every digit and every digit pair (x y x y ...) of n symbols."""
    d = digits(base)
    cases = hard_strings(n, d)
    cases += [Instance(((x + y) * n)[:n], "", f"run_{x}{y}") for x in d for y in d]
    return cases + [Instance(d[1] + x * (n - 1) if n > 1 else x, "", f"one_then_{x}") for x in d]


def draw_after(a: str, b: str, base: int):
    """The string on row 1; the answer in the blank right after it."""
    return draw_row(symbol_values(a, alphabet_for(base)), base, extra_columns=1, answer=(ROW, len(a) + 1))


def draw_in_place(a: str, b: str, base: int):
    """The string on row 1; the answer is the row itself, ending at the string's last symbol."""
    return draw_row(symbol_values(a, alphabet_for(base)), base, answer=(ROW, len(a)))


def draw_margin(a: str, b: str, base: int):
    """The string on row 1; the answer in the margin left of it."""
    return draw_row(symbol_values(a, alphabet_for(base)), base, answer=(ROW, 0))


def scan_steps(n: int, m: int, base: int) -> int:
    return n + 2


def there_and_back_steps(n: int, m: int, base: int) -> int:
    return 2 * n + 4


def _two(name, base, summary, build, answer, **more) -> Task:
    fields = {"draw": draw_addition, "hard": hard_columns, "step_bound": addition_steps} | more
    return Task(name, name, base, summary, build, answer=answer, **fields)


def _one(name, base, summary, build, answer, draw, steps, readout="string", **more) -> Task:
    fields = {"hard": hard_digit_strings, "generate": generate_string} | more
    return Task(name, name, base, summary, build, draw, step_bound=steps, answer=answer, operands=1,
                readout=readout, **fields)


TASKS = [
    _two("add3", 3, "a + b in base 3", build_adder, sum_answer),
    _two("add12", 12, "a + b in base 12", build_adder, sum_answer),
    _two("sub3", 3, "a - b in base 3 (a >= b)", build_subtractor, difference_answer, hard=hard_larger_first,
         step_bound=subtraction_steps, generate=generate_subtraction, domain=larger_first),
    _two("xor2", 2, "a XOR b (bitwise) in base 2", build_xor, xor_answer),
    _two("and2", 2, "a AND b (bitwise) in base 2", build_and, and_answer),
    _two("maxdigit10", 10, "each digit the larger of a's and b's in its column, base 10", build_max_digit,
         max_digit_answer),
    _two("eq3", 3, "is a = b in base 3: y or n", build_equality, equality_answer, draw=draw_equality,
         hard=hard_equality, step_bound=equality_steps, generate=generate_equality, readout="symbol"),
    _one("gray2", 2, "the bit string's Gray code (b XOR b >> 1, same length)", build_gray, gray_answer,
         draw_in_place, scan_steps),
    _one("negate2", 2, "the bit string's two's complement (same length)", build_negation, negation_answer,
         draw_in_place, there_and_back_steps),
    _one("contains101", 2, "does the bit string contain 101: y or n", build_contains, contains_answer,
         draw_after, scan_steps, readout="symbol"),
    _one("triple10", 10, "3a in base 10", build_triple, triple_answer, draw_in_place, there_and_back_steps,
         readout="number"),
    _one("mod7_10", 10, "a mod 7 in base 10, one digit", build_mod7, mod7_answer, draw_after, scan_steps,
         readout="symbol"),
    _one("palindrome2", 2, "is the bit string a palindrome: y or n", build_palindrome, palindrome_answer,
         draw_margin, palindrome_steps, hard=hard_palindromes, generate=generate_palindromic,
         readout="symbol"),
]
