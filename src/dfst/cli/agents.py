"""Commands about tasks and their expert agents: `tasks`, `solve`, `agent`."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import typer
from rich.table import Table

from dfst.automata import Transducer
from dfst.cli.app import (
    OPERAND_SETTINGS,
    JsonOption,
    TaskArgument,
    app,
    console,
    note_agent,
    print_json,
    print_table,
    read_operand,
)
from dfst.errors import DfstError
from dfst.grid.render import render_cells
from dfst.io.limits import default_max_memory, parse_size
from dfst.tasks import Task, get_task
from dfst.tasks.solve import agent_text, choose_instance, solve, task_summaries, write_agent

MAX_DELAY = 60.0  # seconds per --animate frame; beyond that it is a hang, not an animation
MaxMemoryOption = typer.Option(
    None, "--max-memory", metavar="SIZE",
    help="Refuse a request whose memory estimate is over SIZE (e.g. 4G; default: DFST_MAX_MEMORY, "
         "else half the RAM).")


@app.command("tasks")
def tasks_command(as_json: bool = JsonOption) -> None:
    """List the tasks: base, alphabet size k, states d and the DFST parameter count."""
    rows = task_summaries()
    if as_json:
        return print_json(rows)
    table = Table("task", "base", "k", "d", "DFST params", "what")
    for r in rows:
        table.add_row(r["task"], str(r["base"]), str(r["k"]), str(r["d"]), f"{r['params']:,}", r["summary"])
    print_table(table)


@app.command("solve", context_settings=OPERAND_SETTINGS)
def solve_command(
    task_name: str = TaskArgument,
    a: str = typer.Argument(None, help="First operand in the task's base, or @FILE."),
    b: str = typer.Argument(None, help="Second operand in the task's base, or @FILE (none for a "
                                       "task of one operand: parity2, sort2, reverse2, dyck)."),
    random_digits: int = typer.Option(None, "--random", help="Instead of A B: two random N-digit operands."),
    seed: int = typer.Option(0, "--seed", help="Seed for --random (>= 0)."),
    agent_file: Path = typer.Option(None, "--agent", help="Run this agent JSON instead of the expert."),
    show: bool = typer.Option(False, "--show", help="Render the final grid."),
    animate: bool = typer.Option(False, "--animate",
                                 help="Step through the run (small inputs); with --json on stderr."),
    delay: float = typer.Option(0.05, help=f"Seconds per frame with --animate (0 to {MAX_DELAY:g})."),
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
) -> int:
    """Run the expert agent (or --agent FILE) on A and B and check the answer against Python.

    Exit code 0: the answer is correct; 1: it is WRONG (or the agent did not halt); 2: bad input.
    With --json, stdout is one JSON document and --animate draws its frames on stderr."""
    task = get_task(task_name)
    _check_options(seed, delay, random_digits, a, b)
    memory = memory_bound(max_memory)
    if a is not None:  # @FILE operands are the command line's, read here
        a, b = read_operand(a), None if b is None else read_operand(b)
    instance = choose_instance(task, a, b, random_digits=random_digits, seed=seed, max_memory=memory,
                               as_json=as_json, on_estimate=_note_long_run)
    agent = agent_for(task, agent_file, quiet=as_json)
    if animate:
        from dfst.cli.animate import animate_run

        animate_run(agent, task, task.layout(instance), task.max_steps(instance), delay, stderr=as_json)
    solution = solve(task, instance, agent)
    if as_json:
        print_json(solution.to_dict())
        return 0 if solution.correct else 1
    run, layout = solution.run, solution.layout
    if show:
        console.print(render_cells(run.cells, task.alphabet, task.blank, head=run.head,
                                   answer_row=layout.answer[0], color=console.is_terminal),
                      highlight=False, markup=False)
    mark = "[green]correct[/]" if solution.correct else "[red]WRONG[/]"
    console.print(f"{task.name}: {task.show(_clip(instance.a), _clip(instance.b))} "
                  f"= {_clip(solution.result or '(no answer)')}  {mark}  "
                  f"({run.steps:,} steps, {run.outcome}, {solution.seconds:.3f} s)", highlight=False)
    return 0 if solution.correct else 1


def memory_bound(text: str | None) -> int:
    """The bytes given to --max-memory, or the default (DFST_MAX_MEMORY, else half the RAM)."""
    return default_max_memory() if text is None else parse_size(text, "--max-memory")


def memory_option(text: str | None) -> int | None:
    """The bytes given to --max-memory; None when it is not given (the library's default applies)."""
    return None if text is None else parse_size(text, "--max-memory")


def _check_options(seed: int, delay: float, random_digits: int | None, a: str | None, b: str | None) -> None:
    """Every option checked before any work: numpy refuses negative seeds with a traceback."""
    if seed < 0:
        raise DfstError(f"--seed must be >= 0, got {seed}")
    for operand in (a, b):  # "-5" reaches the operand check; "--shw" is a mistyped option
        if operand is not None and operand.startswith("--"):
            raise DfstError(f"no such option: {operand} (dfst solve --help lists them)")
    if not (math.isfinite(delay) and 0 <= delay <= MAX_DELAY):
        raise DfstError(f"--delay must be between 0 and {MAX_DELAY:g} seconds, got {delay}")
    if random_digits is not None and (a is not None or b is not None):
        raise DfstError("give either operands A B or --random N, not both")
    if random_digits is not None and random_digits < 1:
        raise DfstError(f"--random needs at least 1 digit, got {random_digits}")


LONG_RUN_STEPS = 10**10  # memory is bounded; time is only announced, the user may want the run


def _note_long_run(estimate) -> None:
    """Say on stderr, before it starts, that a run may take up to a huge number of steps."""
    if estimate.steps > LONG_RUN_STEPS:
        print(f"dfst: note: this run may take up to {estimate.steps:,} steps (the task's step bound); "
              "the compiled engine does not see Ctrl-C: stop it with Ctrl-\\ or kill", file=sys.stderr)


def agent_for(task: Task, agent_file: Path | None, quiet: bool = False) -> Transducer:
    """The task's expert, or the --agent file checked as `data` and `train` check it (its unreachable
    states dropped, said on stderr unless `quiet`)."""
    if agent_file is None:
        return task.agent
    from dfst.tasks.own_agent import agent_task_from_file

    own = agent_task_from_file(task, agent_file)
    note_agent(own, quiet)
    return own.agent


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else f"{text[:18]}…{text[-18:]} ({len(text):,} digits)"


@app.command("agent")
def agent_command(
    task_name: str = TaskArgument,
    out: Path = typer.Option(None, "--out", help="Write the agent JSON here (default: stdout)."),
    dot: bool = typer.Option(False, "--dot", help="Graphviz DOT instead of JSON."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
) -> None:
    """Write a task's expert agent as JSON (the documented schema) to read, modify and reuse."""
    agent = get_task(task_name).agent
    if out is None:
        sys.stdout.write(agent_text(agent, dot))
        return
    write_agent(agent, out, dot=dot, force=force)
    console.print(f"wrote {out} ({agent.d} states, {agent.k} symbols, {len(agent.rules)} rules)")
