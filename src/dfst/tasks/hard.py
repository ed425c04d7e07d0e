"""Hard structured instances at N digits: the cases that separate a learned automaton from a good
approximation of one (long carry chains, symmetric and repeated patterns, extreme lengths).

Every generator is deterministic in (n, base). Digit strings are most significant first; some hard
operands have leading zeros on purpose (all-zero operands, 0…02), since the grid shows every digit.
"""

from __future__ import annotations

import hashlib

from dfst.tasks.arith import digit_symbols
from dfst.tasks.base import Instance

# Which version of the protocol's instances a stored result was evaluated with. 2 added carries past
# the shorter operand (`_past_the_shorter`); 3 a carry arriving where both operands end (81 + 9), and
# in multiplication a leading zero before a run of digits (011 × 11) and every digit times a run of
# the top digit (2 × 999), which the mutation bench (`dfst bench mutations`) showed missing; 4-8 were
# task by task (compare's equal columns, leading zeros, short pairs and expert; mult10x1's one- and
# two-digit operands; div10x1's expert that subtracts on the grid; addition's and subtraction's carries
# entering 2-10, 16, 64, 256 or 1,024 digits of the longer operand). 9, every task: from a ladder's
# second length on, a hard set holds only instances of that length (`dfst.protocol.instances`: the
# short ones are scored once, at the first), every other random pair has operands of unequal lengths,
# and a carry (a borrow) enters every k from 2 to 100 digits of the longer operand (`_carry_travels`).
HARD_SET_VERSION = 9
# Task by task since: 10, compare2 and compare10: tie runs that the top column overturns, a family the
# protocol scores and no sampler draws (`compare.overturned_ties`, `Task.test_hard`).
# 11, addition and subtraction: a carry (a borrow) enters every k up to n - 2 digits of the longer
# operand where 10^7 digit columns pay for it (every k up to 3,163 digits), and past that every power of
# two, the longest travel and 16 more (`travel_lengths`): they stopped at 1,024 before.
TASK_VERSIONS = {"compare2": 10, "compare10": 10, **{name: 11 for name in ("add2", "add10", "sub2", "sub10")}}


def hard_set_version(task: str) -> int:
    """The version of the protocol's instances that a stored result records for `task` (a change
    re-evaluates it)."""
    return TASK_VERSIONS.get(task, HARD_SET_VERSION)


def _patterns(n: int, base: int) -> dict[str, str]:
    """Named n-digit operands (n >= 1)."""
    d = digit_symbols(base)
    top, one, two = d[-1], d[1], d[min(2, base - 1)]
    cycle = "".join(d[(i % (base - 1)) + 1] for i in range(n))  # 1 2 … base-1 1 2 …
    return {
        "max": top * n,                                   # 9…9 / 1…1 in base 2
        "ones": one * n,                                  # 1…1
        "zeros": d[0] * n,                                # 0…0
        "power": one + d[0] * (n - 1),                    # 10…0
        "power_plus_one": (one + d[0] * (n - 2) + one) if n > 1 else one,  # 10…01
        "alternating": "".join(one if i % 2 == 0 else d[0] for i in range(n)),  # 1010…
        "alternating_max": "".join(top if i % 2 == 0 else d[0] for i in range(n)),  # 9090…
        "cycle": cycle,
        "palindrome": (cycle[: (n + 1) // 2] + cycle[: n // 2][::-1]),
        "leading_zeros_two": d[0] * (n - 1) + two,        # 0…02, the Neural GPU's nemesis
    }


def _complement(x: str, base: int) -> str:
    """base^n - 1 - x, digit by digit: x + complement has no carries and all-max digits."""
    d = digit_symbols(base)
    return "".join(d[base - 1 - d.index(ch)] for ch in x)


def hard_addition(n: int, base: int) -> list[Instance]:
    p = _patterns(n, base)
    d = digit_symbols(base)
    cases = [
        ("carry_chain", p["max"], d[1]), ("carry_chain_swapped", d[1], p["max"]),
        ("max_plus_max", p["max"], p["max"]), ("zeros", p["zeros"], p["zeros"]),
        ("zero_plus_zero", d[0], d[0]), ("zero_plus_max", d[0], p["max"]),
        ("power_plus_power", p["power"], p["power"]), ("power_plus_one", p["power"], d[1]),
        ("one_plus_power", d[1], p["power"]), ("max_plus_digit", p["max"], d[-1]),
        ("digit_plus_max", d[-1], p["max"]),
        ("symmetric", p["power_plus_one"], p["power_plus_one"]),
        ("alternating", p["alternating"], p["alternating"]),
        ("alternating_max", p["alternating_max"], p["alternating_max"]),
        ("equal_cycle", p["cycle"], p["cycle"]), ("palindromes", p["palindrome"], p["palindrome"]),
        ("ones_plus_ones", p["ones"], p["ones"]),
        ("no_carry_all_max", p["cycle"], _complement(p["cycle"], base)),
        ("leading_zeros", p["leading_zeros_two"], p["leading_zeros_two"]),
    ]
    cases += _past_the_shorter(n, base) + _carry_travels(n, base)
    return [Instance(a, b, name) for name, a, b in cases]


EVERY_TRAVEL = 100  # `_carry_travels` sends a carry every k places up to at least this, at every length
TRAVEL_COLUMNS = 10**7  # ... and every k up to TRAVEL_COLUMNS / n: about 10^7 digit columns a direction
TRAVEL_FAMILY = "carry_travels_"  # the name of every instance of `_carry_travels` starts so
ARBITRARY_TRAVELS = 16  # ... and this many k past that, fixed by n alone (`_arbitrary_travels`)


def every_travel_up_to(n: int) -> int:
    """Every k up to this is in `travel_lengths(n)`: all of them (n - 2) up to 3,163 digits, then as
    many as 10^7 digit columns pay for (1,000 at 10^4 digits, 100 from 10^5 on). Every k up to n
    would be 2n instances of n digits: 2·10^10 columns at 10^5, about two hours of add10's raw weights
    on a laptop core for one length of one run."""
    return min(n - 2, max(EVERY_TRAVEL, TRAVEL_COLUMNS // n))


def travel_lengths(n: int) -> list[int]:
    """How far `_carry_travels` sends a carry past the shorter operand at n digits (k places needs
    n >= k + 2): every k from 2 to `every_travel_up_to(n)`, then every power of two, the longest
    (n - 2, a carry that stops at the top digit) and ARBITRARY_TRAVELS others in between."""
    every = every_travel_up_to(n)
    beyond = {1 << j for j in range(1, (n - 2).bit_length()) if every < 1 << j <= n - 2}
    if n - 2 > every:
        beyond |= {n - 2, *_arbitrary_travels(every + 1, n - 3)}
    return [*range(2, every + 1), *sorted(beyond)]


def _arbitrary_travels(low: int, high: int) -> set[int]:
    """ARBITRARY_TRAVELS values in [low, high] (all of them when fewer), the same for every run of
    every version of Python: each a hash of its index and the interval, not a seeded generator whose
    stream a library may change."""
    if high - low + 1 <= ARBITRARY_TRAVELS:
        return set(range(low, high + 1))
    picks: set[int] = set()
    for index in range(4 * ARBITRARY_TRAVELS):
        digest = hashlib.sha256(f"carry travel {index} in {low}..{high}".encode()).digest()
        picks.add(low + int.from_bytes(digest[:8], "big") % (high - low + 1))
        if len(picks) == ARBITRARY_TRAVELS:
            break
    return picks


def _carry_travels(n: int, base: int) -> list[tuple[str, str, str]]:
    """A carry out of the shorter operand that enters exactly k digits of the longer one and stops
    there, at a 0 (1 0 9…9 1…1 + 9…9, k - 1 nines), both ways round, for k in `travel_lengths` (one
    place is `_past_the_shorter`'s). An adder wrong only there passed the protocol before
    (`dfst bench faults`); subtraction's hard set turns each into a borrow entering k digits."""
    d = digit_symbols(base)
    top, cases = d[-1], []
    for k in travel_lengths(n):
        a, b = d[1] + d[0] + top * (k - 1) + d[1] * (n - k - 1), top * (n - k - 1)
        cases += [(f"{TRAVEL_FAMILY}{k}", a, b), (f"{TRAVEL_FAMILY}{k}_swapped", b, a)]
    return cases


def _past_the_shorter(n: int, base: int) -> list[tuple[str, str, str]]:
    """Carries out of the shorter operand, both ways round: for every digit d, a carry arrives at d
    where the other operand has ended, and the longer one ends there (d 1…1 + 9…9, as 81 + 9) or
    goes on past it (1 d 1…1 + 9…9); and a carry runs into the longer operand's leading zeros
    (9…9 + 0…01). The mutation bench (`dfst bench mutations`) found rules that only these reach."""
    d = digit_symbols(base)
    if n < 2:
        return []
    top, cases = d[-1], []
    for digit in d:
        pairs = [(f"carry_past_short_end_{digit}", digit + d[1] * (n - 1), top * (n - 1))]  # 81 + 9
        if n >= 3:  # ... and the longer operand going on past it: 1 8 1 + 9
            pairs.append((f"carry_past_short_{digit}", d[1] + digit + d[1] * (n - 2), top * (n - 2)))
        cases += [c for name, a, b in pairs for c in ((name, a, b), (f"{name}_swapped", b, a))]
    low = d[0] * (n - 1) + d[1]
    return cases + [("carry_into_leading_zeros", top * (n - 1), low),
                    ("carry_into_leading_zeros_swapped", low, top * (n - 1))]


def hard_multiplication(n: int, base: int) -> list[Instance]:
    p = _patterns(n, base)
    d = digit_symbols(base)
    cases = [
        ("max_times_max", p["max"], p["max"]), ("power_times_power", p["power"], p["power"]),
        ("symmetric", p["power_plus_one"], p["power_plus_one"]),
        ("max_times_digit", p["max"], d[-1]), ("digit_times_max", d[-1], p["max"]),
        ("cycle_times_two", p["cycle"], d[min(2, base - 1)]),
        ("zero_times_x", d[0], p["max"]), ("x_times_zero", p["cycle"], d[0]),
        ("one_times_x", d[1], p["cycle"]), ("x_times_one", p["max"], d[1]),
        ("zero_times_zero", d[0], d[0]), ("zeros", p["zeros"], p["zeros"]),
        ("power_times_max", p["power"], p["max"]), ("max_times_power", p["max"], p["power"]),
        ("alternating", p["alternating"], p["alternating"]),
        ("alternating_max", p["alternating_max"], p["alternating_max"]),
        ("ones_times_ones", p["ones"], p["ones"]), ("square_cycle", p["cycle"], p["cycle"]),
        ("palindromes", p["palindrome"], p["palindrome"]),
        ("leading_zeros", p["leading_zeros_two"], p["leading_zeros_two"]),
    ]
    for digit in d[2:-1]:  # every digit times a run of the top digit, both ways round (2 × 999)
        cases += [(f"digit_{digit}_times_max", digit, p["max"]),
                  (f"max_times_digit_{digit}", p["max"], digit)]
    if n >= 2:  # a leading zero before a run of non-zero digits (011 × 11): found by the mutation bench
        zero_max = d[0] + p["max"][1:]
        cases += [("leading_zero_times_max", zero_max, p["max"][1:]),
                  ("max_times_leading_zero", p["max"][1:], zero_max),
                  ("leading_zero_times_longer", zero_max, p["max"])]
    return [Instance(a, b, name) for name, a, b in cases]


def hard_by_digit(n: int, base: int) -> list[Instance]:
    """Every digit times every n-digit pattern (mult10x1), leading zeros before a run of the top digit,
    an operand in which every pair of digits stands side by side, runs of each pair (x y x y …: the
    shift states read y after x again and again, and a rewired shift then overruns the step bound),
    every operand of one or two digits, and every two last digits behind a zero behind ones (the
    mutation bench found rules that only 30 × 0, 3 × 4, 075 × 9, 1088 × 9 or 0303… × 6 reach)."""
    d = digit_symbols(base)
    operands = {**_patterns(n, base), "leading_zero_max": d[0] + d[-1] * (n - 1),
                "digit_pairs": digit_pairs(d, n), **{f"run_{x}{y}": ((x + y) * n)[:n] for x in d for y in d}}
    if n >= 3 and base == 10:  # the rarest rules (few instances of 3 digits each): 088 × 9, 912 × 9, ...
        operands |= {"leading_zero_eights": "0" + "8" * (n - 1),
                     **{f"nine_ones_{u}": "9" + "1" * (n - 2) + u for u in "235"}}
    operands |= {f"short_{x}{y}": x + y for x in ("", *d) for y in d}
    if n >= 3:  # 075 × 9 and 1088 × 9: a zero before the last two digits, behind ones
        operands |= {f"ones_0{x}{y}": d[1] * (n - 3) + d[0] + x + y for x in d for y in d}
    return [Instance(a, digit, f"{name}_times_{digit}") for name, a in operands.items() for digit in d]


def digit_pairs(d: tuple[str, ...] | str, length: int) -> str:
    """`length` digits in which every pair x y occurs next to each other when there is room: the de
    Bruijn sequence of order 2 (Lyndon words of length 1 and 2 in order, FKM), cycled."""
    k = len(d)
    words = [[a] if a == b else [a, b] for a in range(k) for b in range(a, k)]
    cycle = "".join(d[i] for w in words for i in w)  # 0 01 02 … 1 12 … : a cycle through every pair
    return (cycle * (length // len(cycle) + 2))[:length]
