"""Commands about DFST models: `compile`, `eval`, `replay`."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from dfst.cli.agents import MaxMemoryOption, agent_for, memory_bound
from dfst.cli.app import (
    AgentReferenceOption,
    ExtractedOption,
    JsonOption,
    PathArgument,
    app,
    console,
    fail,
    note_agent,
    parse_lengths,
    print_json,
    print_table,
    target_of,
)
from dfst.errors import DfstError
from dfst.protocol.config import UNTIL_FAIL_BUDGET, EvalConfig
from dfst.protocol.eval_files import (
    REPORT_FILE,
    plan_eval,
    replay_failure,
    run_eval,
)
from dfst.results.wording import lg_words
from dfst.tasks import get_task
from dfst.tasks.user import dfst_command


@app.command("compile")
def compile_command(
    task_name: str = typer.Argument(..., metavar="TASK"),
    out: Path = typer.Option(..., "--out", help="Checkpoint directory to create."),
    agent_file: Path = typer.Option(None, "--agent", help="Compile this agent JSON instead of the expert."),
    force: bool = typer.Option(False, "--force", help="Replace an existing checkpoint."),
    as_json: bool = JsonOption,
) -> None:
    """Compile an agent into exact DFST weights (one-hot construction) and save a checkpoint."""
    from dfst.model.checkpoint import save_checkpoint
    from dfst.model.compile import compile_agent

    task = get_task(task_name)
    agent = agent_for(task, agent_file, quiet=as_json)
    model = compile_agent(agent, task=task.name)  # a custom agent's name may differ from the task's
    provenance = {"source": "compile", "agent": agent.name, "rules": len(agent.rules),
                  "agent_file": str(agent_file) if agent_file else None}
    save_checkpoint(model, out, provenance, overwrite=force)
    info = {"checkpoint": str(out), "task": task.name, "k": agent.k, "d": agent.d,
            "params": model.config.params}
    if as_json:
        return print_json(info)
    console.print(f"compiled {agent.name} -> {out}  (k={agent.k}, d={agent.d}, "
                  f"{model.config.params:,} parameters)")


@app.command("eval")
def eval_command(
    path: Path = PathArgument,
    extracted: bool = ExtractedOption,
    digits: str = typer.Option("10,100,1000", "--digits", help="Comma-separated operand lengths N."),
    until_fail: bool = typer.Option(False, "--until-fail", help="Climb ×2 until a failure or the budget."),
    random: int = typer.Option(10, "--random", help="Random pairs per length."),
    hard: bool = typer.Option(True, "--hard/--no-hard", help="Include the hard structured instances."),
    seed: int = typer.Option(0, "--seed"),
    rescale: bool = typer.Option(False, "--rescale", help="Rescale h by max|h| every step."),
    time_budget: float = typer.Option(None, "--time-budget",
                                      help="Seconds; stop before a length predicted to overrun it "
                                           f"(default with --until-fail: {UNTIL_FAIL_BUDGET:g})."),
    max_digits: int = typer.Option(10**7, "--max-digits", help="Upper end of the --until-fail ladder."),
    agent_file: Path = AgentReferenceOption,
    trained_on: Path = typer.Option(
        None, "--trained-on", metavar="FILE",
        help="The PTO dataset the model was trained on: its operand pairs are never tested (default: "
             "a run's own data, for a checkpoint of a training run)."),
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
) -> int:
    """Length generalisation: robust (hard + random) and probabilistic (random) exactness per N,
    never on an instance the model was trained on.

    Exit code 0: every evaluated length exact; 1: some length was not; 2: bad input. The report
    (eval.json, eval.png, first_failure.json) is saved in the checkpoint directory; a read-only one
    is said at the start, and the report is still printed."""
    if random < 0 or seed < 0:
        raise DfstError(f"--random and --seed must be >= 0, got {random} and {seed}")
    if time_budget is not None and not (math.isfinite(time_budget) and time_budget > 0):
        raise DfstError(f"--time-budget must be a positive number of seconds, got {time_budget}")
    cfg = EvalConfig(parse_lengths(digits, "--digits"), random, hard, seed, rescale, until_fail,
                     max_digits=max_digits, time_budget=time_budget, max_memory=memory_bound(max_memory))
    # every check before the progress display, so a refusal is the one line it prints
    job = plan_eval(target_of(path, extracted, as_json), cfg, agent_file=agent_file, trained_on=trained_on)
    note_agent(job.task, as_json)
    if not job.saving:
        print(f"dfst: warning: {job.checkpoint} is not writable; the report is printed, not saved",
              file=sys.stderr)
    with _eval_progress(as_json) as progress:
        bar = progress.add_task("", total=None, n=0, instances=0)
        report, _ = run_eval(job, on_level=lambda n, count: progress.update(bar, n=n, instances=count,
                                                                             completed=0),
                             on_steps=lambda steps: progress.advance(bar, steps))
    if "not_saved" in report:
        print(f"dfst: warning: the report was not saved: {report['not_saved']}", file=sys.stderr)
    holds = all(lv["robust"] for lv in report["levels"])
    if as_json:
        print_json(report)
    else:
        _print_report(report)
    if "error" in report:  # the lengths before it are printed and saved (--json: its "error" says it)
        return fail(f"evaluation stopped {report['error']} (the lengths before it are kept)")
    return 0 if holds else 1


class StepsPerSecond(ProgressColumn):
    def render(self, task) -> Text:
        return Text(f"{task.speed:,.0f} steps/s" if task.speed else "… steps/s")


def _eval_progress(quiet: bool) -> Progress:
    return Progress(TextColumn("N={task.fields[n]:,}  {task.fields[instances]} instances"),
                    BarColumn(), TextColumn("{task.completed:,.0f} steps"), StepsPerSecond(),
                    TimeElapsedColumn(), console=console, transient=True, disable=quiet)


def _against(report: dict) -> str:
    return f", against agent {report['agent']!r}" if report.get("reference") == "agent" else ""


def _print_report(report: dict) -> None:
    table = Table("N", "instances", "exact", "random exact", "95% Wilson", "steps", "seconds",
                  title=f"{report['task']} length generalisation ({report['mode']} h){_against(report)}")
    for lv in report["levels"]:
        style = "green" if lv["robust"] else "red"
        table.add_row(f"{lv['digits']:,}", str(lv["instances"]), f"[{style}]{lv['exact']}[/]",
                      f"{lv['random_exact']}/{lv['random']}",
                      f"[{lv['wilson_low']:.2f}, {lv['wilson_high']:.2f}]", f"{lv['steps']:,}",
                      f"{lv['seconds']:.2f}")
    print_table(table)
    console.print(f"{lg_words(report['robust_max_digits'], report['levels'])}, "
                  f"{lg_words(report['probabilistic_max_digits'], report['levels'], 'probabilistic')}; "
                  f"stopped by: {report['stopped_by']}")
    console.print(_held_out_line(report), highlight=False)
    if report["first_failure"]:
        f = report["first_failure"]
        console.print(f"[red]first failure[/]: {f['name']} at {f['digits']:,} digits ({f['verdict']}); "
                      f"replay with: {dfst_command(report['task'])} replay {report['checkpoint']}")
    if report["plot"] is not None:
        console.print(f"report: {Path(report['checkpoint']) / REPORT_FILE}   plot: {report['plot']}")


def _held_out_line(report: dict) -> str:
    if report["held_out_source"] is None:
        return "held out: no training data known (--trained-on FILE names it)"
    excluded = sum(lv.get("excluded", 0) for lv in report["levels"])
    return (f"held out: the {report['held_out']:,} training pairs of {report['held_out_source']} "
            f"({excluded:,} protocol instances left out or drawn again)")


@app.command("replay")
def replay_command(
    path: Path = PathArgument,
    extracted: bool = ExtractedOption,
    failure_file: Path = typer.Option(None, "--failure", help="Saved instance file."),
    as_json: bool = JsonOption,
) -> int:
    """Re-run the model on a saved failing instance and render the grid where it stopped.

    Exit code 0: the model is now exact on it; 1: it fails again; 2: bad input."""
    from dfst.grid.render import render_cells

    replay = replay_failure(target_of(path, extracted, as_json), failure_file)
    verdict, run, task = replay.verdict, replay.run, replay.task
    if as_json:
        print_json(verdict)
        return 0 if replay.exact else 1
    console.print(render_cells(run.cells, task.alphabet, task.blank, head=run.head,
                               answer_row=replay.layout.answer[0], color=console.is_terminal),
                  highlight=False, markup=False)
    word = "[green]exact[/]" if replay.exact else "[red]fails again[/]"
    console.print(f"{task.name} {verdict['name']}: {word} ({verdict['verdict']}, {verdict['steps']:,} steps)")
    if part := verdict.get("departure"):
        console.print(_departure_line(part), highlight=False, markup=False)
    return 0 if replay.exact else 1


def _departure_line(part: dict) -> str:
    """Where the model leaves the expert: a different action, or h leaving the finite range."""
    where = f"at step {part['step']:,}: state {part['state']} reads {part['read']!r}"
    h = f"max|h| {part['h_max_abs']:.4g} there, {part['h0_max_abs']:.4g} at the start"
    if part.get("why") == "non_finite":
        return f"h leaves the finite range {where} (both still choose {part['expected']}); {h}"
    return (f"parts from the expert {where}, expert {part['expected']}, model {part['got']} (its score "
            f"leads by {part['lead']:.3g}); {h}")
