"""A correct adder for `dfst score`: one JSON request a line in, one reply a line out.

    dfst score add10 --cmd "python examples/score/adder.py 10"
    dfst score add2 --cmd "python examples/score/adder.py 2"

Base 10 goes through the decimal module, whose conversions are linear (Python's int is quadratic
on long decimal strings); base 2 through int, which is linear in power-of-two bases.
"""

import json
import sys
from decimal import Context, Decimal

BASE = int(sys.argv[1]) if len(sys.argv) > 1 else 10


def add(a: str, b: str) -> str:
    if BASE == 10:
        return format(Context(prec=len(a) + len(b) + 1).add(Decimal(a), Decimal(b)), "f")
    return format(int(a, 2) + int(b, 2), "b")


for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "answer": add(request["a"], request["b"])}), flush=True)
