"""DFST checkpoints: a directory with the weights (safetensors) and the model config (JSON).

    run/model/
      model.safetensors   tensors A (k,d,d), B (k,k,d), C (k,5,d), h0 (d,), float32, nothing else
      config.json         {"format": "dfst-checkpoint", "version": 1, "task": "add2", "k": 4, "d": 12,
                           "params": 1020, "provenance": {...}, "dfst_version": "0.1.0",
                           "manifest": "manifest.json"}
                          (+ "reference_agent": the agent JSON, for a model of a user's agent)
      manifest.json       sha256 of the files above (dfst.io.run_guard); every read is checked
                          against it (dfst.io.recorded), and "manifest" above says it must exist

Loading never executes code: only `safetensors` and `json` parse the files, never pickle. Every
damage (missing or truncated file, bad JSON, wrong format, missing or extra tensor, wrong dtype or
shape, NaN or inf) is a one-line DfstError naming the file. `provenance` is free-form JSON that says
where the weights came from, e.g. {"source": "compile", "agent": "add2"} or the training run.
Files are written atomically; config.json is written last, so a directory with a config has weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save as save_safetensors

from dfst import __version__
from dfst.errors import DfstError
from dfst.io.inputs import InputMissing, load_safetensors_bytes, read_bytes, read_json
from dfst.io.outputs import json_bytes, release_output
from dfst.io.recorded import MANIFEST_FILE, check_recorded_files, manifest_marker
from dfst.model import DFST, DFSTConfig, weight_shapes

FORMAT = "dfst-checkpoint"
VERSION = 1
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TENSORS = tuple(weight_shapes(1, 1))  # A, B, C, h0
# What dfst itself puts next to the weights: the extracted agent, and dfst eval's reports.
OWN_FILES = ("agent.json", "eval.json", "eval.png", "first_failure.json")


def save_checkpoint(model: DFST, directory: str | Path, provenance: dict, *,
                    overwrite: bool = False, reference: dict | None = None) -> Path:
    """Write `model` to `directory` (created if missing); refuse a non-empty one unless `overwrite`.
    `reference`: the agent JSON the model imitates when it is not the task's expert (`--agent`)."""
    from dfst.io.run_guard import write_recorded

    config = _config_dict(model.config, provenance)
    if reference is not None:
        config["reference_agent"] = reference
    directory = _prepare_directory(Path(directory), overwrite)
    tensors = {name: getattr(model, name).detach().cpu().contiguous() for name in TENSORS}
    # recorded in DIR/manifest.json, which every reader checks them against (dfst.io.recorded)
    write_recorded(directory, WEIGHTS_FILE, save_safetensors(tensors))
    write_recorded(directory, CONFIG_FILE, json_bytes(config))
    release_output(directory)
    return directory


def load_checkpoint(directory: str | Path, *, expect_task: str | None = None) -> tuple[DFST, dict]:
    """The model saved in `directory` and its config.json (with `provenance`), fully validated."""
    directory = Path(directory)
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise DfstError(f"checkpoint {directory} {what}")
    check_recorded_files(directory)  # all of it as dfst wrote it (its agent.json too), or none of it
    config = _read_config(directory / CONFIG_FILE)
    if expect_task is not None and config["task"] != expect_task:
        raise DfstError(f"checkpoint {directory} is for task {config['task']}, not {expect_task}")
    tensors = _read_tensors(directory / WEIGHTS_FILE)
    _check_tensors(tensors, DFSTConfig(config["k"], config["d"]), directory / WEIGHTS_FILE)
    model = DFST.from_weights(*(tensors[name] for name in TENSORS), task=config["task"])
    return model, config


def claim_checkpoint_dir(directory: str | Path, overwrite: bool = False) -> Path:
    """Refuse, before any work, a directory a checkpoint may not be written to: anything but an empty
    or new directory, or (with `overwrite`) one holding only a dfst checkpoint's files; claimed for
    this process (`dfst.io.outputs.claim_directory`)."""
    from dfst.io.outputs import claim_directory, refuse_foreign

    directory = Path(directory)
    claim_directory(directory, what="checkpoint", own=(CONFIG_FILE, WEIGHTS_FILE, MANIFEST_FILE, *OWN_FILES),
                    is_ours=is_checkpoint, force=overwrite)
    for name in OWN_FILES:  # a user's file under one of those names is not dfst's either
        refuse_foreign(directory / name, "--force would remove it with the old checkpoint")
    return directory


def _prepare_directory(directory: Path, overwrite: bool) -> Path:
    """`claim_checkpoint_dir`, then the directory made and the old checkpoint's files removed."""
    from dfst.io.outputs import make_directory, remove_own_file

    claim_checkpoint_dir(directory, overwrite)
    make_directory(directory, "checkpoint directory")
    for name in (CONFIG_FILE, *OWN_FILES, MANIFEST_FILE):  # no valid checkpoint until the new config
        remove_own_file(directory / name)  # lands; no stale report or record of the old weights
    return directory


def is_checkpoint(directory: Path) -> bool:
    """Does `directory` hold a config.json with dfst's checkpoint marker?"""
    from dfst.io.outputs import holds_format

    return holds_format(directory / CONFIG_FILE, FORMAT)


def _config_dict(config: DFSTConfig, provenance: dict) -> dict:
    if not isinstance(provenance, dict):
        raise DfstError(f"checkpoint provenance must be a dict, got {type(provenance).__name__}")
    try:
        json.dumps(provenance, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DfstError(f"checkpoint provenance is not plain JSON: {exc}") from None
    return {"format": FORMAT, "version": VERSION, "task": config.task, "k": config.k, "d": config.d,
            "params": config.params, "provenance": provenance, "dfst_version": __version__,
            **manifest_marker()}


def _read_config(path: Path) -> dict:
    """config.json, checked: format and version, positive sizes, a consistent parameter count."""
    try:
        data = read_json(path, "checkpoint file")  # a regular file, size and depth caps, no NaN
    except InputMissing:
        raise DfstError(f"checkpoint file {path} is missing") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise DfstError(f"checkpoint file {path} is not a {FORMAT} version {VERSION} config")
    missing = [key for key in ("task", "k", "d", "provenance") if key not in data]
    if missing:
        raise DfstError(f"checkpoint file {path} lacks {', '.join(missing)}")
    if data["task"] is not None and not isinstance(data["task"], str):
        raise DfstError(f"checkpoint file {path}: task must be a string, got {data['task']!r}")
    if not isinstance(data["provenance"], dict):
        raise DfstError(f"checkpoint file {path}: provenance must be a JSON object")
    try:
        sizes = DFSTConfig(data["k"], data["d"], data["task"])
    except DfstError as exc:
        raise DfstError(f"checkpoint file {path}: {exc}") from None
    if data.get("params", sizes.params) != sizes.params:
        raise DfstError(f"checkpoint file {path}: params {data['params']!r} does not match "
                        f"k={sizes.k}, d={sizes.d} ({sizes.params})")
    return data


def _read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of model.safetensors: a regular file under the checkpoint cap, header checked
    before the library allocates anything (a link to /dev/zero is refused, not read)."""
    try:
        raw = read_bytes(path, "checkpoint file", "checkpoint_bytes")
    except InputMissing:
        raise DfstError(f"checkpoint file {path} is missing") from None
    return load_safetensors_bytes(raw, f"checkpoint file {path}")


def _check_tensors(tensors: dict[str, torch.Tensor], config: DFSTConfig, path: Path) -> None:
    """Exactly A, B, C, h0; float32; the shapes that k and d in config.json imply; all finite."""
    missing = [name for name in TENSORS if name not in tensors]
    extra = sorted(set(tensors) - set(TENSORS))
    if missing or extra:
        found = ", ".join(sorted(tensors)) or "none"
        raise DfstError(f"checkpoint file {path} must hold exactly tensors {', '.join(TENSORS)} "
                        f"(found: {found})")
    expected = weight_shapes(config.k, config.d)
    for name in TENSORS:
        tensor = tensors[name]
        if tensor.dtype != torch.float32:
            raise DfstError(f"checkpoint file {path}: tensor {name} is {tensor.dtype}, not torch.float32")
        if tuple(tensor.shape) != expected[name]:
            raise DfstError(f"checkpoint file {path}: tensor {name} has shape {tuple(tensor.shape)}, "
                            f"expected {expected[name]} for k={config.k}, d={config.d}")
        if not bool(torch.isfinite(tensor).all()):
            raise DfstError(f"checkpoint file {path}: tensor {name} has NaN or infinite values")

