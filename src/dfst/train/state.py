"""The resumable training state: weights and Adam moments in one safetensors file.

Nothing is pickled: the tensors go through safetensors, and a JSON `info` entry in the header holds
the iteration, seconds, last loss and evaluation. Loading checks every tensor against the model
before any is restored, so a damaged file is a one-line error and never a half-restored run.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save as save_safetensors

from dfst.errors import DfstError
from dfst.io.inputs import (
    InputMissing,
    check_safetensors_header,
    load_safetensors_bytes,
    parse_json,
    read_bytes,
)
from dfst.io.outputs import write_atomic
from dfst.model.checkpoint import TENSORS

STATE_FORMAT = "dfst-train-state"
ADAM_SLOTS = ("step", "exp_avg", "exp_avg_sq")  # torch.optim.Adam's per-parameter state


def save_train_state(path: Path, model: torch.nn.Module, optimizer: torch.optim.Adam, info: dict) -> None:
    """Weights and Adam state as float32 tensors; `info` (JSON) in the safetensors header."""
    write_atomic(path, train_state_bytes(model, optimizer, info))


def train_state_bytes(model: torch.nn.Module, optimizer: torch.optim.Adam, info: dict) -> bytes:
    """The safetensors bytes `save_train_state` writes."""
    tensors = {f"model.{name}": getattr(model, name).detach().cpu().contiguous() for name in TENSORS}
    slots = optimizer.state_dict()["state"]
    for index, name in enumerate(TENSORS):
        for slot, value in slots.get(index, {}).items():
            tensors[f"adam.{name}.{slot}"] = torch.as_tensor(value).detach().cpu().contiguous()
    metadata = {"format": STATE_FORMAT, "version": "1", "info": json.dumps(info)}
    return save_safetensors(tensors, metadata=metadata)


def load_train_state(path: Path, model: torch.nn.Module, optimizer: torch.optim.Adam) -> dict | None:
    """Restore weights and Adam state saved by `save_train_state`; returns its info, or None if no file."""
    try:
        raw = read_bytes(path, "training state", "checkpoint_bytes")
    except InputMissing:
        return None
    what = f"training state {path}"
    try:
        metadata = _header_metadata(raw, what)  # checked before any tensor is made
        tensors = load_safetensors_bytes(raw, what)
        if metadata.get("format") != STATE_FORMAT:
            raise DfstError(f"{what} is damaged: format {metadata.get('format')!r}, not {STATE_FORMAT!r}")
        info = parse_json(metadata.get("info", ""), f"{what}: its info")
        if not isinstance(info, dict):
            raise DfstError(f"{what} is damaged: its info is not a JSON object")
        _check_state_tensors(tensors, model, what)
    except DfstError as exc:
        raise DfstError(f"{exc} (delete it, or --force to start over)") from None
    state = {}
    for index, name in enumerate(TENSORS):
        target = getattr(model, name)
        value = tensors[f"model.{name}"]
        with torch.no_grad():
            target.copy_(value)
        slots = {slot: tensors[f"adam.{name}.{slot}"] for slot in ADAM_SLOTS
                 if f"adam.{name}.{slot}" in tensors}
        if slots:
            state[index] = slots
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    return info


def _header_metadata(raw: bytes, what: str) -> dict:
    """The `__metadata__` of a safetensors file (strings only), its whole header checked first."""
    metadata = check_safetensors_header(raw, what).get("__metadata__")
    if metadata is None:
        raise DfstError(f"{what} is damaged: its header has no __metadata__")
    return metadata


def _check_state_tensors(tensors: dict, model: torch.nn.Module, what: str) -> None:
    """Each weight float32 of its parameter's shape, and its Adam slots all there (or none, before
    the first step) with the same shape and a scalar step, so that restoring cannot fail half-way
    and the next optimiser step cannot crash."""
    for name in TENSORS:
        shape = tuple(getattr(model, name).shape)
        _check_state_tensor(tensors.get(f"model.{name}"), shape, f"model.{name}", what)
        slots = {f"adam.{name}.{slot}": () if slot == "step" else shape for slot in ADAM_SLOTS}
        present = [key for key in slots if key in tensors]
        if present and len(present) != len(slots):
            raise DfstError(f"{what} is damaged: it holds only part of the Adam state of {name}")
        for key in present:
            _check_state_tensor(tensors[key], slots[key], key, what)


def _check_state_tensor(value: torch.Tensor | None, shape: tuple, key: str, what: str) -> None:
    if value is None or tuple(value.shape) != shape or value.dtype != torch.float32:
        raise DfstError(f"{what} does not match the model (tensor {key})")
