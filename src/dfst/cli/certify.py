"""`dfst certify` (proof of exactness for every length, or a counterexample) and `dfst show`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from dfst.cli.app import (
    AgentReferenceOption,
    ExtractedOption,
    JsonOption,
    PathArgument,
    app,
    console,
    print_json,
    target_of,
)
from dfst.io.outputs import check_output_file


@app.command("certify")
def certify_command(
    path: Path = PathArgument,
    extracted: bool = ExtractedOption,
    task_name: str = typer.Option(None, "--task", help="Task (default: the checkpoint's)."),
    agent_file: Path = AgentReferenceOption,
    rescale: bool = typer.Option(False, "--rescale", help="Certify the engine's rescaled mode."),
    digits: int = typer.Option(None, "--digits", min=1, help="The check asked: exact on every instance "
                               "of at most this many digits (a bounded certificate covering it is enough)."),
    out: Path = typer.Option(None, "--out", help="Write the certificate JSON here (when CERTIFIED)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing certificate that dfst wrote."),
    as_json: bool = JsonOption,
) -> int:
    """CERTIFIED (with a certificate), COUNTEREXAMPLE, or INCONCLUSIVE (with a diagnosis).

    CERTIFIED is for every length, or up to max_digits (a bounded certificate: every instance of
    at most that many digits), and says what it proves: the model equals the task's expert (or the
    agent it imitates) on every input; the expert itself was checked against the task's answer on the
    instances it names, a test, not a proof (docs/certify.md).

    Exit code 0: CERTIFIED for every length (with --digits N: at least up to N digits) and the
    certificate accepted by the independent checker; 1: otherwise (COUNTEREXAMPLE, INCONCLUSIVE, a
    bound below what was asked, a rejected certificate); 2: bad input."""
    from dfst.certify.saved import certify_checkpoint

    if out is not None:
        check_output_file(out, force=force)  # before the proof search, not after it
    checkpoint = target_of(path, extracted, as_json)
    report, holds = certify_checkpoint(checkpoint, task=task_name, agent_file=agent_file, rescale=rescale,
                                       out=out, digits=digits)
    if as_json:
        print_json(report)
        return 0 if holds else 1
    colour = {"CERTIFIED": "green", "COUNTEREXAMPLE": "red"}.get(report["verdict"], "yellow")
    proves = f": {escape(report['proves'])}" if "proves" in report else ""
    console.print(f"[{colour}]{report['verdict']}[/] ({report['task']}, {report['mode']} mode, "
                  f"{report['seconds']:.3f} s){proves}", highlight=False)
    if report["verdict"] == "CERTIFIED" and not holds and report.get("max_digits") is not None \
            and digits is not None and report["max_digits"] < digits:
        console.print(f"[red]short of the check asked[/]: the proof reaches {report['max_digits']:,} "
                      f"digits, not the {digits:,} of --digits (exit code 1)", highlight=False)
    for key in ("proof", "nodes", "checker", "certificate", "counterexample"):
        if key in report:
            console.print(f"  {key}: {json.dumps(report[key])}", highlight=False, markup=False)
    if "diagnosis" in report:  # not an error: what stopped the proof short of every length
        label = "why not every length" if report["verdict"] == "CERTIFIED" else "diagnosis"
        console.print(f"  {label}: {json.dumps(report['diagnosis'])}", highlight=False, markup=False)
    return 0 if holds else 1


@app.command("check-certificate")
def check_command(
    certificate: Path = typer.Argument(..., help="Certificate JSON written by dfst certify --out."),
    checkpoint: Path = typer.Argument(..., help="The checkpoint it is about."),
    as_json: bool = JsonOption,
) -> None:
    """Re-verify a certificate with the independent checker; exit code 1 if it is rejected."""
    from dfst.certify.saved import check_saved_certificate

    ok, why = check_saved_certificate(certificate, checkpoint)
    if as_json:
        print_json({"accepted": ok, "reason": why})
    else:
        console.print(("[green]accepted[/]" if ok else "[red]rejected[/]") + f": {why}")
    raise typer.Exit(0 if ok else 1)


@app.command("show")
def show_command(
    agent_file: Path = typer.Argument(..., help="Agent JSON (e.g. from dfst extract)."),
    out: Path = typer.Option(None, "--out", help="Write FILE.dot or FILE.svg (SVG needs graphviz)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file that dfst wrote."),
) -> None:
    """Render an agent as Graphviz DOT (stdout or --out), or SVG when the `dot` binary exists."""
    from dfst.automata import load_transducer, to_dot
    from dfst.grid.drawing import write_drawing

    if out is not None:
        check_output_file(out, force=force)
    agent = load_transducer(agent_file)
    if out is None:
        return print(to_dot(agent), end="")
    console.print(f"wrote {write_drawing(agent, out)}")
