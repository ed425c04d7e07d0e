"""`dfst train`: train a DFST on PTOs of a task's expert, with a progress bar, resumable runs.

The options that configure the run are not written here: they are TrainConfig's fields, read from
its schema (`dfst.train.config`: defaults, help, bounds), and so is the command line that reproduces
a run. This module parses, calls `dfst.train`, prints.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from dfst.cli.agents import MaxMemoryOption, memory_bound
from dfst.cli.app import JsonOption, app, console, note_agent, parse_int_list, print_json, print_table
from dfst.errors import DfstError
from dfst.tasks.user import dfst_command
from dfst.train.agreement import agreement_line
from dfst.train.config import config_types, default_of, flat_fields, format_value, option_name
from dfst.train.progress import model_verdict

SCHEMA_TYPES = config_types()


def _option(f) -> inspect.Parameter:
    """The `dfst train` option of a TrainConfig field, from the schema (dfst.train.config)."""
    kind, default, name = SCHEMA_TYPES[f.name], default_of(f), option_name(f.name)
    decls = [f"{name}/--no-{name[2:]}"] if kind is bool else [name]
    if isinstance(default, tuple):  # comma-separated on the command line
        kind, default = str, format_value(default)
    return inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind,
                             default=typer.Option(default, *decls, help=f.metadata["help"]))


def with_config_options(before: str):
    """Give a command taking `**options` one option per flagged TrainConfig field (from the schema:
    default, help, type), placed before its parameter `before`, so that typer sees them when the
    command is registered; the options arrive in `**options` by field name."""
    def decorate(command):
        fixed = list(inspect.signature(command).parameters.values())[:-1]  # all but **options
        split = [p.name for p in fixed].index(before)
        schema = [_option(f) for f in flat_fields() if f.metadata["flag"]]
        command.__signature__ = inspect.Signature(fixed[:split] + schema + fixed[split:])
        return command
    return decorate


@app.command("train")
@with_config_options(before="resume")
def train_command(
    ctx: typer.Context,
    task_name: str = typer.Argument(..., metavar="TASK"),
    out: Path = typer.Option(..., "--out", help="Run directory (created; resumed if it holds this run)."),
    data: Path = typer.Option(None, "--data", help="Train on this PTO dataset file instead of sampling "
                              "(it decides --samples, --max-digits and --sampler)."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue the run already in --out."),
    force: bool = typer.Option(False, "--force", help="Discard the run already in --out and start over "
                               "(only dfst's own files: anything else there is kept, or refused)."),
    until_certified: bool = typer.Option(False, "--until-certified", help="Train, certify (dfst certify), "
                                         "add the counterexample's instance to the data, train again."),
    max_rounds: int = typer.Option(5, "--max-rounds", help="Rounds of --until-certified at most."),
    published: bool = typer.Option(False, "--published", help="The published recipe: identity init, no "
                                   "noise or normalisation, one run, no extraction, d the expert's state "
                                   "count as in the paper (a flag that says otherwise is an error)."),
    device: str = typer.Option("cpu", "--device", help="Where the training loop runs: cpu, cuda or "
                               "cuda:N (fine-tuning, extraction and evaluation stay on the CPU; "
                               "bit-identity holds on the CPU only)."),
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
    **options,
) -> int | None:
    """Train a DFST on the expert's PTOs (teacher-forced loss, Adam), evaluating closed-loop as it goes.

    Defaults come from TASK's recipe where it has one (dfst.train.recipes); the options you give override it.

    The defaults shown are TrainConfig's (add2's recipe); `dfst train mult2` starts from mult2's.

    Run the same command again to resume an interrupted run (even by kill -9), bit-identically.
    """
    from dfst.train.job import plan_training, run_training

    given = {name for name in options if _given(ctx, name)}
    job = plan_training(task_name, out, options=parse_options(options), given=given, data=data,
                        published=published, resume=resume, force=force,
                        max_rounds=max_rounds if until_certified else None, device=device,
                        max_memory=memory_bound(max_memory))
    note_agent(job.task, as_json)
    if not as_json:
        for source, values in _sources(job.set_by, job.task.name):
            print(f"{source} sets " + ", ".join(f"{k}={format_value(v)}" for k, v in values.items()),
                  file=sys.stderr)
    if until_certified:
        return _until_certified(job, as_json)
    with _progress(as_json) as progress:
        bar = progress.add_task("", total=job.cfg.iters, measure="loss …", eval="", stage="")
        summary = run_training(job, lambda record: _show(progress, bar, record))
    if summary["stopped_by"] == "diverged":
        raise DfstError(_diverged(summary, job.cfg.lr))
    not_enough = (summary.get("agreement") or {}).get("agreed") is False  # the model is written all the same
    if as_json:
        print_json(summary | ({"set_by": job.set_by} if job.set_by else {}))
    else:
        _print_summary(summary, job.cfg.to_dict())
    return 1 if not_enough else 0


def _diverged(summary: dict, lr: float) -> str:
    """The one line of a run whose every restart diverged (exit code 2: its settings are the problem)."""
    return (f"training diverged: every restart's loss was not finite after iteration "
            f"{summary['iterations']:,} (lower --lr, now {lr:g}); {summary['out']} keeps the last finite "
            "weights, not fine-tuned, with stopped_by 'diverged' in summary.json")


def _sources(set_by: dict, task_name: str) -> list[tuple[str, dict]]:
    """What the recipe (less what a later source overrides), --published and --data set, to print;
    the user's own flags are not echoed. A task without a recipe of its own says whose it runs."""
    later = {name for source, values in set_by.items() if source != "recipe" for name in values}
    named = [(f"{task}'s recipe" if task == task_name else
              f"{task_name} has no recipe of its own: the {task}",
              {k: v for k, v in values.items() if k not in later})
             for task, values in set_by.get("recipe", {}).items()]
    named += [(source, values) for source, values in set_by.items() if source.startswith("--")]
    return [(source, values) for source, values in named if values]


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the user gave the option of field `name` (on the command line), not its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def parse_options(options: dict) -> dict:
    """The flat TrainConfig fields of `dfst train`'s parsed options (lists of lengths parsed)."""
    return {name: parse_int_list(value, option_name(name)) if isinstance(value, str) and
            SCHEMA_TYPES[name] is not str else value for name, value in options.items()}


def _until_certified(job, as_json: bool) -> int:
    """Rounds of train + certify; exit code 0 when certified, 1 when not (a check that fails)."""
    from dfst.train.job import run_training

    with _progress(as_json) as progress:
        bar = progress.add_task("", total=job.cfg.iters, measure="loss …", eval="", stage="")
        report = run_training(job, lambda record: _show(progress, bar, record))
    if as_json:
        print_json(report)
        return 0 if report["certified"] else 1
    for r in report["rounds"]:
        added = "" if r["added"] is None else f"; added {r['added'][0]} + {r['added'][1]}"
        console.print(f"round {r['round']}: {r['samples']} samples -> {r['verdict']} ({r['model']}){added}")
    verdict = "certified" if report["certified"] else "NOT certified"
    console.print(f"{verdict} with {report['samples']} samples")
    return 0 if report["certified"] else 1


def _show(progress: Progress, bar, record: dict) -> None:
    """One training record on the bar; the fine-tuning phase's records restart it per phase."""
    if (fields := progress_fields(record)) is not None:
        progress.update(bar, **fields)


def progress_fields(record: dict) -> dict | None:
    """The bar's fields for one progress record of `dfst.train.train` (None: leave the bar as it
    is), in the words `train` logs (dfst.train.progress): training's loss and last evaluation, or a
    fine-tuning phase's own objective, labelled as such."""
    from dfst.train.progress import FINETUNE_PHASES, eval_text, measure_text, shown, stage_text

    if "phase" not in record:
        shown_eval = {"eval": eval_text(record["eval"])} if "eval" in record else {}
        return {"completed": record["iteration"], "measure": measure_text(record),
                "stage": stage_text(record), **shown_eval}
    if not shown(record, 1):
        return None  # Adam's phase reports every iteration: the bar moves every 100
    return {"completed": record["iteration"], "total": record["iters"], "measure": measure_text(record),
            "eval": FINETUNE_PHASES[record["phase"]], "stage": ""}


def _progress(quiet: bool) -> Progress:
    return Progress(TextColumn("{task.fields[stage]}"),
                    TextColumn("iter {task.completed:,.0f}/{task.total:,.0f}"), BarColumn(),
                    TextColumn("{task.fields[measure]}  {task.fields[eval]}"), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console, transient=True, disable=quiet)


def _print_summary(summary: dict, cfg: dict) -> None:
    from dfst.data.reads import reads_text

    table = Table("field", "value", title=f"{summary['task']} training run", show_header=False)
    loss = summary["final_loss"]
    queries = summary.get("queries")
    read = reads_text(summary.get("traces"))
    chosen = "" if queries is None else f"; {queries:,} expert runs read in all: {read}"
    rows = {"samples": f"{summary['samples']} of ≤ {cfg['max_digits']} digits ({cfg['sampler']}{chosen})",
            "model": f"k={summary['k']}, d={summary['d']}, {summary['params']:,} parameters",
            "iterations": f"{summary['iterations']:,} of {summary['iters']:,}",
            "stopped by": summary["stopped_by"],
            "final loss": "n/a" if loss is None else f"{loss:.4g}",
            "seconds": f"{summary['seconds']:.1f}"}
    if summary.get("tried"):  # d from the PTOs: the smaller sizes read no automaton off
        sizes = ", ".join(str(t["d"]) for t in summary["tried"])
        rows["d tried before"] = f"{sizes} (no automaton read off explained the PTOs)"
    if len(summary["restarts"]["table"]) > 1:
        rows["restart kept"] = f"{summary['restarts']['chosen']} of {len(summary['restarts']['table'])}"
    if summary.get("extracted"):
        found = summary["extracted"]
        rows["extracted automaton"] = f"{found['states']} states, {found['rules']} rules: {found['model']}"
    if summary.get("resumed_from"):
        rows["resumed from"] = f"iteration {summary['resumed_from']:,}"
    tuned = summary.get("finetune")
    fine = bool(tuned) and "error" not in tuned
    for lv in (summary.get("eval") or {}).get("levels", []):
        style = "green" if lv["robust"] else "red"
        rows[f"{'trained/ ' if fine else ''}exact at {lv['digits']:,} digits (h rescaled)"] = \
            f"[{style}]{lv['exact']}/{lv['instances']}[/]"
    if tuned:
        rows |= _finetune_rows(tuned)
    for key, value in rows.items():
        table.add_row(key, value)
    print_table(table)
    mode = "" if fine else " --rescale"  # the fine-tuned weights are meant to run with plain h
    console.print(f"model: {summary['model']}   metrics: {summary['metrics']}\n"
                  f"evaluate further with: {dfst_command(summary['task'])} eval {summary['model']} "
                  f"--until-fail{mode}", highlight=False)
    exact, verdict = model_verdict(summary, cfg)
    colour = {True: "green", False: "red", None: "yellow"}[exact]
    console.print(f"[{colour}]verdict[/]: {escape(verdict)}", highlight=False)
    if (line := agreement_line(summary, cfg)) is not None:
        found = summary["agreement"]["agreed"]
        console.print(f"[{'green' if found else 'red'}]{escape(line)}[/]", highlight=False)


def _finetune_rows(tuned: dict) -> dict[str, str]:
    """The summary's rows of the fine-tuning phase: what it did, and model/'s closed loop (plain h)."""
    if "error" in tuned:
        return {"fine-tuned": f"[red]no: {tuned['error']}[/] (model/ holds the trained weights)"}
    rows = {"fine-tuned": f"largest residual {tuned['after']['residual_max']:.2g}, "
                          f"{tuned['cpu_seconds']:.0f} CPU s; trained weights kept in {tuned['trained']}"}
    if tuned["d"][0] != tuned["d"][1]:
        rows["fine-tuned"] += f"; d grown from {tuned['d'][0]} to {tuned['d'][1]}, one per block"
    for lv in tuned["eval_plain"]["levels"]:
        style = "green" if lv["robust"] else "red"
        rows[f"model/ exact at {lv['digits']:,} digits (plain h)"] = \
            f"[{style}]{lv['exact']}/{lv['instances']}[/]"
    return rows
