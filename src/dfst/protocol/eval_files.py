"""What `dfst eval` leaves next to a checkpoint, and `dfst replay`'s re-run of the saved failure.

    DIR/eval.json            the protocol's report (dfst.protocol.evaluate.run_protocol), with dfst_version
    DIR/eval.png             accuracy against N (dfst.results.plots)
    DIR/first_failure.json   the first instance that failed (removed when an evaluation has none)

A directory dfst cannot write gets no files (the report is still returned); a report path that is
a link, FIFO or device, or a file of the same name that dfst did not write, is refused before any
work, and so is a second evaluation of the same directory while one runs (dfst.io.outputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfst import __version__
from dfst.errors import DfstError
from dfst.grid.grid import Layout
from dfst.grid.rollout import (
    DfstWeights,
    InstanceResult,
    TableRun,
    first_disagreement,
    judge,
    run_dfst,
    run_table,
)
from dfst.io.inputs import read_json_file
from dfst.io.outputs import (
    claim_output,
    json_bytes,
    refuse_foreign,
    refuse_special,
    release_output,
    remove_own_file,
    remove_stale_temporaries,
    writable_directory,
    write_atomic,
)
from dfst.io.recorded import dfst_manifest
from dfst.io.run_guard import record_paths, write_recorded
from dfst.io.targets import DATA_FILE, VALIDATION_FILE, is_run
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import HeldOut
from dfst.tasks import Instance, Task

REPORT_FILE, PLOT_FILE, FAILURE_FILE = "eval.json", "eval.png", "first_failure.json"
REPORT_FILES = (REPORT_FILE, PLOT_FILE, FAILURE_FILE)


@dataclass(frozen=True)
class EvalJob:
    """A checked `dfst eval`: the checkpoint, the task it is scored against, its weights, the
    protocol, the training pairs held out (and where they came from), and whether the report can be
    saved next to the checkpoint."""

    checkpoint: Path
    task: Task
    weights: DfstWeights
    cfg: EvalConfig
    held_out: HeldOut
    held_out_source: str | None
    saving: bool


def plan_eval(checkpoint: str | Path, cfg: EvalConfig, *, agent_file: str | Path | None = None,
              trained_on: str | Path | None = None) -> EvalJob:
    """Everything `dfst eval` checks before it runs the protocol: the checkpoint and its task (or
    `agent_file`'s agent as the reference), the training pairs to hold out (`trained_on`, else a
    run's own data), each given length's memory, and the report paths."""
    from dfst.protocol.evaluate import check_eval_lengths

    task, weights, _ = load_for_eval(checkpoint, agent_file)
    held_out, source = held_out_of(checkpoint, trained_on)
    check_eval_lengths(task, cfg)
    saving = prepare_report_dir(Path(checkpoint))
    return EvalJob(Path(checkpoint), task, weights, cfg, held_out, source, saving)


def run_eval(job: EvalJob, *, on_level=None, on_steps=None) -> tuple[dict, InstanceResult | None]:
    """The protocol on the job's checkpoint: its report (saved beside it when it can be; `not_saved`
    says why not) and the first failing instance."""
    from dfst.protocol.evaluate import run_protocol

    report, failure = run_protocol(job.task, job.weights, job.cfg, held_out=job.held_out, on_level=on_level,
                                   on_steps=on_steps)
    report |= {"checkpoint": str(job.checkpoint), "held_out_source": job.held_out_source}
    report |= job.task.describe()
    try:
        save_reports(job.checkpoint, job.task, report, failure, job.saving)
    except DfstError as exc:  # e.g. a read-only medium that os.access did not see: keep the result
        report |= {"plot": None, "not_saved": str(exc)}
    return report, failure


def load_for_eval(checkpoint: str | Path,
                  agent_file: str | Path | None = None) -> tuple[Task, DfstWeights, dict]:
    """The checkpoint's task (with the agent it imitates, or `agent_file`'s, as the reference), its
    weights for the engine, and its config."""
    from dfst.model.checkpoint import load_checkpoint
    from dfst.tasks.own_agent import checkpoint_task

    model, config = load_checkpoint(checkpoint)
    task = checkpoint_task(config, agent_file=agent_file)
    if model.config.k != len(task.alphabet):
        raise DfstError(f"checkpoint {checkpoint} has k={model.config.k} symbols; task {task.name} "
                        f"has {len(task.alphabet)}")
    return task, DfstWeights.of(*model.numpy_weights()), config


def held_out_of(checkpoint: str | Path, dataset: str | Path | None = None) -> tuple[HeldOut, str | None]:
    """The operand pairs a checkpoint was trained on, kept out of its tests, and where they were read:
    `dataset` (a PTO dataset file), else the data of the training run the checkpoint belongs to
    (RUN/model, RUN/trained or RUN/extracted: RUN/data.pto.zip, and the validation PTOs that chose
    its d, RUN/validation.pto.zip); none (and None) when neither is known."""
    from dfst.data.pto import load_dataset

    path = Path(dataset) if dataset is not None else _run_data(Path(checkpoint))
    if path is None:
        return HeldOut(), None
    validation = path.parent / VALIDATION_FILE if dataset is None else None  # the run's, beside it
    tested = load_dataset(validation).operands if validation is not None and validation.is_file() else []
    return HeldOut([*load_dataset(path).operands, *tested]), str(path)


def _run_data(checkpoint: Path) -> Path | None:
    run = checkpoint.resolve().parent
    from dfst.io.recorded import NotAsWritten

    try:
        found = is_run(run)
    except NotAsWritten:  # a run of dfst's whose files changed: never scored as if it were none
        raise
    except DfstError:  # a config.json of the user's own beside the checkpoint: not a run of dfst's
        return None
    return run / DATA_FILE if found and (run / DATA_FILE).is_file() else None


def prepare_report_dir(directory: Path) -> bool:
    """Refuse, before any work, report paths that are not regular files or hold a file dfst did not
    write; True when the reports can be saved (claimed for this process; stale temporaries of a
    killed evaluation are removed then), False for a read-only directory."""
    for name in REPORT_FILES:
        refuse_special(directory / name, "report path")
        refuse_foreign(directory / name, "dfst eval writes its report there")
    if not writable_directory(directory):
        return False
    for name in REPORT_FILES:
        claim_output(directory / name)
    remove_stale_temporaries(directory, REPORT_FILES)
    return True


def save_reports(directory: Path, task: Task, report: dict, failure: InstanceResult | None,
                 saving: bool) -> None:
    """Fill the report's `first_failure` and `plot`; with `saving`, write the three files."""
    from dfst.results.plots import plot_length_generalisation

    report["first_failure"], report["plot"] = None, None
    if failure is not None:
        saved = {"task": task.name, "name": failure.name, "a": failure.a, "b": failure.b,
                 "outcome": str(failure.outcome), "verdict": failure.verdict, "steps": failure.steps,
                 "rescale": report["mode"] == "rescaled"}
        report["first_failure"] = {k: v for k, v in saved.items() if k not in ("a", "b")} | {
            "digits": max(len(failure.a), len(failure.b)),
            "file": str(directory / FAILURE_FILE) if saving else None}
    if not saving:
        return
    if failure is not None:
        write_report(directory, FAILURE_FILE, json_bytes(saved | {"dfst_version": __version__}, indent=None))
    else:
        refuse_foreign(directory / FAILURE_FILE, "dfst eval removes its stale copy")  # (appeared since)
        remove_own_file(directory / FAILURE_FILE)  # it belonged to an earlier evaluation
        release_output(directory / FAILURE_FILE)
        if dfst_manifest(directory) is not None:
            record_paths(directory, FAILURE_FILE)  # its entry goes with it
    report["plot"] = str(plot_length_generalisation(report, directory / PLOT_FILE))
    write_report(directory, REPORT_FILE, json_bytes(report | {"dfst_version": __version__}))


def write_report(directory: Path, name: str, data: bytes) -> None:
    """DIR/name written atomically; where DIR is a run's or checkpoint's with a manifest, recorded in
    it as well, so that `report-runs` and `replay` never read an edited eval.json or failure as dfst's."""
    if dfst_manifest(directory) is None:
        write_atomic(directory / name, data)
    else:
        write_recorded(directory, name, data)


@dataclass(frozen=True)
class Replay:
    """A saved instance run again: the verdict (plain JSON), and the run and layout to render."""

    verdict: dict
    exact: bool
    task: Task
    run: TableRun
    layout: Layout


def replay_failure(checkpoint: str | Path, failure_file: str | Path | None = None) -> Replay:
    """Run the checkpoint's model again on the instance `dfst eval` saved (or `failure_file`)."""
    task, weights, _ = load_for_eval(checkpoint)
    if failure_file is None:
        _check_something_to_replay(Path(checkpoint))
    saved = read_failure(Path(failure_file) if failure_file else Path(checkpoint) / FAILURE_FILE)
    if saved.get("task", task.name) != task.name:
        raise DfstError(f"the saved instance is for task {saved['task']}, the checkpoint for {task.name}")
    instance = task.check(saved["a"], saved["b"])
    layout = task.layout(instance)
    run = run_dfst(weights, layout, task.max_steps(instance), rescale=bool(saved.get("rescale")))
    result = judge(task, Instance(instance.a, instance.b, saved.get("name", "saved")), run, layout.answer)
    verdict = {"task": task.name, "name": result.name, "exact": result.exact,
               "outcome": str(result.outcome), "verdict": result.verdict, "steps": result.steps,
               "answer_digits": result.answer_digits, "expected_digits": len(task.expected(instance))}
    if not result.exact:
        verdict["departure"] = first_departure(task, weights, layout, task.max_steps(instance),
                                               bool(saved.get("rescale")))
    return Replay(verdict, result.exact, task, run, layout)


def first_departure(task: Task, weights: DfstWeights, layout: Layout, max_steps: int,
                    rescale: bool) -> dict | None:
    """The first step where the model's action differs from the expert's on `layout` (None if none
    within max_steps): the expert's state and the symbol read, both actions, how far the model's
    wrong score led the expert's (near 0: a margin worn down by drift), and max|h| then and at the
    start (far apart: h grew or shrank along the way)."""
    agent = task.agent
    trace = run_table(agent, layout, max_steps, record=True).trace
    found = first_disagreement(weights, trace, rescale)
    if found is None:
        return None
    t, h, model = found
    nxt, _, _ = agent.tables()
    q = agent.states.index(agent.initial)
    for x in trace[:t, 0]:  # the expert's state at step t
        q = int(nxt[q, x])
    read, write, move = (int(v) for v in trace[t])
    part = _departure(agent, weights, h, t, agent.states[q], read, (write, move), (model.write, model.move))
    # the same action, but h left the finite range: say so, not "expert X, model X"
    return part | {"why": "action" if part["expected"] != part["got"] else "non_finite"}


def _departure(agent, weights: DfstWeights, h, step: int, state: str, read: int, expected, got) -> dict:
    """The record of a departure at `step`: actions as written symbol + move letter, the lead of the
    model's score over the expert's choice (move if the moves differ, else symbol), float64."""
    import numpy as np

    from dfst.automata import MOVES

    symbols, moves = (W[read].astype(np.float64) @ h.astype(np.float64) for W in (weights.B, weights.C))
    scores, which = (moves, 1) if got[1] != expected[1] else (symbols, 0)
    lead = scores[got[which]] - scores[expected[which]]
    return {"step": step, "state": state, "read": agent.alphabet[read],
            "expected": agent.alphabet[expected[0]] + MOVES[expected[1]],
            "got": agent.alphabet[got[0]] + MOVES[got[1]], "lead": float(lead),
            "h_max_abs": float(np.abs(h).max()), "h0_max_abs": float(np.abs(weights.h0).max())}


def _check_something_to_replay(directory: Path) -> None:
    """No saved failure beside a report of dfst's that found none: nothing to replay, said as such
    (not "run dfst eval first", which the user just did)."""
    from dfst.io.outputs import file_kind, is_dfst_file

    if file_kind(directory / FAILURE_FILE) == "missing" and is_dfst_file(directory / REPORT_FILE):
        raise DfstError(f"nothing to replay: the last dfst eval of {directory} failed no instance "
                        f"({directory / REPORT_FILE}); pass --failure FILE to replay another instance")


def read_failure(path: Path) -> dict:
    """A saved instance file: needs string fields a and b."""
    saved = read_json_file(path, f"no saved instance at {path} (run dfst eval first, or pass --failure)",
                           f"{path} is not a saved instance (bad JSON)")
    if not isinstance(saved, dict) or not all(isinstance(saved.get(k), str) for k in ("a", "b")):
        raise DfstError(f"{path} is not a saved instance (needs string fields a and b)")
    return saved
