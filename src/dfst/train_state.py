"""A training run on disk: its directory, the resumable training state and the metrics log.

    out/
      config.json               the run: TrainConfig, command line, dataset summary and fingerprint
      data.pto.zip              the training PTOs (dfst.data format)
      metrics.jsonl             one JSON object per log or evaluation step, appended as training goes
      train_state.safetensors   weights, Adam moments and step counts, with a JSON `info` entry in the
                                safetensors header: iteration, seconds, last loss and evaluation
      model/                    the final DFST checkpoint (dfst.checkpoint); the kept restart
      extracted/                with `extract`: the automaton read off model/, compiled (+ agent.json)
      summary.json              written last: its presence means the run is finished

Nothing is pickled: tensors go through safetensors and everything else through JSON. The state file
is written atomically, so a run killed at any moment resumes from its last complete checkpoint;
metrics logged after that checkpoint are dropped on resume and logged again.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from dfst.checkpoint import TENSORS
from dfst.errors import DfstError
from dfst.io import write_atomic

CONFIG_FILE, DATA_FILE, METRICS_FILE = "config.json", "data.pto.zip", "metrics.jsonl"
STATE_FILE, MODEL_DIR, SUMMARY_FILE = "train_state.safetensors", "model", "summary.json"
EXTRACTED_DIR = "extracted"
RUN_FILES = (CONFIG_FILE, DATA_FILE, METRICS_FILE, STATE_FILE, MODEL_DIR, EXTRACTED_DIR, SUMMARY_FILE)
RUN_FORMAT, STATE_FORMAT = "dfst-train-run", "dfst-train-state"
ADAM_SLOTS = ("step", "exp_avg", "exp_avg_sq")  # torch.optim.Adam's per-parameter state


def prepare_run(out_dir: str | Path, run_info: dict, *, resume: bool) -> Path:
    """Create or reopen the run directory and write its config.json.

    Resuming needs the same training config and dataset; otherwise the old run's files are removed.
    A non-empty directory that is not a training run is refused.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DfstError(f"output path {out} exists and is not a directory")
    old = read_json(out / CONFIG_FILE)
    if old is None and out.is_dir() and any(out.iterdir()):
        raise DfstError(f"output directory {out} is not empty and holds no training run")
    if old is not None and resume:
        _check_same_run(out, old, run_info)
    elif old is not None:
        clear_run(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DfstError(f"cannot create output directory {out}: {exc.strerror}") from None
    if not os.access(out, os.W_OK):
        raise DfstError(f"output directory {out} is not writable")
    for name in RUN_FILES:  # temporary files of writes cut short by a kill
        for stale in out.glob(f".{name}.*.tmp"):
            stale.unlink(missing_ok=True)
    write_json(out / CONFIG_FILE, run_info)
    return out


def _check_same_run(out: Path, old: dict, new: dict) -> None:
    if old.get("format") != RUN_FORMAT:
        raise DfstError(f"{out / CONFIG_FILE} is not a dfst training run config")
    old_train, new_train = old.get("train", {}), json.loads(json.dumps(new["train"]))
    for key in new_train:
        if old_train.get(key) != new_train[key]:
            raise DfstError(f"{out} holds a run with {key}={old_train.get(key)!r}, not {new_train[key]!r} "
                            "(use another output directory, or --force to start over)")
    if old.get("data", {}).get("sha256") != new["data"]["sha256"]:
        raise DfstError(f"{out} holds a run on different training data "
                        "(use another output directory, or --force to start over)")


def clear_run(out: Path) -> None:
    """Remove a run's files (and only those) from `out`."""
    for name in RUN_FILES:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def read_json(path: Path) -> dict | None:
    """A JSON object from `path`, or None if there is no file; damage is a one-line DfstError."""
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DfstError(f"cannot read {path}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise DfstError(f"{path} does not hold a JSON object")
    return data


def write_json(path: Path, data: dict) -> None:
    write_atomic(path, (json.dumps(data, indent=1, allow_nan=False) + "\n").encode())


def append_metrics(path: Path, record: dict) -> None:
    """One line per record; a line cut short by a kill is skipped when the log is read back."""
    with open(path, "a") as f:
        f.write(json.dumps(record, allow_nan=True) + "\n")


def read_metrics(path: str | Path) -> list[dict]:
    """The complete records of a metrics log, in order."""
    records = []
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return records
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the partial last line of a killed run
    return records


def truncate_metrics(path: Path, iteration: int) -> None:
    """Keep the records up to `iteration` (the checkpoint a run resumes from)."""
    if path.exists():
        kept = [r for r in read_metrics(path) if r.get("iteration", 0) <= iteration]
        write_atomic(path, "".join(json.dumps(r) + "\n" for r in kept).encode())


def save_train_state(path: Path, model: torch.nn.Module, optimizer: torch.optim.Adam, info: dict) -> None:
    """Weights and Adam state as float32 tensors; `info` (JSON) in the safetensors header."""
    tensors = {f"model.{name}": getattr(model, name).detach().cpu().contiguous() for name in TENSORS}
    slots = optimizer.state_dict()["state"]
    for index, name in enumerate(TENSORS):
        for slot, value in slots.get(index, {}).items():
            tensors[f"adam.{name}.{slot}"] = torch.as_tensor(value).detach().cpu().contiguous()
    metadata = {"format": STATE_FORMAT, "version": "1", "info": json.dumps(info)}
    write_atomic(path, save_safetensors(tensors, metadata=metadata))


def load_train_state(path: Path, model: torch.nn.Module, optimizer: torch.optim.Adam) -> dict | None:
    """Restore weights and Adam state saved by `save_train_state`; returns its info, or None if no file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DfstError(f"cannot read training state {path}: {exc.strerror}") from None
    try:
        tensors, metadata = load_safetensors(raw), _header_metadata(raw)
        info = json.loads(metadata["info"])
        if metadata.get("format") != STATE_FORMAT:
            raise ValueError(f"format {metadata.get('format')!r}")
    except Exception as exc:  # any damage: the parser's, the header's or the JSON's
        raise DfstError(f"training state {path} is damaged: {' '.join(str(exc).split())} "
                        "(delete it, or --force to start over)") from None
    state = {}
    for index, name in enumerate(TENSORS):
        target = getattr(model, name)
        value = tensors.get(f"model.{name}")
        if value is None or value.shape != target.shape:
            raise DfstError(f"training state {path} does not match the model (tensor {name})")
        with torch.no_grad():
            target.copy_(value)
        slots = {slot: tensors[f"adam.{name}.{slot}"] for slot in ADAM_SLOTS
                 if f"adam.{name}.{slot}" in tensors}
        if slots:
            state[index] = slots
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    return info


def _header_metadata(raw: bytes) -> dict:
    """The `__metadata__` of a safetensors file: an 8-byte little-endian length, then JSON."""
    (length,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + length])["__metadata__"]
