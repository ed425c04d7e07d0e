"""`dfst bench rollout`: the engine against a per-step PyTorch loop, measured in the same run."""

from __future__ import annotations

import typer
from rich.table import Table

from dfst.cli.app import JsonOption, app, console, parse_lengths, print_json

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
    from dfst.bench import run_bench

    result = run_bench(parse_lengths(dims, "--dims"), digits, torch_steps, repeats, memory_digits)
    if as_json:
        return print_json(result)
    rows, memory = result["rollout"], result["memory"]
    table = Table("d", "engine steps/s", "PyTorch steps/s", "ratio", "exact",
                  title=f"DFST rollout: dense add2 model, {digits:,} bits, batch 1, best of {repeats}")
    for r in rows:
        table.add_row(str(r["d"]), f"{r['engine_steps_per_s']:,}", f"{r['torch_steps_per_s']:,}",
                      f"{r['ratio']:,}×", str(r["exact"]))
    console.print(table)
    console.print(f"{memory['digits']:,}-digit add2 rollout ({memory['steps']:,} steps, exact="
                  f"{memory['exact']}): peak traced memory {memory['peak_traced_mib']} MiB, process "
                  f"peak RSS {memory['process_peak_rss_mib']} MiB")
