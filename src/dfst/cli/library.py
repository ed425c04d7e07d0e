"""`dfst library list` and `dfst library run PROGRAM ARGS...`: seed 002's program library on the
discrete interpreter and on the differentiable machine, beside Python's answer (docs/library.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.table import Table

from dfst.cli.app import JsonOption, app, console, print_json, print_table
from dfst.errors import DfstError

library_app = typer.Typer(help="Seed 002's differentiable register machine and its program library "
                               "(docs/library.md).", no_args_is_help=True)
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


@contextmanager
def torch_single_thread() -> Iterator[None]:
    """One thread while the experiment runs: its numbers then repeat exactly on a machine of the same
    kind. Torch's global settings are restored after, so that a caller in the same process (a test,
    a notebook) keeps its threads and IEEE subnormals."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)  # values far below 1e-38 slow the CPU tenfold and change nothing
    try:
        yield
    finally:
        torch.set_flush_denormal(False)  # torch's default; it has no getter to restore from
        torch.set_num_threads(threads)


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
                            "at chance here; see docs/library.md)."),
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
    from pathlib import Path

    from dfst.baselines.library.experiment import run_depth_table
    from dfst.baselines.library.plot import plot_depth
    from dfst.cli.app import parse_lengths
    from dfst.io.outputs import check_output_file, make_directory, write_json

    if epochs < 1:  # every experiment: its JSON and figure are per epoch
        raise DfstError(f"--epochs must be at least 1, got {epochs}")
    if name == "ops":
        plot_path = Path(plot or "docs/img/library_ops.png")
        return _ops_experiment(width, epochs, test_pairs, Path(out), plot_path, force)
    if name == "llm":
        from dfst.baselines.library.llm import LlmConfig

        config = LlmConfig(base=base, sentences=sentences, epochs=epochs, lr=lr, llama_dir=llama_dir,
                           signal=signal)
        suffix = "" if signal == "answer" else f"_{signal.replace('-', '_')}"
        return _llm_experiment(config, Path(out) / f"llm{suffix}.json",
                               Path(plot or f"docs/img/library_llm{suffix}.png"), force)
    if name != "depth":
        raise DfstError(f"no library experiment {name!r}; choose depth, ops or llm")
    if train_samples < 0 or test_samples < 0:
        raise DfstError(f"--train-samples and --test-samples must be at least 0 (0: all), got "
                        f"{train_samples} and {test_samples}")
    suffix = "" if router == "slots" else f"_{router}"
    json_path = check_output_file(make_directory(Path(out)) / f"depth_b{base}{suffix}.json", force=force)
    plot_path = check_output_file(plot or "docs/img/library_depth.png", force=force)
    with torch_single_thread():
        result = run_depth_table(base, list(parse_lengths(depths, "--depths")), epochs, train_samples or None,
                                 router=router, test_samples=test_samples or None)
    write_json(json_path, result)
    plot_depth(result, plot_path)
    for row in result["rows"]:
        seed = "no seed figure" if row["seed_test_accuracy"] is None else f"seed {row['seed_test_accuracy']}%"
        console.print(f"depth {row['config']['depth']}: test accuracy {row['test_accuracy'][-1]}% "
                      f"({seed}), {row['cpu_seconds']} CPU s")


def _ops_experiment(width: int, epochs: int, test_pairs: int, out, plot, force: bool) -> None:
    """Experiment (a): both arms, results/library/ops_w{WIDTH}.json and the figure."""

    from dfst.baselines.library.ops_experiment import OpsConfig, run_ops
    from dfst.baselines.library.plot import plot_ops
    from dfst.io.outputs import check_output_file, make_directory, write_json

    if not 2 <= width <= 8:
        raise DfstError(f"--width {width} is outside 2..8 (the table has 8**width entries)")
    if epochs < 1 or test_pairs < 1:
        raise DfstError("--epochs and --test-pairs must be at least 1")
    json_path = check_output_file(make_directory(out) / f"ops_w{width}.json", force=force)
    plot_path = check_output_file(plot, force=force)
    with torch_single_thread():
        result = run_ops(OpsConfig(width=width, epochs=epochs, test_pairs=test_pairs))
    write_json(json_path, result)
    plot_ops(result, plot_path)
    for summary in result["summary"]:
        console.print(f"{summary['arm']}: {summary['seeds_at_100']} of {summary['seeds']} seeds reach 100% "
                      f"(at epochs {summary['epochs_to_100']}); final test accuracy "
                      f"{summary['final_test_accuracy']}")


def _llm_experiment(config, out, plot, force: bool) -> None:
    """Experiment (c): `out` (results/library/llm[_SIGNAL].json: accuracy per epoch) and the figure."""

    from dfst.baselines.library.llm import check_llama_dir, run_llm
    from dfst.baselines.library.llm_data import TEMPLATES
    from dfst.baselines.library.plot import plot_llm
    from dfst.io.outputs import check_output_file, make_directory, write_json

    if not 2 <= config.base <= 256 or config.epochs < 1:
        raise DfstError("--base must be 2..256 and --epochs at least 1")
    if not 10 <= config.sentences <= len(TEMPLATES) * config.base ** 2:
        raise DfstError(f"--sentences must be 10..{len(TEMPLATES) * config.base ** 2} at base {config.base}")
    if config.llama_dir:  # before the outputs: a bad --llama-dir is the one error to report
        check_llama_dir(config.llama_dir)
    make_directory(out.parent)
    json_path = check_output_file(out, force=force)
    plot_path = check_output_file(plot, force=force)

    def progress(row: dict) -> None:
        console.print(f"epoch {row['epoch']}: test {row['test_accuracy']}%, train {row['train_accuracy']}%, "
                      f"{row['cpu_seconds']} CPU s")

    with torch_single_thread():
        result = run_llm(config, progress=progress)
    write_json(json_path, result)
    plot_llm(result, plot_path)
