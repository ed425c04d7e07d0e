"""The task registry: `TASKS[name]` is a `Task`."""

from dfst.errors import DfstError
from dfst.tasks.addition import addition_steps, build_adder_agent, draw_addition
from dfst.tasks.base import Instance, Task
from dfst.tasks.hard import hard_addition, hard_multiplication
from dfst.tasks.multiplication import (
    build_multiplier_agent,
    draw_multiplication,
    multiplication_steps,
)


def _addition(base: int) -> Task:
    return Task(f"add{base}", "add", base, f"a + b in base {base}", build_adder_agent,
                draw_addition, hard_addition, addition_steps)


def _multiplication(base: int) -> Task:
    return Task(f"mult{base}", "mult", base, f"a × b in base {base}", build_multiplier_agent,
                draw_multiplication, hard_multiplication, multiplication_steps)


TASKS: dict[str, Task] = {t.name: t for t in (_addition(2), _addition(10),
                                              _multiplication(2), _multiplication(10))}


def get_task(name: str) -> Task:
    """The registered task `name` (installed `dfst.tasks` entry points are loaded the first time a
    name is missing), or a one-line DfstError listing the known ones."""
    if name not in TASKS:
        from dfst.tasks.user import load_entry_points

        load_entry_points()
    if name not in TASKS:
        raise DfstError(f"unknown task {name!r} (known: {', '.join(TASKS)})")
    return TASKS[name]


__all__ = ["TASKS", "Instance", "Task", "get_task"]
