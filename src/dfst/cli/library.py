"""`dfst library list` and `dfst library run PROGRAM ARGS...`: seed 002's program library on the
discrete interpreter and on the differentiable machine, beside Python's answer (docs/research/library.md)."""

from __future__ import annotations

import typer
from rich.table import Table

from dfst.cli.app import JsonOption, app, console, print_json, print_table
from dfst.errors import DfstError

library_app = typer.Typer(help="Seed 002's differentiable register machine and its program library "
                               "(docs/research/library.md).", no_args_is_help=True)
app.add_typer(library_app, name="library")


@library_app.command("list")
def library_list_command(as_json: bool = JsonOption) -> None:
    """The library's programs, their arguments and what they compute."""
    from dfst.baselines.library.programs import LIBRARY

    rows = [{"name": p.name, "usage": p.usage, "summary": p.summary} for p in LIBRARY.values()]
    if as_json:
        return print_json(rows)
    table = Table("program", "usage", "computes", title="dfst library")
    for row in rows:
        table.add_row(row["name"], row["usage"], row["summary"])
    print_table(table)


def _integers(words: list[str]) -> tuple[int, ...]:
    try:
        return tuple(int(w.replace("_", "")) for w in words)
    except ValueError:
        raise DfstError(f"arguments must be integers, got {' '.join(words)!r}") from None


@library_app.command("run", context_settings={"ignore_unknown_options": True})
def library_run_command(
    program: str = typer.Argument(..., metavar="PROGRAM", help="A name from `dfst library list`."),
    args: list[str] = typer.Argument(None, metavar="ARGS...", help="The program's integer arguments."),
    base: int = typer.Option(16, "--base", help="Values are 0..base-1 (one-hot vectors of this size)."),
    depth: int = typer.Option(1, "--depth", help="Recursion depth (fib)."),
    soft: bool = typer.Option(True, "--soft/--no-soft", help="Also run the differentiable machine."),
    as_json: bool = JsonOption,
) -> int:
    """Run PROGRAM on ARGS: the interpreter's answer, the differentiable machine's, and Python's.
    Exit 0 when they agree, 1 when not."""
    from dfst.baselines.library.programs import Call, get_program
    from dfst.baselines.library.run import run_call_discrete, run_calls_soft

    if base < 2 or base > 1024:
        raise DfstError(f"--base {base} is outside 2..1024")
    entry, call = get_program(program), Call(_integers(args or []), base, depth)
    discrete = run_call_discrete(entry, call)
    machine = run_calls_soft(entry, [call])[0] if soft else None
    agree = discrete.machine == discrete.python and (machine is None or (
        machine.exact and machine.machine == discrete.python))
    report = {"program": program, "args": list(call.args), "base": base, "depth": depth,
              "interpreter": discrete.machine, "steps": discrete.steps,
              "machine": None if machine is None else machine.machine,
              "machine_one_hot": None if machine is None else machine.exact,
              "python": discrete.python, "agree": agree}
    if as_json:
        print_json(report)
    else:
        console.print(f"interpreter: {discrete.machine} ({discrete.steps} steps)")
        if machine is not None:
            console.print(f"machine:     {machine.machine} (one-hot throughout: {machine.exact})")
        console.print(f"python:      {discrete.python}")
    return 0 if agree else 1


@library_app.command("experiment")
def library_experiment_command(
    name: str = typer.Argument(..., metavar="NAME", help="depth: seed 002's experiment (b), its Table 1; "
                               "ops: its experiment (a), circuits vs tables (Figure 3); "
                               "llm: its experiment (c), a minimal LLaMA using the mod-n calculator "
                               "(needs dfst\\[library-llm])."),
    base: int = typer.Option(128, "--base", help="128 or 256 in the seed."),
    depths: str = typer.Option("1,2,3,4,5,6", "--depths", help="Recursion depths."),
    epochs: int = typer.Option(30, "--epochs", help="Passes over the training pairs."),
    train_samples: int = typer.Option(0, "--train-samples",
                                      help="Training pairs used (of 70% of all); 0: all of them."),
    test_samples: int = typer.Option(0, "--test-samples",
                                     help="depth: held-out pairs scored each epoch (of 30% of all); 0: all."),
    router: str = typer.Option("slots", "--router", help="slots (a softmax over a, b) or values (Linear)."),
    out: str = typer.Option("results/library", "--out", help="Directory for depth_b{BASE}[_values].json, "
                            "ops_w{WIDTH}.json or llm[_SIGNAL].json."),
    width: int = typer.Option(6, "--width", help="ops: operand bits in training (2..8)."),
    test_pairs: int = typer.Option(500, "--test-pairs", help="ops: random pairs per tested width."),
    sentences: int = typer.Option(6000, "--sentences",
                                  help="llm: sentences (70% to train; the seed had 45,151)."),
    lr: float = typer.Option(1e-3, "--lr", help="llm: AdamW's learning rate (the seed's 1e-2 stays "
                            "at chance here; see docs/research/library.md)."),
    llama_dir: str = typer.Option("", "--llama-dir", help="llm: a LOCAL directory holding a pretrained "
                                  "LLaMA and its tokenizer (never a hub name: nothing is downloaded)."),
    signal: str = typer.Option("answer", "--signal", help="llm: what training sees: answer (the seed's), "
                               "labels (the parse itself), given-b or given-op (b or the program handed "
                               "to the calculator); scores always use the network's own parse."),
    plot: str = typer.Option("", "--plot", help="The figure (default docs/img/library_NAME.png)."),
    force: bool = typer.Option(False, "--force", help="Replace dfst's own files of the same names."),
) -> None:
    """Train a minimal network around frozen library code: fib at each depth (depth), or a subtraction
    table vs circuit (ops); our accuracy beside the seed's, as JSON under --out and a figure."""
    from dfst.baselines.library.experiments import ExperimentOptions, run_experiment
    from dfst.cli.app import parse_lengths

    options = ExperimentOptions(
        base=base, depths=tuple(parse_lengths(depths, "--depths")), epochs=epochs,
        train_samples=train_samples, test_samples=test_samples, router=router, out=out, width=width,
        test_pairs=test_pairs, sentences=sentences, lr=lr, llama_dir=llama_dir, signal=signal,
        plot=plot, force=force)
    saved = run_experiment(name, options, progress=_epoch_line)  # llm says each epoch as it ends
    if name == "depth":
        _depth_lines(saved.result)
    elif name == "ops":
        _ops_lines(saved.result)


def _epoch_line(row: dict) -> None:
    console.print(f"epoch {row['epoch']}: test {row['test_accuracy']}%, train {row['train_accuracy']}%, "
                  f"{row['cpu_seconds']} CPU s")


def _depth_lines(result: dict) -> None:
    for row in result["rows"]:
        seed = "no seed figure" if row["seed_test_accuracy"] is None else f"seed {row['seed_test_accuracy']}%"
        console.print(f"depth {row['config']['depth']}: test accuracy {row['test_accuracy'][-1]}% "
                      f"({seed}), {row['cpu_seconds']} CPU s")


def _ops_lines(result: dict) -> None:
    for summary in result["summary"]:
        console.print(f"{summary['arm']}: {summary['seeds_at_100']} of {summary['seeds']} seeds reach 100% "
                      f"(at epochs {summary['epochs_to_100']}); final test accuracy "
                      f"{summary['final_test_accuracy']}")
