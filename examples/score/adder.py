"""A correct adder for `dfst score`: one JSON request a line in, one reply a line out.

    dfst score add10 --cmd "python examples/score/adder.py 10"
    dfst score add2 --cmd "python examples/score/adder.py 2"

Base 10 goes through the decimal module, whose conversions are linear in the digits (Python's int is
quadratic on long decimal strings); base 2 through int, which is linear in power-of-two bases.
"""

import json
import sys
from decimal import Context, Decimal


def add(a: str, b: str, base: int = 10) -> str:
    """a + b, digits most significant first, no leading zeros."""
    if base == 10:
        return format(Context(prec=len(a) + len(b) + 1).add(Decimal(a), Decimal(b)), "f")
    return format(int(a, 2) + int(b, 2), "b")


def serve(answer) -> None:
    """Answer each request as it comes, and flush: dfst waits for the reply before it counts it."""
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"id": request["id"], "answer": answer(request["a"], request["b"])}), flush=True)


if __name__ == "__main__":
    base = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    serve(lambda a, b: add(a, b, base))
