"""Commands about tasks and their expert agents: `tasks`, `solve`, `agent`."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import typer
from rich.table import Table

from dfst.automata import Transducer, load_transducer, save_transducer, to_dot
from dfst.budget import check_rollout
from dfst.cli.app import OPERAND_SETTINGS, JsonOption, app, console, print_json, read_operand
from dfst.errors import DfstError
from dfst.grid.render import render_cells
from dfst.limits import default_max_memory, parse_size
from dfst.model_size import param_count
from dfst.outputs import check_output_file
from dfst.rollout import run_table
from dfst.tasks import TASKS, Instance, Task, get_task

MAX_DELAY = 60.0  # seconds per --animate frame; beyond that it is a hang, not an animation
MaxMemoryOption = typer.Option(
    None, "--max-memory", metavar="SIZE",
    help="Refuse a request whose memory estimate is over SIZE (e.g. 4G; default: DFST_MAX_MEMORY, "
         "else half the RAM).")


@app.command("tasks")
def tasks_command(as_json: bool = JsonOption) -> None:
    """List the tasks: base, alphabet size k, states d and the DFST parameter count."""
    rows = [{"task": t.name, "base": t.base, "k": t.agent.k, "d": t.agent.d,
             "params": param_count(t.agent.k, t.agent.d), "summary": t.summary} for t in TASKS.values()]
    if as_json:
        return print_json(rows)
    table = Table("task", "base", "k", "d", "DFST params", "what")
    for r in rows:
        table.add_row(r["task"], str(r["base"]), str(r["k"]), str(r["d"]), f"{r['params']:,}", r["summary"])
    console.print(table)


@app.command("solve", context_settings=OPERAND_SETTINGS)
def solve_command(
    task_name: str = typer.Argument(..., metavar="TASK"),
    a: str = typer.Argument(None, help="First operand in the task's base, or @FILE."),
    b: str = typer.Argument(None, help="Second operand in the task's base, or @FILE."),
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
    instance = _instance(task, a, b, random_digits, seed, memory_bound(max_memory), as_json)
    agent = agent_for(task, agent_file)
    layout = task.layout(instance)
    if animate:
        from dfst.cli.animate import animate_run

        animate_run(agent, task, layout, task.max_steps(instance), delay, stderr=as_json)
    start = time.perf_counter()
    run = run_table(agent, layout, task.max_steps(instance))
    seconds = time.perf_counter() - start
    result = task.read_answer(run.cells, layout.answer) if run.outcome == "halted" else None
    correct = result == task.expected(instance)
    report = {"task": task.name, "a": instance.a, "b": instance.b, "result": result, "steps": run.steps,
              "correct": correct, "outcome": str(run.outcome), "seconds": round(seconds, 6)}
    if as_json:
        print_json(report)
        return 0 if correct else 1
    if show:
        console.print(render_cells(run.cells, task.alphabet, task.blank, head=run.head,
                                   answer_row=layout.answer[0], color=console.is_terminal),
                      highlight=False, markup=False)
    mark = "[green]correct[/]" if correct else "[red]WRONG[/]"
    console.print(f"{task.name}: {_clip(instance.a)} {'+' if task.operation == 'add' else '×'} "
                  f"{_clip(instance.b)} = {_clip(result or '(no answer)')}  {mark}  "
                  f"({run.steps:,} steps, {run.outcome}, {seconds:.3f} s)", highlight=False)
    return 0 if correct else 1


def memory_bound(text: str | None) -> int:
    """The bytes given to --max-memory, or the default (DFST_MAX_MEMORY, else half the RAM)."""
    return default_max_memory() if text is None else parse_size(text, "--max-memory")


def _check_options(seed: int, delay: float, random_digits: int | None, a: str | None, b: str | None) -> None:
    """Every option checked before any work: numpy refuses negative seeds with a traceback."""
    if seed < 0:
        raise DfstError(f"--seed must be >= 0, got {seed}")
    if not (math.isfinite(delay) and 0 <= delay <= MAX_DELAY):
        raise DfstError(f"--delay must be between 0 and {MAX_DELAY:g} seconds, got {delay}")
    if random_digits is not None and (a is not None or b is not None):
        raise DfstError("give either operands A B or --random N, not both")
    if random_digits is not None and random_digits < 1:
        raise DfstError(f"--random needs at least 1 digit, got {random_digits}")


def _instance(task: Task, a: str | None, b: str | None, random_digits: int | None, seed: int,
              max_memory: int, as_json: bool) -> Instance:
    """The operands, checked against the memory bound before anything of their size is built."""
    if random_digits is not None:
        _note_long_run(check_rollout(task, random_digits, random_digits, max_memory,
                                     f"--random {random_digits:,}", generate=True, as_json=as_json))
        return task.random_instances(random_digits, 1, seed)[0]
    if a is None or b is None:
        raise DfstError("give two operands A B (or --random N)")
    a, b = read_operand(a), read_operand(b)
    n, m = len(a), len(b)  # checked before the digits: a long operand's validation takes seconds
    _note_long_run(check_rollout(task, n, m, max_memory, f"operands of {n:,} and {m:,} digits",
                                 as_json=as_json))
    return task.check(a, b)


LONG_RUN_STEPS = 10**10  # memory is bounded; time is only announced, the user may want the run


def _note_long_run(estimate) -> None:
    """Say on stderr, before it starts, that a run may take up to a huge number of steps."""
    if estimate.steps > LONG_RUN_STEPS:
        print(f"dfst: note: this run may take up to {estimate.steps:,} steps (the task's step bound); "
              "the compiled engine does not see Ctrl-C: stop it with Ctrl-\\ or kill", file=sys.stderr)


def agent_for(task: Task, agent_file: Path | None) -> Transducer:
    if agent_file is None:
        return task.agent
    agent = load_transducer(agent_file)
    if tuple(agent.alphabet) != tuple(task.alphabet):
        raise DfstError(f"agent alphabet {list(agent.alphabet)} does not match task {task.name}'s "
                        f"{list(task.alphabet)} (same symbols, same order)")
    return agent


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else f"{text[:18]}…{text[-18:]} ({len(text):,} digits)"


@app.command("agent")
def agent_command(
    task_name: str = typer.Argument(..., metavar="TASK"),
    out: Path = typer.Option(None, "--out", help="Write the agent JSON here (default: stdout)."),
    dot: bool = typer.Option(False, "--dot", help="Graphviz DOT instead of JSON."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
) -> None:
    """Write a task's expert agent as JSON (the documented schema) to read, modify and reuse."""
    agent = get_task(task_name).agent
    if out is None:
        import json

        sys.stdout.write(to_dot(agent) if dot else json.dumps(agent.to_dict(), indent=1) + "\n")
        return
    check_output_file(out, force=force)
    if dot:
        from dfst.outputs import marker_text, write_atomic

        write_atomic(out, f"// {marker_text()}\n{to_dot(agent)}".encode())
    else:
        save_transducer(agent, out)
    console.print(f"wrote {out} ({agent.d} states, {agent.k} symbols, {len(agent.rules)} rules)")
