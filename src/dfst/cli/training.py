"""`dfst train`: train a DFST on PTOs of a task's expert, with a progress bar, resumable runs."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from dfst.budget import check_recording
from dfst.cli.agents import MaxMemoryOption, memory_bound
from dfst.cli.app import JsonOption, app, console, parse_int_list, print_json
from dfst.errors import DfstError
from dfst.tasks import get_task

# The defaults are TrainConfig's (kept literal so that `dfst --help` does not import torch;
# tests/test_cli_train.py checks that they agree).


@app.command("train")
def train_command(
    task_name: str = typer.Argument(..., metavar="TASK"),
    out: Path = typer.Option(..., "--out", help="Run directory (created; resumed if it holds this run)."),
    samples: int = typer.Option(20, "--samples", help="Training PTOs to sample."),
    max_digits: int = typer.Option(3, "--max-digits", help="Longest training operand, in digits."),
    seed: int = typer.Option(0, "--seed"),
    data: Path = typer.Option(None, "--data", help="Train on this PTO dataset file instead of sampling."),
    sampler: str = typer.Option("cover", "--sampler", help="cover (every expert rule first), pairs (every "
                                "rule and pair of consecutive rules first) or uniform."),
    iters: int = typer.Option(4000, "--iters", help="Training iterations."),
    lr: float = typer.Option(2e-2, "--lr", help="Peak Adam learning rate."),
    schedule: str = typer.Option("cosine", "--schedule", help="cosine, constant or linear."),
    d: int = typer.Option(None, "--d", help="Hidden size (default: the expert's number of states)."),
    init: str = typer.Option("jitter", "--init", help="identity (published), jitter or random."),
    loss: str = typer.Option("mse", "--loss", help="mse (published) or ce."),
    noise: float = typer.Option(0.03, "--noise", help="σ of Gaussian noise on h at every step."),
    noise_final: float = typer.Option(None, "--noise-final", help="Anneal σ linearly to this."),
    l1: float = typer.Option(0.0, "--l1", help="Weight of the L1 penalty on A."),
    normalize_h: bool = typer.Option(True, "--normalize-h/--no-normalize-h",
                                     help="Divide h by its norm every step (the noise is then relative)."),
    discrete: float = typer.Option(0.0, "--discrete", help="Weight of the vertex penalty on h (ramped)."),
    extract: bool = typer.Option(True, "--extract/--no-extract",
                                 help="Read the automaton off the states (extracted/), evaluate it too."),
    batch: int = typer.Option(0, "--batch", help="Minibatch size (0 = full batch)."),
    bucket: bool = typer.Option(False, "--bucket", help="Minibatches of samples of similar length."),
    forward: str = typer.Option("scan", "--forward", help="scan, hillis or loop (same values)."),
    eval_every: int = typer.Option(1000, "--eval-every", help="Closed-loop evaluation period (0 = at end)."),
    eval_digits: str = typer.Option("10,100", "--eval-digits", help="Comma-separated evaluation lengths."),
    eval_random: int = typer.Option(10, "--eval-random", help="Random pairs per evaluation length."),
    target_digits: int = typer.Option(0, "--target-digits", help="Stop once robust at this length."),
    checkpoint_every: int = typer.Option(1000, "--checkpoint-every", help="Training-state period."),
    log_every: int = typer.Option(100, "--log-every", help="Metrics period, in iterations."),
    threads: int = typer.Option(1, "--threads", help="Torch threads (bit-identity needs the same number)."),
    restarts: int = typer.Option(16, "--restarts", help="Models trained side by side; the kept one is "
                                 "chosen on the training PTOs (fewest extracted states with --extract)."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue the run already in --out."),
    force: bool = typer.Option(False, "--force", help="Discard the run already in --out and start over "
                               "(only dfst's own files: anything else there is kept, or refused)."),
    until_certified: bool = typer.Option(False, "--until-certified", help="Train, certify (dfst certify), "
                                         "add the counterexample's instance to the data, train again."),
    max_rounds: int = typer.Option(5, "--max-rounds", help="Rounds of --until-certified at most."),
    published: bool = typer.Option(False, "--published", help="The published recipe: identity init, no "
                                   "noise or normalisation, one run, no extraction (overrides those flags)."),
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
) -> int | None:
    """Train a DFST on the expert's PTOs (teacher-forced loss, Adam), evaluating closed-loop as it goes.

    Run the same command again to resume an interrupted run (even by kill -9), bit-identically.
    """
    from dataclasses import replace

    from dfst.data import load_dataset
    from dfst.train import TrainConfig, train

    task = get_task(task_name)
    dataset = load_dataset(data) if data is not None else None
    if dataset is not None:
        _check_dataset(task, dataset, data)
    cfg = TrainConfig(task=task.name, samples=samples, max_digits=max_digits, seed=seed, sampler=sampler,
                      d=d, iters=iters, lr=lr, schedule=schedule, batch=batch, init=init, loss=loss,
                      noise=noise, noise_final=noise_final, l1=l1, normalize_h=normalize_h,
                      discrete=discrete, extract=extract, forward=forward, eval_every=eval_every,
                      eval_digits=parse_int_list(eval_digits, "--eval-digits"),  # TrainConfig checks >= 1
                      eval_random=eval_random,
                      target_digits=target_digits, checkpoint_every=checkpoint_every,
                      log_every=log_every, threads=threads, restarts=restarts, bucket=bucket)
    if published:
        from dfst.recipes import PUBLISHED

        cfg = replace(cfg, **PUBLISHED)
    if dataset is not None:  # the file decides what the training set is
        cfg = replace(cfg, samples=dataset.samples,
                      max_digits=max(len(x) for pair in dataset.operands for x in pair))
    _check_out(out, resume=resume, force=force, rounds=until_certified)
    if dataset is None:  # the PTOs to record, estimated before any is
        check_recording(task, cfg.samples, cfg.max_digits, memory_bound(max_memory))
    if until_certified:
        return _until_certified(cfg, out, dataset, max_rounds, force, as_json)
    with _progress(as_json) as progress:
        bar = progress.add_task("", total=cfg.iters, loss="…", eval="")
        summary = train(cfg, out, data=dataset, resume=not force, command=_command(cfg, out, data),
                        progress=lambda record: progress.update(
                            bar, completed=record["iteration"], loss=f"{record['loss']:.3g}",
                            **({"eval": _eval_text(record["eval"])} if "eval" in record else {})))
    if as_json:
        return print_json(summary)
    _print_summary(summary, cfg.to_dict())


def _check_dataset(task, dataset, path: Path) -> None:
    """The checks of `dfst coverage`: the task's operands, each PTO the expert's own run; a one-line
    DfstError naming the first bad sample."""
    from dfst.coverage import dataset_instances

    source = f"dataset {path}"
    if dataset.task != task.name:
        raise DfstError(f"{source} is for task {dataset.task}, not {task.name}")
    for i, (a, b) in enumerate(dataset.operands):
        try:
            task.check(a, b)
        except DfstError as exc:
            raise DfstError(f"{source}: sample {i} ({a!r}, {b!r}): {exc}") from None
    dataset_instances(task, dataset, source)


def _until_certified(cfg, out: Path, dataset, max_rounds: int, force: bool, as_json: bool) -> int:
    """Rounds of train + certify; exit code 0 when certified, 1 when not (a check that fails)."""
    from dfst.cegis import own_rounds, train_until_certified

    if max_rounds < 1:
        raise DfstError(f"--max-rounds must be >= 1, got {max_rounds}")
    if force:
        own_rounds(out)  # refuses, before any work, an --out holding anything but dfst's rounds
    with _progress(as_json) as progress:
        bar = progress.add_task("", total=cfg.iters, loss="…", eval="")
        report = train_until_certified(cfg, out, max_rounds=max_rounds, data=dataset, force=force,
                                       command=_command(cfg, out, None) + " --until-certified",
                                       progress=lambda record: progress.update(
                                           bar, completed=record["iteration"], loss=f"{record['loss']:.3g}"))
    if as_json:
        print_json(report)
        return 0 if report["certified"] else 1
    for r in report["rounds"]:
        added = "" if r["added"] is None else f"; added {r['added'][0]} + {r['added'][1]}"
        console.print(f"round {r['round']}: {r['samples']} samples -> {r['verdict']} ({r['model']}){added}")
    verdict = "certified" if report["certified"] else "NOT certified"
    console.print(f"{verdict} with {report['samples']} samples")
    return 0 if report["certified"] else 1


def _check_out(out: Path, *, resume: bool, force: bool, rounds: bool) -> None:
    """Refuse, before any work, an output that cannot be written, would lose a run, or holds files
    that --force must not touch (a link, a user's file where a run's would go)."""
    from dfst.train_state import check_run_dir

    if not rounds:  # the rounds directory is checked by own_rounds
        check_run_dir(out)
    elif out.is_symlink() or (out.exists() and not out.is_dir()):
        raise DfstError(f"output path {out} is not a directory (a link is never followed)")
    if (out / "summary.json").exists() and not force:
        raise DfstError(f"{out} already holds a finished run (pass --force to train again)")
    if (out / "config.json").exists() and not resume and not force:
        raise DfstError(f"{out} holds an unfinished run (drop --no-resume to continue it, "
                        "or pass --force to start over)")
    existing = out
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        raise DfstError(f"cannot write {out}: {existing} is not writable")


def _command(cfg, out: Path, data: Path | None) -> str:
    """The complete command line of the run, defaults included, to reproduce it."""
    args = ["dfst", "train", cfg.task, "--out", str(out)]
    args += ["--data", str(data)] if data is not None else ["--samples", str(cfg.samples),
                                                           "--max-digits", str(cfg.max_digits)]
    flags = {"seed": cfg.seed, "sampler": cfg.sampler, "iters": cfg.iters, "lr": cfg.lr,
             "schedule": cfg.schedule, "d": cfg.d, "init": cfg.init, "loss": cfg.loss, "noise": cfg.noise,
             "noise-final": cfg.noise_final, "l1": cfg.l1, "discrete": cfg.discrete, "batch": cfg.batch,
             "forward": cfg.forward,
             "eval-every": cfg.eval_every, "eval-digits": ",".join(map(str, cfg.eval_digits)),
             "eval-random": cfg.eval_random, "target-digits": cfg.target_digits,
             "checkpoint-every": cfg.checkpoint_every, "log-every": cfg.log_every, "threads": cfg.threads,
             "restarts": cfg.restarts}
    for name, value in flags.items():
        if value is not None:
            args += [f"--{name}", str(value)]
    switches = ["--normalize-h" if cfg.normalize_h else "--no-normalize-h",
                "--extract" if cfg.extract else "--no-extract"] + (["--bucket"] if cfg.bucket else [])
    return shlex.join(args + switches)


def _eval_text(report: dict | None) -> str:
    if not report:
        return ""
    return "eval " + " ".join(f"{lv['digits']}:{lv['exact']}/{lv['instances']}" for lv in report["levels"])


def _progress(quiet: bool) -> Progress:
    return Progress(TextColumn("iter {task.completed:,.0f}/{task.total:,.0f}"), BarColumn(),
                    TextColumn("loss {task.fields[loss]}  {task.fields[eval]}"), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console, transient=True, disable=quiet)


def _print_summary(summary: dict, cfg: dict) -> None:
    table = Table("field", "value", title=f"{summary['task']} training run", show_header=False)
    loss = summary["final_loss"]
    rows = {"samples": f"{summary['samples']} of ≤ {cfg['max_digits']} digits ({cfg['sampler']})",
            "model": f"k={summary['k']}, d={summary['d']}, {summary['params']:,} parameters",
            "iterations": f"{summary['iterations']:,} of {summary['iters']:,}",
            "stopped by": summary["stopped_by"],
            "final loss": "n/a" if loss is None else f"{loss:.4g}",
            "seconds": f"{summary['seconds']:.1f}"}
    if len(summary["restarts"]["table"]) > 1:
        rows["restart kept"] = f"{summary['restarts']['chosen']} of {len(summary['restarts']['table'])}"
    if summary.get("extracted"):
        found = summary["extracted"]
        rows["extracted automaton"] = f"{found['states']} states, {found['rules']} rules: {found['model']}"
    if summary.get("resumed_from"):
        rows["resumed from"] = f"iteration {summary['resumed_from']:,}"
    for lv in (summary.get("eval") or {}).get("levels", []):
        style = "green" if lv["robust"] else "red"
        rows[f"exact at {lv['digits']:,} digits"] = f"[{style}]{lv['exact']}/{lv['instances']}[/]"
    for key, value in rows.items():
        table.add_row(key, value)
    console.print(table)
    console.print(f"model: {summary['model']}   metrics: {summary['metrics']}\n"
                  f"evaluate further with: dfst eval {summary['model']} --until-fail --rescale")
