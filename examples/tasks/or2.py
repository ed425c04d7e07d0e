"""A task of your own, complete: bitwise OR of two binary numbers, on addition's layout.

    dfst --tasks-file examples/tasks/or2.py solve or2 1100 101       # 1101
    dfst --tasks-file examples/tasks/or2.py compile or2 --out runs/or2
    dfst --tasks-file examples/tasks/or2.py certify runs/or2
    dfst --tasks-file examples/tasks/or2.py train or2 --out runs/or2t

The operands are right-aligned in rows 1 (a) and 2 (b), as in add2; the head starts on a's units
digit and the answer is read in b's row, leftwards from the units column. The expert goes column by
column: it reads a's digit, steps down, writes a OR b into b's row, steps left and up. When a ends,
b's digits to the left are already the answer (x OR nothing = x), so it halts there.
"""

from dfst.automata import Rule, make_transducer
from dfst.tasks import Task
from dfst.tasks.addition import addition_steps, draw_addition
from dfst.tasks.hard import hard_addition


def build_or_agent(base: int):
    rules = [
        Rule("read", "0", "or0", "0", "D"), Rule("read", "1", "or1", "1", "D"),
        Rule("read", "_", "halt", "_", "S"),                      # a has ended: b's row is the answer
        *(Rule("or0", x, "up", "0" if x == "_" else x, "L") for x in "01_"),   # 0 OR b = b
        *(Rule("or1", x, "up", "1", "L") for x in "01_"),                     # 1 OR b = 1
        *(Rule("up", x, "read", x, "U") for x in "01_"),                      # back to a's row
    ]
    return make_transducer(["read", "or0", "or1", "up", "halt"], ["0", "1", "_"], rules,
                           initial="read", final="halt", blank="_", name="or2")


def or_answer(a: str, b: str, base: int) -> str:
    return format(int(a, 2) | int(b, 2), "b")


TASKS = [Task("or2", "or", 2, "a OR b (bitwise) in base 2", build_or_agent, draw_addition, hard_addition,
              addition_steps, answer=or_answer)]
