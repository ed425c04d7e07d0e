"""An adder that is wrong only when a carry runs from the units digit into a new leading digit.

It adds correctly, except when the carry made in the last column ripples through every other
column and comes out at the top (999 + 1, 5 + 5, 4445 + 5555): then it drops that new leading
digit. The hard set has such a case at every length (max + 1, "carry_chain"); uniform random pairs
almost never do (a column passes a carry on with probability 1/10 in base 10, so an N-digit pair
does about once in 10^N; in base 2 never, as both leading bits are 1).

    dfst score add10 --cmd "python examples/score/carry_blind_adder.py 10"
"""

import json
import sys
from decimal import Context, Decimal

BASE = int(sys.argv[1]) if len(sys.argv) > 1 else 10


def add(a: str, b: str) -> str:
    if BASE == 10:
        return format(Context(prec=len(a) + len(b) + 1).add(Decimal(a), Decimal(b)), "f")
    return format(int(a, 2) + int(b, 2), "b")


def carry_runs_through(a: str, b: str) -> bool:
    """Does the units column make a carry that every higher column passes on (digits summing to BASE - 1)?"""
    width = max(len(a), len(b))
    a, b = a.zfill(width), b.zfill(width)
    if int(a[-1], BASE) + int(b[-1], BASE) < BASE:
        return False
    columns = range(width - 2, -1, -1)  # from the tens upwards; random pairs stop at the first
    return all(int(a[i], BASE) + int(b[i], BASE) == BASE - 1 for i in columns)


def wrong_add(a: str, b: str) -> str:
    total = add(a, b)
    return (total[1:].lstrip("0") or "0") if carry_runs_through(a, b) else total


for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "answer": wrong_add(request["a"], request["b"])}), flush=True)
