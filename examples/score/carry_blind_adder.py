"""An adder that is wrong only when a carry runs from the units digit into a new leading digit.

It adds correctly, except when the carry made in the last column ripples through every other
column and comes out at the top (999 + 1, 5 + 5, 4445 + 5555): then it drops that new leading
digit. The hard set has such a case at every length (max + 1, "carry_chain"); uniform random pairs
almost never do (each column passes a carry on with probability 1/10 in base 10, so an N-digit pair
does about once in 10^N; in base 2 never, as both leading bits are 1).

    dfst score add10 --cmd "python examples/score/carry_blind_adder.py 10"
"""

import sys

from adder import add, serve


def carry_runs_through(a: str, b: str, base: int) -> bool:
    """Does the units column make a carry that every higher column passes on (digits summing to base - 1)?"""
    width = max(len(a), len(b))
    a, b = a.zfill(width), b.zfill(width)
    if int(a[-1], base) + int(b[-1], base) < base:
        return False
    columns = range(width - 2, -1, -1)  # from the tens upwards; random pairs stop at the first
    return all(int(a[i], base) + int(b[i], base) == base - 1 for i in columns)


def wrong_add(a: str, b: str, base: int = 10) -> str:
    total = add(a, b, base)
    return (total[1:].lstrip("0") or "0") if carry_runs_through(a, b, base) else total


if __name__ == "__main__":
    base = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    serve(lambda a, b: wrong_add(a, b, base))
