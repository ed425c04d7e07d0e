"""`dfst certify` (proof of exactness for every length, or a counterexample) and `dfst show`."""

from __future__ import annotations

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
    """CERTIFIED (with a certificate), NOT CERTIFIED (a proof short of what was asked),
    COUNTEREXAMPLE, or INCONCLUSIVE (with a diagnosis): one verdict, whose exit code it states.

    CERTIFIED is for every length, or with --digits N up to N digits (a bounded certificate covering
    them), and says what it proves: the model equals the task's expert (or the
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
    console.print(verdict_line(report, holds, digits), highlight=False)
    for line in detail_lines(report):
        console.print(f"  {line}", highlight=False, markup=False)
    return 0 if holds else 1


def verdict_line(report: dict, holds: bool, digits: int | None) -> str:
    """The one verdict of `dfst certify`, worded so that it says what the exit code says: CERTIFIED
    (exit 0) only where what was asked (every length, or with --digits N up to N digits) was proved
    and the independent checker accepted the proof; a shorter bound is NOT CERTIFIED (exit 1)."""
    where = f"({report['task']}, {report['mode']} mode, {report['seconds']:.3f} s)"
    verdict, bound = report["verdict"], report.get("max_digits")
    asked = "for every length" if digits is None else f"up to {digits:,} digits"
    if verdict != "CERTIFIED":
        colour = "red" if verdict == "COUNTEREXAMPLE" else "yellow"
        return f"[{colour}]{verdict}[/] {where}: {_WHY[verdict]}"
    if report.get("checker", "").startswith("REJECTED"):
        return f"[red]NOT CERTIFIED[/] {where}: the independent checker rejected the proof"
    if not holds:
        short = "for every length" if digits is None else f"up to the {digits:,} digits of --digits"
        return f"[red]NOT CERTIFIED[/] {where}: proved up to {bound:,} digits only; not {short}"
    proves = escape(report["proves"])
    if bound is None:
        return f"[green]CERTIFIED[/] {where}: {proves}"
    return f"[green]CERTIFIED {asked}[/], as asked {where}: {proves}"


_WHY = {"COUNTEREXAMPLE": "the model departs from the reference; not certified",
        "INCONCLUSIVE": "neither a proof nor a counterexample; not certified"}


def detail_lines(report: dict) -> list[str]:
    """What backs the verdict, in words (the whole report is --json's): what a bounded proof did
    prove, the proof and its checker, the certificate file, the counterexample, the diagnosis."""
    lines = []
    if report["verdict"] == "CERTIFIED" and report.get("max_digits") is not None:
        lines.append(f"proved: {report['proves']}")
    if "proof" in report:
        lines.append(f"proof: {report['proof']}, {report.get('nodes', 0):,} nodes; independent checker: "
                     f"{report['checker']}")
    if "certificate" in report:
        lines.append(f"certificate: {report['certificate']}")
    if "counterexample" in report:
        lines += ["counterexample:"] + [f"  {line}" for line in plain_lines(report["counterexample"])]
    if "diagnosis" in report:  # not an error: what stopped the proof short of every length
        label = "why not every length" if report["verdict"] == "CERTIFIED" else "diagnosis"
        lines += [f"{label}:"] + [f"  {line}" for line in plain_lines(report["diagnosis"])]
    return lines + ["(the whole report: add --json)"]


def plain_lines(value: object, depth: int = 0) -> list[str]:
    """A JSON value as indented `key: value` lines for people (lists of plain values on one line,
    numbers rounded), so that no JSON reaches the terminal."""
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            name = str(key).replace("_", " ")
            if _nested(item):
                lines += [f"{name}:"] + [f"  {line}" for line in plain_lines(item, depth + 1)]
            else:
                lines.append(f"{name}: {_plain(item)}")
        return lines
    if isinstance(value, list):
        return [line for item in value for line in (["-"] if depth > 8 else _item_lines(item, depth))]
    return [_plain(value)]


def _nested(value: object) -> bool:
    """A dict, or a list holding a dict or a list: shown on lines of its own."""
    if isinstance(value, list):
        return any(isinstance(v, dict | list) for v in value)
    return isinstance(value, dict)


def _item_lines(item: object, depth: int) -> list[str]:
    """A list item: '- ' before its first line, its other lines indented under it."""
    if isinstance(item, dict) and not any(isinstance(v, dict | list) for v in item.values()):
        return ["- " + ", ".join(plain_lines(item, depth + 1))]  # a flat record: one line
    first, *rest = plain_lines(item, depth + 1) or [""]
    return [f"- {first}"] + [f"  {line}" for line in rest]


def _plain(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(_plain(v) for v in value) or "none"
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "none"}[value]
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


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
