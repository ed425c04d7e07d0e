"""`dfst extract`: read the automaton off a trained DFST and save it compiled (exact weights)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import JsonOption, app, console, print_json
from dfst.errors import DfstError


@app.command("extract")
def extract_command(
    run: Path = typer.Argument(..., help="A dfst train run directory, or a checkpoint directory."),
    out: Path = typer.Option(..., "--out", help="Run: checkpoint dir to write. Checkpoint: agent JSON."),
    task_name: str = typer.Option(None, "--task", help="Checkpoint form: the task (default: its own)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing checkpoint."),
    as_json: bool = JsonOption,
) -> None:
    """Cluster the model's teacher-forced states on its own training PTOs into an automaton,
    and save it as an exact one-hot DFST (plus agent.json) that `dfst eval` can test."""
    from dfst.automata import save_transducer
    from dfst.checkpoint import load_checkpoint, save_checkpoint
    from dfst.compile import compile_agent
    from dfst.data import load_dataset
    from dfst.extract import extract_automaton
    from dfst.tasks import get_task
    from dfst.tasks.base import BLANK

    if (run / "config.json").exists() and not (run / "data.pto.zip").exists():
        return _extract_checkpoint(run, out, task_name, force, as_json)
    if not (run / "data.pto.zip").exists():
        raise DfstError(f"{run} is not a dfst train run (no data.pto.zip)")
    model, config = load_checkpoint(run / "model")
    task = get_task(config["task"])
    found = extract_automaton(model.numpy_weights(), load_dataset(run / "data.pto.zip"), task.alphabet, BLANK)
    compiled = compile_agent(found.agent, task=task.name)
    provenance = {"source": "extract", "run": str(run), "radius": found.radius,
                  "clusters": found.clusters, "rules": found.pairs}
    save_checkpoint(compiled, out, provenance, overwrite=force)
    save_transducer(found.agent, out / "agent.json")
    info = {"checkpoint": str(out), "task": task.name, "states": found.agent.d, "rules": found.pairs,
            "radius": found.radius, "expert_states": task.agent.d, "expert_rules": len(task.agent.rules)}
    if as_json:
        return print_json(info)
    console.print(f"extracted {found.agent.d} states, {found.pairs} rules (radius {found.radius}; the "
                  f"expert has {task.agent.d} and {len(task.agent.rules)}) -> {out}; "
                  f"evaluate with: dfst eval {out}")


def _extract_checkpoint(checkpoint: Path, out: Path, task_name: str | None, force: bool,
                        as_json: bool) -> None:
    """The automaton read off the lockstep graph with the task's expert, minimised, as agent JSON."""
    from dfst.automata import save_transducer
    from dfst.certify import extract_from_weights
    from dfst.checkpoint import load_checkpoint
    from dfst.outputs import check_output_file
    from dfst.rollout import DfstWeights
    from dfst.tasks import get_task

    check_output_file(out, force=force)
    model, config = load_checkpoint(checkpoint)
    task = get_task(task_name or config["task"])
    if model.config.k != task.agent.k:
        raise DfstError(f"checkpoint has k={model.config.k} symbols, task {task.name} has {task.agent.k}")
    agent = extract_from_weights(DfstWeights.of(*model.numpy_weights()), task.agent)
    save_transducer(agent, out)
    info = {"agent": str(out), "task": task.name, "states": agent.d, "rules": len(agent.rules),
            "expert_states": task.agent.d, "expert_rules": len(task.agent.rules)}
    if as_json:
        return print_json(info)
    console.print(f"extracted {agent.d} states, {len(agent.rules)} rules -> {out}; "
                  f"compile with: dfst compile {task.name} --agent {out} --out DIR")
