"""`dfst bench rollout` (the engine against a per-step PyTorch loop, measured in the same run),
`dfst bench mutations` (the protocol's mutation score), `dfst bench faults` (the protocol against
external models wrong on one kind of instance), `dfst bench learnability` (random agents:
DFST and RPNI success against states and samples) and `dfst bench train` (training's iteration, the
fused engine against autograd's graph)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from dfst.cli.app import (
    AgentOption,
    JsonOption,
    MarkdownOption,
    TaskArgument,
    app,
    console,
    parse_int_list,
    parse_lengths,
    print_json,
    print_table,
    progress_bar,
    show_rows,
)
from dfst.errors import DfstError
from dfst.studies.data_needs import DEFAULT_LEARNERS  # its module imports the standard library alone

bench_app = typer.Typer(help="Benchmarks (ratios against a baseline measured in the same run).",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")


@bench_app.command("rollout")
def bench_rollout_command(
    dims: str = typer.Option("12,20,32,108", "--dims", help="Hidden sizes d to measure."),
    digits: int = typer.Option(300_000, "--digits", help="Operand length of the add2 instance."),
    torch_steps: int = typer.Option(20_000, "--torch-steps", help="Steps timed for the PyTorch loop."),
    repeats: int = typer.Option(3, "--repeats", help="Best of this many timings, each side."),
    memory_digits: int = typer.Option(1_000_000, "--memory-digits", help="Digits for the memory figure."),
    as_json: bool = JsonOption,
) -> None:
    """Steps per second, engine vs per-step PyTorch loop (batch 1), and peak memory of a long run."""
    from dfst.studies.bench import run_bench

    result = run_bench(parse_lengths(dims, "--dims"), digits, torch_steps, repeats, memory_digits)
    if as_json:
        return print_json(result)
    rows, memory = result["rollout"], result["memory"]
    table = Table("d", "engine steps/s", "PyTorch steps/s", "ratio", "exact",
                  title=f"DFST rollout: dense add2 model, {digits:,} bits, batch 1, best of {repeats}")
    for r in rows:
        table.add_row(str(r["d"]), f"{r['engine_steps_per_s']:,}", f"{r['torch_steps_per_s']:,}",
                      f"{r['ratio']:,}×", str(r["exact"]))
    print_table(table)
    console.print(f"{memory['digits']:,}-digit add2 rollout ({memory['steps']:,} steps, exact="
                  f"{memory['exact']}): peak traced memory {memory['peak_traced_mib']} MiB, process "
                  f"peak RSS {memory['process_peak_rss_mib']} MiB")


@bench_app.command("mutations")
def bench_mutations_command(
    task_name: str = TaskArgument,
    workers: int = typer.Option(1, "--workers", help="Processes judging mutants side by side on this "
                                "machine (the verdicts do not depend on it)."),
    as_json: bool = JsonOption,
) -> int:
    """Mutation score of the evaluation protocol: every single-rule rewiring of TASK's expert (write,
    move or next state) against the hard set + 10 random pairs at 3, 30 and 300 digits; a survivor is
    certified equivalent, shown killable by an instance (a blind spot), or unknown.

    Exit code 0: every killable mutant killed (score 1); 1: a blind spot; 2: bad input."""
    from dfst.studies.executors import check_workers
    from dfst.studies.mutations import mutants, mutation_report
    from dfst.tasks import get_task

    task = get_task(task_name)
    check_workers(workers)  # before the progress bar: one line
    with progress_bar(f"{task.name} mutants", len(mutants(task.agent)), quiet=as_json) as update:
        report = mutation_report(task, progress=update, workers=workers)
    if as_json:
        print_json(report)
    else:
        _print_mutations(report)
    return 0 if report["blind spot"] == 0 else 1


def _print_mutations(report: dict) -> None:
    console.print(f"{report['task']}: {report['mutants']:,} mutants; killed {report['killed']:,}, "
                  f"equivalent {report['equivalent']:,}, blind spots {report['blind spot']:,}, unknown "
                  f"{report['unknown']:,}; mutation score {report['score']:.2%} "
                  f"({report['cpu_seconds']} CPU s)")
    table = Table("mutant", "status", "why", title="survivors of the protocol")
    for s in report["survivors"]:
        table.add_row(s["mutant"], s["status"], s["why"])
    if report["survivors"]:
        print_table(table)


@bench_app.command("faults")
def bench_faults_command(
    tasks: str = typer.Option("add2,add10,sub2,sub10", "--tasks", help="Comma-separated addition and "
                              "subtraction tasks."),
    digits: str = typer.Option("10,30,100,1000,10000", "--digits", help="Comma-separated operand lengths N."),
    random: int = typer.Option(10, "--random", help="Random pairs per length (the paper's protocol: 10)."),
    as_json: bool = JsonOption,
) -> int:
    """The protocol against external faults: models exact but on one kind of instance (a carry or
    borrow entering exactly K digits past the shorter operand, operands of unequal lengths, a new top
    digit, a long carry chain), each caught at the first length with a wrong answer, or never.

    Exit code 0: every fault caught; 1: some fault passed the protocol; 2: bad input."""
    from dfst.studies.faults import run_faults

    names = [name.strip() for name in tasks.split(",") if name.strip()]
    if random < 0:
        raise DfstError(f"--random must be >= 0, got {random}")
    rows = run_faults(names, parse_lengths(digits, "--digits"), random)
    if as_json:
        print_json(rows)
    else:
        table = Table("task", "fault", "caught at N", "wrong there", "instances scored",
                      title=f"external faults against the protocol (hard set + {random} random pairs)")
        for row in rows:
            caught = "[red]never[/]" if row["caught_at"] is None else f"{row['caught_at']:,}"
            table.add_row(row["task"], row["fault"], caught, str(row["wrong"] or ""), f"{row['instances']:,}")
        print_table(table)
    return 0 if all(row["caught_at"] is not None for row in rows) else 1


@bench_app.command("learnability")
def bench_learnability_command(
    states: str = typer.Option("2,3,4,6", "--states", help="Agent sizes d (states besides halt)."),
    samples: str = typer.Option("5,10,20", "--samples", help="Training PTO counts."),
    agents: int = typer.Option(3, "--agents", help="Random agents per d."),
    seed: int = typer.Option(0, "--seed", help="Seed of the agents and of the training runs."),
    out: Path = typer.Option(Path("runs/learnability"), "--out", help="Where the training runs go "
                             "(finished ones are reused)."),
    results: Path = typer.Option(None, "--results", help="Also write the report JSON and its plot "
                                 "(learnability.json, learnability.png) into this directory."),
    as_json: bool = JsonOption,
) -> None:
    """Random grid agents on a binary tape (d states, kept when they halt and use every state), each
    learned from N PTOs by a DFST (default recipe) and by RPNI on the same PTOs: how many are exact
    at 100x the training length, per d and N (docs/research/learnability.md)."""
    from dfst.studies.learnability import check_results_directory, learnability_report, save_results

    d_values, counts = parse_lengths(states, "--states"), parse_lengths(samples, "--samples")
    if results is not None:
        check_results_directory(results)
    with progress_bar("learnability cells", len(d_values) * agents * len(counts), quiet=as_json) as update:
        report = learnability_report(out, states=d_values, samples=counts, agents=agents, seed=seed,
                                     progress=update)
    if results is not None:
        report = save_results(report, results)
    if as_json:
        return print_json(report)
    table = Table("d", "PTOs", "agents", "DFST exact", "RPNI exact",
                  title=f"Random agents on sort2's tape: exact at {report['target_digits']} symbols (100x)")
    for r in report["table"]:
        table.add_row(str(r["d"]), str(r["samples"]), str(r["agents"]), str(r["dfst"]), str(r["rpni"]))
    print_table(table)
    console.print(f"{report['cpu_seconds']:,} CPU s")


@bench_app.command("data-needs")
def bench_data_needs_command(
    tasks: str = typer.Argument("add2", help="Tasks, comma-separated."),
    counts: str = typer.Option("5,10,20,40,80", "--counts", help="PTO counts a cell trains on."),
    samplers: str = typer.Option("uniform,contexts", "--samplers", help="uniform (the paper's setting: "
                                 "N drawn at the training length) and/or contexts (dfst's default)."),
    seeds: str = typer.Option("0,1,2,3,4", "--seeds", help="Seeds of every point."),
    learners: str = typer.Option(",".join(DEFAULT_LEARNERS), "--learners",
                                 help="Learners scored on each cell's data (also gru-policy, "
                                 "transformer-policy); one a stored cell lacks is scored on its run."),
    out: Path = typer.Option(Path("runs/data-needs"), "--out", help="Cells and training runs (finished "
                             "ones are reused); the report and one figure per task land here too."),
    agent_file: Path = AgentOption,
    markdown: bool = MarkdownOption,
    as_json: bool = JsonOption,
) -> None:
    """What each learner needs: per task, sampler and PTO count, how many seeds each learner gets
    robust at 1,000 digits (the default recipe's three machines; RPNI, EDSM and a sequence-model
    policy on the same PTOs), against the expert traces the data read (docs/research/data-needs.md).
    The report covers every cell in --out, so further seeds or counts can be run into it."""
    from dfst.studies.data_needs import (
        all_cells,
        check_report_files,
        data_needs,
        needs_table,
        save_report,
        shown_columns,
    )

    names = tuple(t.strip() for t in tasks.split(",") if t.strip())
    chosen = {"samplers": tuple(x.strip() for x in samplers.split(",") if x.strip()),
              "learners": tuple(x.strip() for x in learners.split(",") if x.strip())}
    counted, seeded = parse_lengths(counts, "--counts"), parse_int_list(seeds, "--seeds")
    total = len(names) * len(chosen["samplers"]) * len(counted) * len(seeded)
    check_report_files(out, names, agent_file)
    with progress_bar("data-needs cells", total, quiet=as_json or markdown) as update:
        data_needs(out, names, counted, chosen["samplers"], seeded, chosen["learners"], progress=update,
                   agent=agent_file)
    cells = all_cells(out)  # this run's and those already there
    report = save_report(cells, out)
    rows = needs_table(cells)
    if as_json:
        return print_json(report)
    title = "success at 1,000 digits, seeds robust of seeds (dfst bench data-needs)"
    show_rows(rows, shown_columns(rows), title, markdown=markdown)
    if not markdown:
        console.print(f"report and figures: {', '.join(report['files'])}")


@bench_app.command("train")
def bench_train_command(
    tasks: str = typer.Option(",".join(("add2", "add10", "mult2", "mult10", "div10x1")), "--tasks",
                              help="Tasks whose recipes are timed."),
    iters: int = typer.Option(30, "--iters", help="Iterations timed per engine and repeat."),
    repeats: int = typer.Option(3, "--repeats", help="Best of this many timings, each engine."),
    threads: int = typer.Option(1, "--threads", help="Threads of both engines (the recipes': 1)."),
    as_json: bool = JsonOption,
) -> None:
    """Training iterations per second, fused engine vs autograd's graph, on each task's recipe (same
    data, initialisation, batches and noise), with FLOPs per iteration and the fused engine's share
    of this machine's dense float32 ceiling (docs/research/performance.md)."""
    from dfst.train.bench import bench_train

    rows = bench_train(tuple(t.strip() for t in tasks.split(",") if t.strip()), iters, repeats, threads)
    if as_json:
        return print_json(rows)
    table = Table("task", "restarts x batch", "k", "d", "autograd it/s", "fused it/s", "ratio",
                  "MFLOP/it", "share of ceiling",
                  title=f"dfst train's iteration, {threads} thread(s), best of {repeats} x {iters} "
                        "iterations")
    for r in rows:
        table.add_row(r["task"], f"{r['restarts']} x {r['batch']}", str(r["k"]), str(r["d"]),
                      f"{r['autograd_its']:,}", f"{r['fused_its']:,}", f"{r['ratio']}×",
                      f"{r['mflop_per_iteration']:,}", f"{100 * r['fused_share']:.1f}%")
    print_table(table)
    console.print(f"ceiling: {rows[0]['ceiling_gflops']:,} GFLOP/s (a 256×256 float32 product, one thread)")
