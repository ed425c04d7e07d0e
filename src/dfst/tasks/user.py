"""Tasks of your own (docs/tasks.md): checked against the contract, then registered beside the built-in ones.

A task is a `dfst.tasks.Task`: name, base, the expert (`build_agent(base)`), the layout of an
instance (`draw(a, b, base)`: grid, head, answer cell), the answer (`answer(a, b, base)`), hard
instances (`hard(n, base)`), the step bound (`step_bound(len a, len b, base)`); optionally one
operand (`operands=1`), operand symbols other than digits (`symbols`), how the answer is read
(`readout`: a number, a string, one symbol, quotient and remainder), a random instance generator
(`generate`) and the instances it accepts (`domain`). They reach dfst three ways:

- `register_task(task)` from Python;
- a file: `dfst --tasks-file FILE.py ...` or the environment variable DFST_TASKS_FILE, a Python
  file (your own code: it is run) whose module-level `TASKS` lists them;
- an installed package's entry point in the group `dfst.tasks`: a list of tasks, or a function
  returning one (loaded the first time a name is not found).

`register_task` refuses, with the reason, a task that breaks the contract: an alphabet that does not
start with the operand symbols then the blank, an unknown readout, and on short and long instances
(`dfst.tasks.expert_check`: every instance of a few symbols, seeded random and structured ones up
to 1,000 symbols where the step bound allows) a layout whose head or answer cell is off its grid or
that holds symbols outside the alphabet, an expert that does not halt within the step bound or
whose answer is not the task's. What was checked is recorded for `dfst certify` to say.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from dfst.errors import DfstError
from dfst.tasks.base import BLANK, Task
from dfst.tasks.expert_check import ExpertCheck, check_task_expert, record_check
from dfst.tasks.readout import READOUTS
from dfst.tasks.registry import TASKS

ENTRY_POINT_GROUP = "dfst.tasks"
TASKS_FILE_VARIABLE = "DFST_TASKS_FILE"
_entry_points_loaded = False
_sources: dict[str, str] = {}  # task name -> where it was registered from (a file loaded again replaces it)


def register_task(task: Task, source: str | None = None) -> Task:
    """Check `task` against the contract and add it to `dfst.tasks.TASKS`; a one-line DfstError
    names the first problem. A name is taken once, except by the same `source` again."""
    if not isinstance(task, Task):
        raise DfstError(f"not a dfst task: {task!r} (build a dfst.tasks.Task)")
    taken = task.name in TASKS and TASKS[task.name] is not task
    if taken and (source is None or _sources.get(task.name) != source):
        raise DfstError(f"task {task.name!r} is already registered (pick another name)")
    problem, check = _contract(task)
    if problem is not None:
        raise DfstError(f"task {task.name!r} refused: {problem}")
    TASKS[task.name] = task
    record_check(task, check)
    if source is not None:
        _sources[task.name] = source
    if "dfst.tasks.gym" in sys.modules:  # its environment too, once gymnasium's registry is loaded
        sys.modules["dfst.tasks.gym"].register_envs()
    return task


def contract_problem(task: Task) -> str | None:
    """The first way `task` breaks the contract (the module doc), in words, or None."""
    return _contract(task)[0]


def _contract(task: Task) -> tuple[str | None, ExpertCheck | None]:
    """The first problem (or None) and, past the alphabet's checks, what the expert was checked on."""
    if not task.name or not task.name.replace("_", "").isalnum():
        return "its name must be letters, digits and underscores", None
    try:
        alphabet = task.agent.alphabet
    except DfstError as exc:
        return f"its expert is invalid: {exc}", None
    if task.operands not in (1, 2):
        return f"operands must be 1 or 2, not {task.operands!r}", None
    if task.readout not in READOUTS:
        return f"readout {task.readout!r} is not one of {', '.join(READOUTS)}", None
    if len(task.operand_symbols) != task.base:
        return f"it has {len(task.operand_symbols)} operand symbols for base {task.base}", None
    if tuple(alphabet[: task.base + 1]) != (*task.operand_symbols, BLANK):
        return (f"its alphabet {list(alphabet)} does not start with the operand symbols "
                f"{list(task.operand_symbols)} then the blank {BLANK!r}"), None
    return check_task_expert(task)


def dfst_command(task_name: str) -> str:
    """How a command about `task_name` starts, for the commands dfst prints as hints: "dfst", or
    "dfst --tasks-file FILE" for a task registered from a file (a new process needs the file again)."""
    source = _sources.get(task_name)
    return "dfst" if source is None else f"dfst --tasks-file {shlex.quote(source)}"


def load_tasks_file(path: str | Path) -> list[str]:
    """Run the Python file `path` (your own code) and register the tasks its `TASKS` lists. The file
    is read as any input is (a regular file, at most DFST_MAX_TEXT_BYTES)."""
    from dfst.io.inputs import read_text

    path = Path(path)
    source = read_text(path, "tasks file", "text_bytes")
    namespace = {"__name__": "dfst_tasks_file", "__file__": str(path)}
    try:
        exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 (the user's own file, asked for)
    except BaseException as exc:  # the user's code: any error (sys.exit() and a KeyboardInterrupt it
        # raises included) is theirs to see, in one line, and dfst exits 2
        said = f": {exc}" if str(exc) else ""
        raise DfstError(f"tasks file {path} failed to run: {type(exc).__name__}{said}") from None
    tasks = namespace.get("TASKS")
    if not isinstance(tasks, (list, tuple)) or not tasks:
        raise DfstError(f"tasks file {path} defines no TASKS list of dfst.tasks.Task")
    return [register_task(task, str(path.resolve())).name for task in tasks]


def load_entry_points() -> list[str]:
    """Register the tasks of every installed `dfst.tasks` entry point (once per process)."""
    from importlib.metadata import entry_points

    global _entry_points_loaded
    if _entry_points_loaded:
        return []
    _entry_points_loaded = True
    names = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found = point.load()
            tasks = found() if callable(found) else found
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # an installed package's code, sys.exit() included
            raise DfstError(f"entry point {point.name} ({point.value}) of {ENTRY_POINT_GROUP} failed: "
                            f"{type(exc).__name__}: {exc}") from None
        names += [register_task(task).name for task in tasks]
    return names


def load_tasks_from_environment() -> list[str]:
    """The tasks file DFST_TASKS_FILE names, if it names one."""
    path = os.environ.get(TASKS_FILE_VARIABLE)
    return load_tasks_file(path) if path else []
