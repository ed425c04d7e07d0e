"""A training run on disk: its layout, creating or resuming it, its manifest, and the metrics log.

    out/
      config.json               the run: TrainConfig, command line, dataset summary and fingerprint
      data.pto.zip              the training PTOs (dfst.data format)
      metrics.jsonl             one JSON object per log or evaluation step, appended as training goes
      train_state.safetensors   weights, Adam moments and step counts, with a JSON `info` entry in the
                                safetensors header: iteration, seconds, last loss and evaluation
      model/                    the final DFST checkpoint (dfst.model.checkpoint); the kept restart
      extracted/                with `extract`: the automaton read off model/, compiled (+ agent.json)
      trained/                  with `finetune`: the trained weights; model/ then holds the fine-tuned
                                ones (dfst.train.tuning); summary.json gains a "finetune" entry
      summary.json              written last: its presence means the run is finished
      manifest.json             sha256 and size of every file above but metrics.jsonl (dfst.io.run_guard),
                                checked on resume: a damaged run is an error, never "finished"
      .dfst.lock                held by the one process writing the run (dfst.io.run_guard)

Nothing is pickled: tensors go through safetensors (`dfst.train.state`) and everything else through
JSON. The state file is written atomically, so a run killed at any moment resumes from its last
complete checkpoint; metrics logged after that checkpoint are dropped on resume and logged again.
metrics.jsonl is not in the manifest: it is appended to at every log line (a checksum would rewrite
the manifest as often), truncated to the checkpoint's iteration on resume, and a torn line is
skipped when read. `--force` removes the run's own files and nothing else: a user's files beside them stay.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from dfst.errors import DfstError
from dfst.io import records
from dfst.io.inputs import InputMissing, parse_json, read_bytes, read_json_if_exists
from dfst.io.outputs import (
    append_text,
    check_creatable,
    check_directory,
    file_kind,
    is_temp_of,
    json_bytes,
    make_directory,
    remove_own_file,
    remove_own_tree,
    remove_stale_temporaries,
    write_atomic,
)
from dfst.io.run_guard import (
    FORCE_HINT,
    LOCK_FILE,
    MANIFEST_FILE,
    check_manifest,
    read_manifest,
    record_paths,
    write_recorded,
)

# the names that other packages read live with dfst.io.targets (a run directory given on the command line)
from dfst.io.targets import (
    CONFIG_FILE,
    DATA_FILE,
    EXTRACTED_DIR,
    MODEL_DIR,
    RUN_FORMAT,
    SUMMARY_FILE,
    VALIDATION_FILE,
)
from dfst.model.checkpoint import CONFIG_FILE as CHECKPOINT_CONFIG
from dfst.model.checkpoint import OWN_FILES as CHECKPOINT_OWN
from dfst.model.checkpoint import WEIGHTS_FILE
from dfst.train.config import before_they_existed
from dfst.train.state import train_state_bytes

METRICS_FILE, STATE_FILE, TRAINED_DIR = "metrics.jsonl", "train_state.safetensors", "trained"
CHECKPOINT_DIRS = (MODEL_DIR, EXTRACTED_DIR, TRAINED_DIR)
RUN_FILES = (CONFIG_FILE, DATA_FILE, VALIDATION_FILE, METRICS_FILE, STATE_FILE, *CHECKPOINT_DIRS,
             SUMMARY_FILE)
OWN_FILES = (*RUN_FILES, MANIFEST_FILE)  # what a run writes, so what --force may remove
CHECKPOINT_FILES = (WEIGHTS_FILE, CHECKPOINT_CONFIG, MANIFEST_FILE, *CHECKPOINT_OWN)  # in model/ and
# extracted/: the weights, their manifest, agent.json and what dfst eval writes next to them


def prepare_run(out_dir: str | Path, run_info: dict, *, resume: bool) -> Path:
    """Create or reopen the run directory and write its config.json (the caller holds its lock).

    Resuming needs the same training config and dataset, and every file the manifest lists as dfst
    wrote it; without `resume` the old run's files, and only those, are removed. A non-empty
    directory that is not a training run, or a link where a run's file should be, is refused.
    """
    out = Path(out_dir)
    old = check_run_dir(out)
    if old is not None and resume:
        _check_same_run(out, old, run_info)
        check_run_files(out, old)
        if read_manifest(out) is None:  # a run from before manifests: its checked files recorded now,
            record_paths(out, *(p.name for p in run_paths(out) if p.name != METRICS_FILE))  # so read back
    elif old is not None:
        clear_run(out)
    make_directory(out)
    if not os.access(out, os.W_OK):
        raise DfstError(f"output directory {out} is not writable")
    remove_stale_temporaries(out, OWN_FILES)  # what a kill left of the run's writes
    write_recorded(out, CONFIG_FILE, json_bytes(run_info, allow_nan=False))
    return out


def check_run_dir(out: Path) -> dict | None:
    """The config of the run in `out` (None: no run there yet), after refusing what dfst must not
    touch (`dfst.io.outputs.check_directory`, keeping a user's files beside a run): a link or a file
    as the directory, a directory holding other things but no run, another program's config.json, a
    link or a foreign file where the run keeps its own."""
    if not check_directory(out, what="training run", own=OWN_FILES, is_ours=holds_run_config,
                           keep_foreign=True, leftovers=(LOCK_FILE,)):
        return None
    run_paths(out)  # refuses links and foreign files among the run's own names
    old = read_json(out / CONFIG_FILE, verify=False)  # a damaged run is still one --force may replace
    if old is None or old.get("format") != RUN_FORMAT:
        raise DfstError(f"{out / CONFIG_FILE} is not a dfst training run config; dfst leaves it alone "
                        "(use another output directory)")
    return old


def holds_run_config(out: Path) -> bool:
    """A config.json, of dfst's or not, marks the directory as a run (another program's is refused)."""
    return file_kind(out / CONFIG_FILE) != "missing"


def run_differences(old: dict, new_train: dict) -> list[str]:
    """`key=old` for every TrainConfig field in which the stored run differs from `new_train` (a field
    the stored config lacks, added since, as it was before it existed: an old run ran autograd)."""
    old_train = before_they_existed() | old.get("train", {})
    new_train = before_they_existed() | json.loads(json.dumps(new_train))
    return [f"{key}={old_train.get(key)!r}, not {value!r}" for key, value in new_train.items()
            if old_train.get(key) != value]


def _check_same_run(out: Path, old: dict, new: dict) -> None:
    differences = run_differences(old, new["train"])
    if differences:
        raise DfstError(f"{out} holds a run with {differences[0]} "
                        "(use another output directory, or --force to start over)")
    if old.get("data", {}).get("sha256") != new["data"]["sha256"]:
        raise DfstError(f"{out} holds a run on different training data "
                        "(use another output directory, or --force to start over)")


def check_run_files(out: Path, config: dict) -> None:
    """The run's files are the ones dfst wrote: all of them for a finished run; for an unfinished
    one those it resumes from (model/, extracted/ and summary.json are written again at its end).
    A run from before manifests is resumed too; its dataset is still checked against config.json."""
    finished = file_kind(out / SUMMARY_FILE) == "file"
    check_manifest(out, None if finished else (CONFIG_FILE, DATA_FILE, STATE_FILE))
    if DATA_FILE not in (read_manifest(out) or {}) and file_kind(out / DATA_FILE) == "file":
        _check_data_file(out / DATA_FILE, config.get("data", {}).get("sha256"))


def _check_data_file(path: Path, sha256: str | None) -> None:
    from dfst.data import load_dataset
    from dfst.train.batches import dataset_sha256

    try:
        same = dataset_sha256(load_dataset(path)) == sha256
    except DfstError as exc:
        raise DfstError(f"{path} has changed since dfst wrote it ({exc})" + FORCE_HINT) from None
    if not same:
        raise DfstError(f"{path} has changed since dfst wrote it (not the dataset config.json names)"
                        + FORCE_HINT)


def clear_run(out: Path) -> None:
    """Remove a run's files, and only those, from `out`; the user's files beside them stay."""
    paths = run_paths(out)  # all checked before the first is removed
    for path in sorted(paths, key=lambda p: p.name == CONFIG_FILE):  # config.json last: a kill leaves a run
        if file_kind(path) == "directory":
            remove_own_tree(path)
        else:
            remove_own_file(path)
    remove_stale_temporaries(out, OWN_FILES)


def remove_final_outputs(out: Path) -> None:
    """Remove model/, extracted/ and trained/ of an unfinished run before they are written again: a
    kill while they were written leaves a partial checkpoint, which dfst's checkpoint writer refuses."""
    for path in run_paths(out):  # checked: only checkpoint files, no links
        if path.name in CHECKPOINT_DIRS:
            remove_own_tree(path)


def run_paths(out: Path) -> list[Path]:
    """The run's own entries in `out` (what clear_run removes). A link or special file among them,
    or a checkpoint directory holding anything but a checkpoint, is a DfstError naming it."""
    paths = []
    for name in OWN_FILES:
        path = out / name
        kind = file_kind(path)
        if kind not in ("missing", "file", "directory"):  # a link, FIFO, device or socket
            raise DfstError(f"{path} is a {kind}; dfst never follows or removes one (remove it yourself)")
        if kind == "directory" and name not in CHECKPOINT_DIRS:
            raise DfstError(f"{path} is a directory, not the file dfst writes there (move it away)")
        if kind == "file" and name in CHECKPOINT_DIRS:
            raise DfstError(f"{path} is a file, not the checkpoint directory dfst writes there (move it)")
        if kind == "directory":
            check_checkpoint_dir(path)
        if kind != "missing":
            paths.append(path)
    return paths


def check_checkpoint_dir(path: Path) -> None:
    """A checkpoint directory that dfst may replace: only a checkpoint's own regular files in it."""
    for entry in path.iterdir():
        own = entry.name in CHECKPOINT_FILES or is_temp_of(entry.name, CHECKPOINT_FILES)
        if not own or file_kind(entry) != "file":
            raise DfstError(f"{entry} was not written by dfst; dfst leaves {path} alone (move it away)")


def foreign_paths(out: Path) -> list[Path]:
    """Entries of `out` that no run of dfst writes: the user's own files."""
    return [p for p in sorted(out.iterdir())
            if p.name not in OWN_FILES and p.name != LOCK_FILE and not is_temp_of(p.name, OWN_FILES)]


def write_run_json(out: Path, name: str, data: dict) -> None:
    """A run's JSON file (config.json, summary.json), written atomically and recorded in the manifest."""
    write_recorded(out, name, json_bytes(data, allow_nan=False))


def save_run_state(out: Path, model: torch.nn.Module, optimizer: torch.optim.Adam, info: dict) -> None:
    """`dfst.train.state.save_train_state` into the run `out`, recorded in its manifest."""
    write_recorded(out, STATE_FILE, train_state_bytes(model, optimizer, info))


def read_json(path: Path, *, verify: bool = True) -> dict | None:
    """A JSON object from `path`, or None if there is no file; damage, or a file other than the one
    dfst recorded (`dfst.io.recorded`), is a one-line DfstError."""
    data = read_json_if_exists(path, "run file", verify=verify)  # a regular file, size and depth caps, no NaN
    if data is None:
        return None
    if not isinstance(data, dict):
        raise DfstError(f"{path} does not hold a JSON object")
    return data


def append_metrics(path: Path, record: dict) -> None:
    """One line per record; a line cut short by a kill is skipped when the log is read back."""
    append_text(path, json.dumps(record, allow_nan=True) + "\n")


def read_metrics(path: str | Path) -> list[dict]:
    """The complete records of a metrics log, in order (NaN losses included)."""
    try:
        lines = read_bytes(path, "metrics log", "metrics_bytes").splitlines()
    except InputMissing:
        return []
    records = []
    for line in lines:
        try:
            record = parse_json(line, f"metrics log {path}", allow_nan=True)
        except DfstError:
            continue  # the partial last line of a killed run
        if isinstance(record, dict):
            records.append(record)
    return records


def truncate_metrics(path: Path, iteration: int) -> None:
    """Keep the records up to `iteration` (the checkpoint a run resumes from)."""
    if path.exists():
        kept = [r for r in read_metrics(path) if r.get("iteration", 0) <= iteration]
        write_atomic(path, "".join(json.dumps(r) + "\n" for r in kept).encode())


def check_out(out: Path, *, resume: bool, force: bool) -> None:
    """Refuse, before any work, an output that cannot be written, would lose a run, or holds files
    that --force must not touch (a link, a user's file where a run's would go)."""
    check_run_dir(out)
    if (out / SUMMARY_FILE).exists() and not force and not (resume and phase_pending(out)):
        raise DfstError(f"{out} already holds a finished run (pass --force to train again)")
    if (out / CONFIG_FILE).exists() and not resume and not force:
        raise DfstError(f"{out} holds an unfinished run (drop --no-resume to continue it, "
                        "or pass --force to start over)")
    check_creatable(out)


def phase_pending(out: Path) -> bool:
    """Training finished but the fine-tuning phase its config asks for did not (killed during it):
    the same command resumes it."""
    config, summary = read_json(out / CONFIG_FILE), read_json(out / SUMMARY_FILE)
    wanted = bool(((config or {}).get("train") or {}).get("finetune"))
    return wanted and summary is not None and "finetune" not in summary


def checked_metrics(run: Path) -> list[dict]:
    """A training run's metrics.jsonl records, each checked for the fields a plot reads."""
    from dfst.io.recorded import check_recorded_files

    path = run / METRICS_FILE
    if not path.exists():
        raise DfstError(f"{run} has no {METRICS_FILE} (not a dfst train run)")
    check_recorded_files(run)  # metrics.jsonl is not recorded; the run it belongs to is
    found = read_metrics(path)
    for i, record in enumerate(found):
        where = f"{path} record {i + 1}"
        records.require(record, records.METRIC, where)
        if "loss" in record:
            records.require(record, {"loss": records.NUMBER}, where)
        if "eval" in record:
            report = records.require(record["eval"], records.METRIC_EVAL, f"{where} eval")
            if not records.require_list(report["levels"], records.LEVEL, f"{where} eval levels"):
                raise DfstError(f"{where} eval has no levels")
    return found
