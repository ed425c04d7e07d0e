"""`dfst baseline` (train and score one baseline, store its result), `dfst table` (the comparison)
and `dfst migrate` (result files from before the format marker, rewritten once)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dfst.cli.app import CsvOption, JsonOption, MarkdownOption, app, console, print_json, show_rows
from dfst.errors import DfstError
from dfst.results.wording import lg_words


@app.command("baseline")
def baseline_command(
    name: str = typer.Argument(..., metavar="NAME", help="rpni, lstm, neural-gpu, ntm, tp-transformer, or a "
                               "policy on the DFST's PTOs: lstm-policy, gru-policy, transformer-policy."),
    task_name: str = typer.Argument(..., metavar="TASK", help="A dfst task, or a baseline's own: ntm copy, "
                                    "tp-transformer mult10x1."),
    seed: int = typer.Option(0, "--seed", help="Seed of the data, the initialisation and the training."),
    config: list[str] = typer.Option([], "--config", help="KEY=VALUE overriding the baseline's defaults "
                                     "(repeatable; the value takes the default's type)."),
    out: Path = typer.Option(None, "--out",
                             help="Result file (default results/baselines/NAME-TASK-sSEED.json; a "
                             "policy with size=large: NAME-large-TASK-sSEED.json)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing result file."),
    as_json: bool = JsonOption,
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress output."),
) -> None:
    """Train a baseline on TASK, score it with the DFST's protocol and store its result JSON."""
    from dfst.baselines.job import plan_baseline, run_baseline_job

    job = plan_baseline(name, task_name, seed=seed, config=config, out=out, force=force)
    outcome = run_baseline_job(job, progress=not no_progress)
    if job.side:
        if as_json:
            return print_json(outcome | {"path": str(job.path)})
        return console.print(f"{side_task_line(name, task_name, seed, outcome)} -> {job.path}")
    if as_json:
        return print_json(outcome.to_dict() | {"path": str(job.path)})
    samples, cap = outcome.sample_search()
    seen = f"{samples:,} samples" if cap is None else f"not robust with up to {cap:,} samples"
    console.print(f"{outcome.system} on {outcome.task} (seed {seed}): {seen}, "
                  f"{outcome.params:,} params, trained <= {outcome.max_train_digits} digits in "
                  f"{outcome.train_seconds:.1f} s; {lg_words(outcome.robust_lg, outcome.levels)}, "
                  f"{lg_words(outcome.probabilistic_lg, outcome.levels, 'probabilistic')} -> {job.path}")


def side_task_line(name: str, task_name: str, seed: int, record: dict) -> str:
    exact = ", ".join(f"{n}: {e}/{record['test_count']}" for n, e in record["exact"].items())
    return (f"{name} on {task_name} (seed {seed}): trained on lengths <= {record['max_train_length']} "
            f"in {record['train_seconds']:.1f} s; exact copies by length {exact}")


@app.command("table")
def table_command(
    results: Path = typer.Option(Path("results"), "--results", help="Directory of result JSON files."),
    readme: Path = typer.Option(None, "--readme", help="Rewrite the comparison block of this README."),
    sweeps: bool = typer.Option(False, "--sweeps", help="Count the results of sweeps' cells too."),
    headline: bool = typer.Option(False, "--headline", help="README's headline instead: the paper's Table 1 "
                                  "beside each machine a run delivers (gradient descent's own weights, the "
                                  "automaton read off them, the weights re-fitted to it), with the PTOs "
                                  "kept and every expert run read."),
    traces: bool = typer.Option(False, "--traces", help="Every expert run behind each task's stored runs "
                                "instead, by what it was read for (candidates, fill-up, validation, "
                                "counterexamples), beside the PTOs kept; runs that did not record them are "
                                "re-derived from their configuration."),
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """The comparison table: one row per system and task, aggregated over seeds. A sweep's cells
    (directories holding cell.json) are left out unless --sweeps: their settings are not the
    headline runs'."""
    from dfst.results import DISPLAY_COLUMNS, comparison, display_rows
    from dfst.results.store import sweep_cells

    if readme is not None and sweeps:
        raise DfstError("--readme writes the headline table; it takes no --sweeps")
    if headline and traces:
        raise DfstError("--headline and --traces are two tables: ask for one")
    if headline or traces:
        return study_table(results, readme, "headline" if headline else "traces", markdown=markdown,
                           as_csv=as_csv, as_json=as_json)
    rows = comparison(results, readme, sweeps=sweeps)
    if not sweeps and (left_out := sweep_cells(results)):
        print(f"dfst: note: left out the results of {len(left_out)} sweep cells under {results} "
              "(--sweeps counts them)", file=sys.stderr)
    if as_json:
        return print_json(rows)
    show_rows(display_rows(rows), DISPLAY_COLUMNS, "comparison (dfst table; LG: best (median) over seeds)",
              markdown=markdown, as_csv=as_csv, raw=rows)


def study_table(results: Path, readme: Path | None, which: str, **shown: bool) -> None:
    """`dfst table --headline` or `--traces`: print the table (and rewrite its block with --readme)."""
    from dfst.io.outputs import check_rewritable
    from dfst.results.store import load_results
    from dfst.studies import headline, traces

    module = headline if which == "headline" else traces
    if readme is not None:
        check_rewritable(readme, module.MARK_START, module.MARK_END)
    stored = load_results(results)
    if any(not r.details.get("traces") and r.config for r in traces.trained_runs(stored)):
        print("dfst: note: runs that predate recorded reads have their samplers run again (seconds a run)",
              file=sys.stderr)
    rows = (headline.headline_rows if which == "headline" else traces.traces_rows)(stored)
    if readme is not None:
        module.write_table(readme, rows, str(results))
    if shown["as_json"]:
        return print_json(rows)
    title = {"headline": "the paper's Table 1 and what made each of dfst's numbers (dfst table --headline)",
             "traces": "every expert run read, by what for (dfst table --traces)"}[which]
    show_rows(rows, module.COLUMNS, title, markdown=shown["markdown"], as_csv=shown["as_csv"], raw=rows)


@app.command("migrate")
def migrate_command(
    results: Path = typer.Option(Path("results"), "--results", help="Directory of result JSON files."),
    traces: bool = typer.Option(False, "--traces", help="Instead: store in each result of a dfst training "
                                "run that lacks them the expert runs it read, re-derived from its "
                                "configuration (dfst table --traces then reads them, not re-derives)."),
    as_json: bool = JsonOption,
) -> None:
    """Rewrite, once, the result files written before results carried a format and a version, as the
    current version (the same fields and values); the others are left alone."""
    from dfst.results.store import migrate_results
    from dfst.studies.traces import record_traces

    if not results.is_dir():
        raise DfstError(f"results directory {results} does not exist")
    rewritten = record_traces(results) if traces else migrate_results(results)
    if as_json:
        return print_json({"migrated": [str(path) for path in rewritten]})
    console.print(f"migrated {len(rewritten)} result files under {results}" +
                  "".join(f"\n  {path}" for path in rewritten))
