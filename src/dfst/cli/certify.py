"""`dfst certify` (proof of exactness for every length, or a counterexample) and `dfst show`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import typer

from dfst.cli.agents import agent_for
from dfst.cli.app import JsonOption, app, console, print_json
from dfst.cli.models import ExtractedOption, PathArgument, target_of
from dfst.errors import DfstError
from dfst.outputs import check_output_file, marker_text, write_atomic


@app.command("certify")
def certify_command(
    path: Path = PathArgument,
    extracted: bool = ExtractedOption,
    task_name: str = typer.Option(None, "--task", help="Task (default: the checkpoint's)."),
    agent_file: Path = typer.Option(None, "--agent", help="Certify against this agent JSON instead."),
    rescale: bool = typer.Option(False, "--rescale", help="Certify the engine's rescaled mode."),
    out: Path = typer.Option(None, "--out", help="Write the certificate JSON here (when CERTIFIED)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing certificate that dfst wrote."),
    as_json: bool = JsonOption,
) -> int:
    """CERTIFIED (with a certificate), COUNTEREXAMPLE, or INCONCLUSIVE (with a diagnosis).

    Exit code 0: CERTIFIED and the certificate accepted by the independent checker; 1: a
    COUNTEREXAMPLE, INCONCLUSIVE or a rejected certificate; 2: bad input."""
    from dfst.certify import certify, check_certificate
    from dfst.checkpoint import load_checkpoint
    from dfst.rollout import DfstWeights
    from dfst.tasks import get_task

    if out is not None:
        check_output_file(out, force=force)  # before the proof search, not after it
    checkpoint = target_of(path, extracted, as_json)
    model, config = load_checkpoint(checkpoint)
    task = get_task(task_name or config["task"])
    agent = agent_for(task, agent_file)
    if (model.config.k, model.config.d) < (agent.k, 0) or model.config.k != agent.k:
        raise DfstError(f"checkpoint has k={model.config.k} symbols, the agent {agent.k}")
    weights = DfstWeights.of(*model.numpy_weights())
    result = certify(weights, task, agent=agent, rescale=rescale)
    report = result.to_dict() | {"checkpoint": str(checkpoint), "task": task.name}
    if result.certificate is not None:
        ok, why = check_certificate(result.certificate, weights.A, weights.B, weights.C, weights.h0, agent)
        report["checker"] = why if ok else f"REJECTED: {why}"
        if out is not None:
            write_atomic(out, (json.dumps(result.certificate) + "\n").encode())
            report["certificate"] = str(out)
    holds = result.verdict == "CERTIFIED" and not report["checker"].startswith("REJECTED")
    if as_json:
        print_json(report)
        return 0 if holds else 1
    colour = {"CERTIFIED": "green", "COUNTEREXAMPLE": "red"}.get(result.verdict, "yellow")
    console.print(f"[{colour}]{result.verdict}[/] ({task.name}, {result.mode} mode, {result.seconds:.3f} s)")
    for key in ("proof", "nodes", "checker", "certificate", "counterexample", "diagnosis"):
        if key in report:
            console.print(f"  {key}: {json.dumps(report[key])}", highlight=False, markup=False)
    return 0 if holds else 1


@app.command("check-certificate")
def check_command(
    certificate: Path = typer.Argument(..., help="Certificate JSON written by dfst certify --out."),
    checkpoint: Path = typer.Argument(..., help="The checkpoint it is about."),
    as_json: bool = JsonOption,
) -> None:
    """Re-verify a certificate with the independent checker; exit code 1 if it is rejected."""
    from dfst.automata import transducer_from_dict
    from dfst.certify import check_certificate
    from dfst.checkpoint import load_checkpoint
    from dfst.inputs import read_json_file

    cert = read_json_file(certificate, f"cannot read certificate {certificate}")
    if not isinstance(cert, dict) or cert.get("format") != "dfst-certificate" or "agent" not in cert:
        raise DfstError(f"{certificate} is not a dfst certificate")
    model, _ = load_checkpoint(checkpoint)
    ok, why = check_certificate(cert, *model.numpy_weights(), transducer_from_dict(cert["agent"]))
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

    if out is not None:
        check_output_file(out, force=force)
    dot = to_dot(load_transducer(agent_file))
    if out is None:
        return print(dot, end="")
    if out.suffix == ".svg":
        write_atomic(out, _svg(dot))
    else:
        write_atomic(out, f"// {marker_text()}\n{dot}".encode())
    console.print(f"wrote {out}")


def _svg(dot: str) -> bytes:
    """Graphviz's SVG of `dot`, with dfst's marker as a comment after the XML declaration."""
    if shutil.which("dot") is None:
        raise DfstError("SVG needs graphviz's `dot` binary (not found); use --out FILE.dot")
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=300)
    if done.returncode != 0:
        raise DfstError(f"graphviz failed: {' '.join(done.stderr.decode(errors='replace').split())[:200]}")
    head, sep, rest = done.stdout.partition(b"?>")
    comment = f"\n<!-- {marker_text()} -->".encode()
    return head + sep + comment + rest if sep else comment.lstrip() + b"\n" + done.stdout
