"""`dfst extract`: read the automaton off a model (a run's trained weights, or a checkpoint)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import JsonOption, app, console, print_json


@app.command("extract")
def extract_command(
    path: Path = typer.Argument(..., metavar="RUN|CHECKPOINT",
                                help="A dfst train run directory (its trained weights), or a checkpoint."),
    out: Path = typer.Option(..., "--out", help="Run: checkpoint dir to write. Checkpoint: agent JSON."),
    method: str = typer.Option(None, "--method", help="merge (default for a run: gives RUN/extracted), "
                               "cluster, lockstep (default for a checkpoint: no PTOs needed) or rpni."),
    data: Path = typer.Option(None, "--data", help="PTO dataset to read the states on (default: the run's)."),
    task_name: str = typer.Option(None, "--task", help="Reference task (default: the model's own)."),
    agent_file: Path = typer.Option(None, "--agent", help="Name the states after this agent JSON (on the "
                                    "task's layout) instead of the expert (default: the agent the model "
                                    "imitates)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing output that dfst wrote."),
    as_json: bool = JsonOption,
) -> None:
    """Read a finite automaton off the model with one of dfst.extract's methods. From a run: an exact
    one-hot DFST checkpoint (plus agent.json) that `dfst eval` can test; by default the same automaton
    as RUN/extracted. From a checkpoint: the agent JSON."""
    from dfst.extract.saved import extract_to

    info = extract_to(path, out, method, data=data, task=task_name, agent_file=agent_file, force=force)
    hint = info.pop("next")
    if as_json:
        return print_json(info)
    console.print(f"extracted {info['states']} states, {info['rules']} rules from {info['from']} "
                  f"({info['method']} method; the expert has {info['expert_states']} states and "
                  f"{info['expert_rules']} rules) -> {out}; {hint}")
