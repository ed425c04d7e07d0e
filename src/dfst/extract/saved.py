"""Extraction from what is on disk: a run or a checkpoint in, an agent or exact checkpoint out.

A run is read with its own training PTOs and the `merge` method by default, which gives exactly the
automaton `dfst train` saved in RUN/extracted. A bare checkpoint has no PTOs: `lockstep` by
default, or any method with a PTO dataset given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfst.automata import save_transducer
from dfst.errors import DfstError
from dfst.extract import DEFAULT_METHOD, NEEDS_MODEL, NEEDS_PTOS, Extraction, extract
from dfst.io.targets import Target, resolve, run_data
from dfst.tasks.base import Task

AGENT_FILE = "agent.json"


@dataclass(frozen=True)
class Found:
    """An extraction and where it came from."""

    extraction: Extraction
    target: Target
    task: Task  # with --agent (or a model of an agent), the agent as its expert
    method: str
    source: str  # what was read, in words: the model (and whose PTOs), or the PTOs alone


def extract_from(path: str | Path, method: str | None = None, *, data: str | Path | None = None,
                 task: str | None = None, agent_file: str | Path | None = None) -> Found:
    """The automaton read off the model at `path` (a run directory: its trained weights), with the
    states named after the task's expert (or `agent_file`'s agent, or the agent the model imitates)."""
    from dfst.data import load_dataset
    from dfst.model.checkpoint import load_checkpoint
    from dfst.tasks.own_agent import checkpoint_task

    target = resolve(path)
    method = method or (DEFAULT_METHOD if target.run or data is not None else "lockstep")
    model, config = load_checkpoint(target.checkpoint)
    the_task = checkpoint_task(config, task, agent_file)
    reference = the_task.agent
    source = data if data is not None else (run_data(target.run) if target.run else None)
    if method in NEEDS_PTOS and source is None:
        raise DfstError(f"extraction method {method!r} reads PTOs: {path} is a checkpoint, pass --data FILE")
    ptos = load_dataset(source) if method in NEEDS_PTOS else None
    try:
        found = extract(model, ptos, method, agent=reference)
    except DfstError as exc:
        hint = "" if target.run or data is not None else "; try --method merge --data FILE (the PTOs)"
        raise DfstError(f"{exc}{hint}") from None
    read = f"the PTOs {source}" if method not in NEEDS_MODEL else target.describe()
    return Found(found, target, the_task, method, read)


def extract_to(path: str | Path, out: str | Path, method: str | None = None, *,
               data: str | Path | None = None, task: str | None = None,
               agent_file: str | Path | None = None, force: bool = False) -> dict:
    """`dfst extract`: the automaton read off the model at `path` (`extract_from`), written to `out`:
    from a run, an exact one-hot DFST checkpoint with its agent JSON; from a checkpoint, the agent
    JSON. An output dfst may not write is refused before anything is read off. Returns what was
    written and read, with the command that uses it next (`next`)."""
    from dfst.io.outputs import check_output_file
    from dfst.model.checkpoint import claim_checkpoint_dir
    from dfst.tasks.user import dfst_command

    from_run = resolve(path).run is not None
    if from_run:
        claim_checkpoint_dir(out, force)
    else:
        check_output_file(out, force=force)
    found = extract_from(path, method, data=data, task=task, agent_file=agent_file)
    agent, the_task, command = found.extraction.agent, found.task, dfst_command(found.task.name)
    if from_run:
        save_extraction(found.extraction, out, task=the_task, provenance=provenance(found), overwrite=force)
        written, hint = {"checkpoint": str(out)}, f"evaluate with: {command} eval {out}"
    else:
        save_transducer(agent, out)
        written = {"agent": str(out)}
        hint = f"compile with: {command} compile {the_task.name} --agent {out} --out DIR"
    return {**written, "task": the_task.name, "from": found.source, "method": found.method,
            "states": agent.d, "rules": found.extraction.pairs, "radius": found.extraction.radius,
            "expert_states": the_task.agent.d, "expert_rules": len(the_task.agent.rules),
            **the_task.describe(), "next": hint}


def save_extraction(found: Extraction, out: str | Path, *, task: Task, provenance: dict,
                    overwrite: bool = False) -> Path:
    """The automaton compiled to an exact one-hot DFST checkpoint in `out`, with its agent JSON (and
    the agent it imitates, when that is not the task's expert)."""
    from dfst.io.outputs import json_bytes
    from dfst.io.run_guard import write_recorded
    from dfst.model.checkpoint import save_checkpoint
    from dfst.model.compile import compile_agent
    from dfst.tasks.own_agent import reference_json

    out = Path(out)
    save_checkpoint(compile_agent(found.agent, task=task.name), out, provenance, overwrite=overwrite,
                    reference=reference_json(task))
    write_recorded(out, AGENT_FILE, json_bytes(found.agent.to_dict()))  # in the checkpoint's manifest
    return out


def provenance(found: Found) -> dict:
    """What a saved extraction records of its origin."""
    e, t = found.extraction, found.target
    origin = {"run": str(t.run)} if t.run else {"checkpoint": str(t.checkpoint)}
    return {"source": "extract", **origin, "method": found.method, "radius": e.radius,
            "clusters": e.clusters, "rules": e.pairs}
