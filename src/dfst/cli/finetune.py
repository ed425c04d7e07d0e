"""`dfst finetune`: fine-tune a finished training run so that its raw weights stay exact closed loop
far beyond the training length (dfst.train.finetune; docs/research/finetune.md). Parses, calls, prints."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dfst.cli.app import JsonOption, app, console, print_json, print_table
from dfst.tasks.user import dfst_command
from dfst.train.finetune import FinetuneConfig

_D = FinetuneConfig()  # the defaults of the options are the library's
PHASES = {"adam": "Adam", "lbfgs": "L-BFGS", "frozen": "L-BFGS, centres frozen",
          "centres": "L-BFGS at the centres"}


@app.command("finetune")
def finetune_command(
    run: Path = typer.Argument(..., metavar="RUN", help="A finished dfst train run directory."),
    out: Path = typer.Option(..., "--out", help="Directory to write (OUT/model, OUT/summary.json)."),
    centre_iters: int = typer.Option(_D.centre_iters, "--centre-iters", help="L-BFGS iterations (float64) "
                                     "on the objective at the centres."),
    margin: float = typer.Option(_D.margin, "--margin", help="Lead of the right readout score at each "
                                 "centre."),
    frozen_iters: int = typer.Option(_D.frozen_iters, "--frozen-iters", help="L-BFGS iterations with the "
                                     "centres frozen orthonormal, before the centres phase (0: off)."),
    adam_iters: int = typer.Option(_D.adam_iters, "--adam-iters", help="Adam iterations on the "
                                   "teacher-forced states, noise annealed to 0 (before the centres)."),
    plain_iters: int = typer.Option(_D.plain_iters, "--plain-iters", help="Adam iterations without noise."),
    lbfgs_iters: int = typer.Option(_D.lbfgs_iters, "--lbfgs-iters", help="L-BFGS iterations (float64) on "
                                    "the teacher-forced states."),
    lr: float = typer.Option(_D.lr, "--lr", help="Peak Adam lr (one cosine over both Adam phases)."),
    noise: float = typer.Option(_D.noise, "--noise", help="Initial σ of the noise on the direction of h."),
    weight: float = typer.Option(_D.weight, "--weight", help="Weight of the consistency and pull penalties."),
    damping: float = typer.Option(_D.damping, "--damping", help="Weight of the penalty on A's unused "
                                  "directions (deviations there die; 0: off)."),
    seed: int = typer.Option(_D.seed, "--seed", help="Seed of the noise."),
    threads: int = typer.Option(_D.threads, "--threads", help="Torch threads (bit-identity needs the same)."),
    force: bool = typer.Option(False, "--force", help="Replace an earlier fine-tune in --out."),
    as_json: bool = JsonOption,
) -> None:
    """Fine-tune RUN's kept model: A made to map the centre of each block of the extracted automaton
    onto its successor's, the readouts at each centre right by a margin (L-BFGS in float64; optionally
    Adam on the teacher-forced states first). The weights written are gradient descent's, float32;
    evaluate them with dfst eval OUT/model."""
    from dfst.train.finetune import check_out_dir, finetune

    cfg = FinetuneConfig(adam_iters=adam_iters, plain_iters=plain_iters, lbfgs_iters=lbfgs_iters, lr=lr,
                         noise=noise, weight=weight, damping=damping, seed=seed, threads=threads,
                         centre_iters=centre_iters, margin=margin,
                         frozen_iters=frozen_iters)
    check_out_dir(out, force=force)  # before torch loads: a refusal answers at once
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=as_json) as progress:
        bar = progress.add_task("fine-tuning", total=None)

        def on_step(record: dict) -> None:
            if record["iteration"] % 100 == 0 or record["iteration"] == record["iters"]:
                value = record.get("objective")  # the phase's own objective, what it minimises
                shown = "" if value is None else f", objective {value:.3g}"
                progress.update(bar, description=PHASES[record["phase"]] + shown,
                                completed=record["iteration"], total=record["iters"])

        summary = finetune(run, out, cfg, force=force, progress=on_step)
    if as_json:
        return print_json(summary)
    table = Table("", "before", "after", title=f"{summary['task']} fine-tune of {run}")
    for key, fmt in (("residual", "{:.3g}"), ("residual_max", "{:.3g}"), ("train_exact", "{}")):
        table.add_row(key.replace("_", " "), *(fmt.format(summary[w][key]) for w in ("before", "after")))
    table.add_row("d (hidden dimensions)", *(str(d) for d in summary["d"]))  # grown: more blocks than d
    print_table(table)
    console.print(f"{summary['blocks']} blocks, {summary['transitions']} transitions; "
                  f"{summary['cpu_seconds']:.0f} CPU s\nmodel: {summary['model']}\n"
                  f"evaluate with: {dfst_command(summary['task'])} eval {summary['model']} "
                  "--digits 10,100,1000,10000", highlight=False)
