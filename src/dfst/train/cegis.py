"""Counterexample-guided training: train, certify, add the counterexample's instance, train again.

Round r trains `cfg` on the current PTOs into OUT/round<r> and certifies the model the run delivers
(the automaton read off the trained DFST when there is one, else the DFST itself, h rescaled:
`dfst.certify`). CERTIFIED ends the loop; a COUNTEREXAMPLE with a concrete task instance adds that
instance's PTO to the data (it may be longer than the training length: it is what failed); anything
else (INCONCLUSIVE, a disagreement no small instance reaches, or a counterexample the training data
already holds, which more data cannot fix) ends it too. OUT/rounds.json lists
every round.

OUT is locked for the whole loop (`dfst.io.run_guard`), each round's run by `train` as well. `--force`
removes rounds.json and the round<r> runs and nothing else: a user's file in OUT is refused before
any work, and nothing is removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from dfst.data import SAMPLERS, PtoDataset
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights
from dfst.io.inputs import read_json_file
from dfst.io.outputs import (
    check_creatable,
    check_directory,
    file_kind,
    is_temp_of,
    remove_own_file,
    write_json,
)
from dfst.io.run_guard import LOCK_FILE, run_lock
from dfst.model.checkpoint import load_checkpoint
from dfst.tasks import Task
from dfst.train.config import TrainConfig
from dfst.train.growth import with_instances
from dfst.train.loop import task_of, train
from dfst.train.rundir import check_run_dir, clear_run, foreign_paths

ROUNDS_FILE = "rounds.json"
ROUND_DIR = re.compile(r"round\d+")


def certify_run(run: Path, summary: dict, task: Task) -> tuple[str, dict]:
    """Certify what the run delivers; returns (which model, the verdict's dictionary)."""
    from dfst.certify import certify

    which = "extracted" if summary.get("extracted") else "model"
    model, _ = load_checkpoint(run / which, expect_task=task.name)
    result = certify(DfstWeights.of(*model.numpy_weights()), task, rescale=True)
    return which, result.to_dict() | {"counterexample": result.counterexample}


def train_until_certified(cfg: TrainConfig, out: str | Path, *, max_rounds: int = 5,
                          data: PtoDataset | None = None, progress: Callable[[dict], None] | None = None,
                          command: str | None = None, force: bool = False, device: str = "cpu",
                          task: Task | None = None) -> dict:
    """Rounds of train + certify; returns {"certified", "samples", "rounds", "model"}. With `force`,
    the rounds of an earlier loop in `out` are removed first (`own_rounds`: nothing else is)."""
    task, out = task_of(cfg, task), Path(out)
    # the rounds certify the automaton read off each run: fine-tuning the raw weights (minutes per
    # round) would not change it, so the loop trains without that phase
    cfg = replace(cfg, finetune=False)
    data = data or SAMPLERS[cfg.sampler](task, cfg.samples, cfg.max_digits, cfg.seed)
    with run_lock(out, command or "dfst train --until-certified"):
        if force:
            remove_rounds(out, command or "dfst train --until-certified --force")
        rounds = _rounds(cfg, out, task, data, max_rounds, progress, command, device)
        report = {"certified": rounds[-1]["verdict"] == "CERTIFIED", "samples": rounds[-1]["samples"],
                  "model": rounds[-1]["model"], "rounds": rounds}
        write_json(out / ROUNDS_FILE, report)
    return report


def _rounds(cfg: TrainConfig, out: Path, task: Task, data: PtoDataset, max_rounds: int,
            progress: Callable[[dict], None] | None, command: str | None, device: str) -> list[dict]:
    rounds: list[dict] = []
    for r in range(max_rounds):
        run = out / f"round{r}"
        summary = train(cfg, run, data=data, resume=True, progress=progress, command=command, device=device,
                        task=task)
        which, verdict = certify_run(run, summary, task)
        instance = (verdict.get("counterexample") or {}).get("instance")
        rounds.append({"round": r, "samples": data.samples, "model": str(run / which),
                       "verdict": verdict["verdict"],
                       "added": None if instance is None else [instance["a"], instance["b"]]})
        if verdict["verdict"] == "CERTIFIED" or instance is None:
            break
        if (instance["a"], instance["b"]) in set(map(tuple, data.operands)):
            rounds[-1]["note"] = "the counterexample is already a training instance: the model did not fit it"
            break
        data = with_instances(task, data, [[instance["a"], instance["b"]]])
    return rounds


def check_rounds_dir(out: Path) -> bool:
    """Whether `out` holds an until-certified loop's rounds, after refusing (`check_directory`, a user's
    files beside the rounds kept) a link or a file as `out`, or a directory of other things."""
    return check_directory(out, what="until-certified loop", own=_is_round_name, is_ours=_holds_rounds,
                           keep_foreign=True, leftovers=(LOCK_FILE,))


def check_rounds_out(out: Path, *, force: bool) -> None:
    """Refuse, before any work, an `out` the loop may not write (`check_rounds_dir`) or, with `force`,
    one holding anything but dfst's rounds (`own_rounds`)."""
    if force:
        own_rounds(out)  # checks the directory as check_rounds_dir does, then every entry in it
    else:
        check_rounds_dir(out)
    check_creatable(out)


def own_rounds(out: Path) -> list[Path]:
    """What --force removes from `out`: rounds.json and the round<r> training runs. Anything else
    there (a user's file, a round holding more than a run) is a DfstError naming it: refused whole."""
    if not check_rounds_dir(out):
        return []
    own = []
    for entry in sorted(out.iterdir()):
        if entry.name == LOCK_FILE or is_temp_of(entry.name, [ROUNDS_FILE]):
            continue
        if not (_is_rounds_file(entry) or _is_round_run(entry)):
            raise DfstError(f"{entry} was not written by dfst train --until-certified; --force removes only "
                            "dfst's own rounds, so nothing was removed (move it away or use another --out)")
        own.append(entry)
    return own


def _is_round_name(name: str) -> bool:
    return (name in (ROUNDS_FILE, LOCK_FILE) or is_temp_of(name, [ROUNDS_FILE])
            or bool(ROUND_DIR.fullmatch(name)))


def _holds_rounds(out: Path) -> bool:
    return any(_is_round_name(p.name) and p.name != LOCK_FILE for p in out.iterdir())


def _is_rounds_file(path: Path) -> bool:
    if path.name != ROUNDS_FILE or file_kind(path) != "file":
        return False
    try:
        report = read_json_file(path, f"cannot read {path}")
    except DfstError:
        return False
    return isinstance(report, dict) and isinstance(report.get("rounds"), list) and "certified" in report


def _is_round_run(path: Path) -> bool:
    if not ROUND_DIR.fullmatch(path.name) or file_kind(path) != "directory" or foreign_paths(path):
        return False
    check_run_dir(path)  # a link or a foreign file inside the run is refused, naming it
    return True


def remove_rounds(out: Path, command: str) -> None:
    """Remove `own_rounds(out)`, each round under its own lock (no other dfst is writing it)."""
    for path in own_rounds(out):
        if path.name == ROUNDS_FILE:
            remove_own_file(path)
            continue
        with run_lock(path, command):
            clear_run(path)
        path.rmdir()
