"""The task registry: `TASKS[name]` is a `Task`."""

from dfst.errors import DfstError
from dfst.tasks.addition import addition_steps, build_adder_agent, draw_addition
from dfst.tasks.base import Instance, Task
from dfst.tasks.hard import hard_addition, hard_by_digit, hard_multiplication
from dfst.tasks.multiplication import (
    build_by_digit_agent,
    build_multiplier_agent,
    by_digit_steps,
    draw_multiplication,
    generate_by_digit,
    multiplication_steps,
    one_digit_multiplier,
)
from dfst.tasks.registry import TASKS


def _addition(base: int) -> Task:
    return Task(f"add{base}", "add", base, f"a + b in base {base}", build_adder_agent,
                draw_addition, hard_addition, addition_steps)


def _multiplication(base: int) -> Task:
    return Task(f"mult{base}", "mult", base, f"a × b in base {base}", build_multiplier_agent,
                draw_multiplication, hard_multiplication, multiplication_steps)


def _by_digit(base: int) -> Task:
    return Task(f"mult{base}x1", "mult", base, f"a × one digit in base {base}", build_by_digit_agent,
                draw_multiplication, hard_by_digit, by_digit_steps, generate=generate_by_digit,
                domain=one_digit_multiplier, b_length=1)


def _more_tasks() -> list[Task]:
    """sub, compare, div10x1 and the string tasks (issue 17's ten)."""
    from dfst.tasks import compare, division, dyck, parity, reverse, sort, subtraction

    out = [Task(f"sub{base}", "sub", base, f"a − b in base {base} (a ≥ b)",
                subtraction.build_subtractor_agent, draw_addition, subtraction.hard_subtraction,
                subtraction.subtraction_steps, generate=subtraction.generate_subtraction,
                domain=subtraction.larger_first) for base in (2, 10)]
    out += [Task(f"compare{base}", "compare", base, f"<, = or > between a and b in base {base}",
                 compare.build_comparator_agent, compare.draw_comparison, compare.hard_comparison,
                 compare.comparison_steps, answer=compare.comparison_answer, readout="symbol",
                 generate=compare.generate_comparison, test_hard=compare.overturned_ties)
            for base in (2, 10)]
    string = {"operands": 1, "generate": parity.generate_string}
    return out + [
        _by_digit(10),
        Task("div10x1", "div", 10, "a ÷ one digit in base 10: quotient and remainder",
             division.build_divider_agent, division.draw_division, division.hard_division,
             division.division_steps, answer=division.division_answer, readout="quotient_remainder",
             generate=division.generate_division, domain=division.nonzero_digit_divisor, b_length=1),
        Task("parity2", "parity", 2, "the parity of a binary string's 1s", parity.build_parity_agent,
             parity.draw_parity, parity.hard_parity, parity.scan_steps, answer=parity.parity_answer,
             readout="symbol", **string),
        Task("reverse2", "reverse", 2, "a binary string reversed, on another row",
             reverse.build_reverser_agent, reverse.draw_reversal, parity.hard_parity, reverse.reversal_steps,
             answer=reverse.reversal_answer, readout="string", **string),
        Task("sort2", "sort", 2, "a binary string sorted", sort.build_sorter_agent, sort.draw_sorting,
             parity.hard_parity, sort.sorting_steps, answer=sort.sorting_answer, readout="string", **string),
        Task("dyck", "dyck", 2, "are the brackets balanced? y or n", dyck.build_dyck_agent, dyck.draw_dyck,
             dyck.hard_dyck, sort.sorting_steps, answer=dyck.dyck_answer, readout="symbol", operands=1,
             symbols=dyck.BRACKETS, generate=dyck.generate_brackets),
    ]


TASKS.update({t.name: t for t in (_addition(2), _addition(10), _multiplication(2), _multiplication(10),
                                 *_more_tasks())})


def get_task(name: str) -> Task:
    """The registered task `name` (installed `dfst.tasks` entry points are loaded the first time a
    name is missing), or a one-line DfstError listing the known ones."""
    if name not in TASKS:
        from dfst.tasks.user import load_entry_points

        load_entry_points()
    if name not in TASKS:
        raise DfstError(f"unknown task {name!r} (known: {', '.join(TASKS)}); a task of your own is "
                        "registered by its file: dfst --tasks-file FILE.py COMMAND ..., or DFST_TASKS_FILE "
                        "(docs/tasks.md)")
    return TASKS[name]


__all__ = ["TASKS", "Instance", "Task", "get_task"]
