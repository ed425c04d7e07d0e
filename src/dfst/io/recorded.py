"""Reading back what dfst wrote: every read is checked against the manifests of dfst's that list it.

A run directory and a checkpoint directory each keep DIR/manifest.json (`dfst.io.run_guard`), the
sha256 of every file dfst wrote there. `dfst.io.inputs.read_bytes`, which every reader of a file goes
through (eval, certify, check-certificate, extract, finetune, replay, report-runs, plot-runs, score,
reproduce, the HTML report), calls `check_read` on the bytes it read, so that no command ever scores
or reports a changed file:

- the manifests looked at are those of the file's directory and of the one above it (a run's
  model/config.json is listed by model/manifest.json and by the run's manifest.json); a file a
  manifest lists must hash to what it lists (or, while a write is pending, to the old content);
- a file a dfst run or checkpoint always records (config.json, model.safetensors, agent.json,
  summary.json, train_state.safetensors) that its directory's manifest does not list is refused:
  the manifest was edited;
- a directory holding a run's or a checkpoint's config.json but no manifest: if that config says dfst
  wrote one ("manifest"), the manifest was lost and nothing is read; otherwise the files came from
  elsewhere (by hand, or a dfst from before manifests) and are read with one warning on stderr;
- a manifest.json that is not a dfst manifest is refused where the directory is a dfst run or
  checkpoint, and ignored elsewhere (another program's file).

`dfst eval`'s eval.json and first_failure.json are recorded where they are written beside a manifest
(a run's model, a checkpoint); what dfst writes but does not record (metrics.jsonl, which grows as a
run goes, and eval.png, which dfst never reads) is read unchecked. Reads that decide whether a path
is dfst's before replacing it (`--force`) pass `verify=False`: a damaged run is still one that
`--force` may start over.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.raw import InputMissing, InvalidJson, file_kind, parse_json, read_unverified

MANIFEST_FILE, MANIFEST_KEY = "manifest.json", "manifest"
MANIFEST_FORMAT = "dfst-run-manifest"
# the formats of the config.json of what keeps a manifest: a training run, a checkpoint
OWNER_FORMATS = {"dfst-train-run": "run", "dfst-checkpoint": "checkpoint"}
ALWAYS_RECORDED = ("config.json", "model.safetensors", "agent.json", "summary.json",
                   "train_state.safetensors")
_warned: set[Path] = set()  # directories already said to be unverifiable, once per process


class NotAsWritten(DfstError):
    """A file of a run or checkpoint is not what dfst wrote, or cannot be checked when it must be."""


def check_read(path: str | Path, data: bytes) -> None:
    """Refuse `data`, just read from `path`, where a manifest of dfst's says otherwise (module doc)."""
    path = Path(path)
    if path.name == MANIFEST_FILE:
        return
    here = path.absolute().parent
    digest, listed, own = None, False, None
    for directory in (here, here.parent):
        files = dfst_manifest(directory)
        if files is None:
            continue
        if directory == here:
            own = files
        entry = files.get(path.absolute().relative_to(directory).as_posix())
        if entry is None:
            if directory == here and path.name in ALWAYS_RECORDED:
                raise NotAsWritten(f"{path}: not listed in {_shown(path, directory)} although dfst always "
                                   "records it (the manifest was changed); dfst reads neither")
            continue
        listed, digest = True, digest or hashlib.sha256(data).hexdigest()
        if not accepts(entry, digest):
            raise NotAsWritten(f"{path}: changed since dfst wrote it (sha256 mismatch with "
                               f"{_shown(path, directory)})")
    if not listed and own is None:  # (the manifest above may list it; it is read once each)
        _check_unrecorded(path, here)


def check_recorded_files(directory: str | Path) -> None:
    """Every file DIR/manifest.json lists is what dfst wrote (read, so checked, by `check_read`): a
    reader of a run or a checkpoint takes it whole or not at all (a changed agent.json beside the
    weights, or summary.json beside the model, is still a changed run). No manifest: the rules of
    `check_read` for DIR/config.json (refused where one was written, else one warning)."""
    directory = Path(directory)
    files = _listed_for(directory.absolute())
    if files is None:
        _check_unrecorded(directory / "config.json", directory.absolute())
        return
    for rel, entry in sorted(files.items()):
        path = directory / rel
        try:
            check_read(path, read_unverified(path, "recorded file", _CAPS.get(path.suffix, "json_bytes")))
        except InputMissing:
            if not (isinstance(entry, dict) and "previous" in entry and entry["previous"] is None):
                raise NotAsWritten(f"{path}: gone since dfst wrote it (listed in "
                                   f"{directory / MANIFEST_FILE})") from None


def _listed_for(directory: Path) -> dict | None:
    """{path under DIR: entry}: DIR's own manifest, else what its run's lists under it (a checkpoint
    of a run written before checkpoints kept their own); None where no manifest lists DIR."""
    own = dfst_manifest(directory)
    if own is not None:
        return own
    prefix = directory.name + "/"
    above = dfst_manifest(directory.parent) or {}
    return {k[len(prefix):]: v for k, v in above.items() if k.startswith(prefix)} or None


_CAPS = {".safetensors": "checkpoint_bytes", ".zip": "dataset_bytes"}  # the rest is JSON


def accepts(entry: object, digest: str) -> bool:
    """The entry's content, or while its replacement is pending, the old one (None: none yet)."""
    if not isinstance(entry, dict):
        return False
    accepted = [entry, entry.get("previous")] if "previous" in entry else [entry]
    return any(isinstance(e, dict) and e.get("sha256") == digest for e in accepted)


def _shown(path: Path, directory: Path) -> str:
    """The manifest's path as the user wrote the file's (relative stays relative)."""
    up = path.parent if directory == path.absolute().parent else path.parent.parent
    return str(up / MANIFEST_FILE)


def dfst_manifest(directory: Path) -> dict | None:
    """The files DIR/manifest.json lists; None where there is none, or another program's beside no
    run or checkpoint of dfst's. A damaged manifest of a dfst run or checkpoint is a NotAsWritten."""
    path = directory / MANIFEST_FILE
    if file_kind(path) == "missing":
        return None
    try:
        data = _read_json(path, "manifest")
    except InvalidJson:
        data = None
    files = data.get("files") if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else None
    if isinstance(files, dict):
        return files
    if owner_of(directory) is None:
        return None  # a user's own manifest.json, beside no run or checkpoint of dfst's
    raise NotAsWritten(f"{path} is damaged (not a dfst manifest), so nothing in {directory} can be checked "
                       "against what dfst wrote; dfst reads none of it")


def owner_of(directory: Path) -> tuple[str, dict] | None:
    """("run" or "checkpoint", its config) when DIR/config.json is one of dfst's, else None."""
    config = directory / "config.json"
    if file_kind(config) != "file":
        return None
    try:
        data = _read_json(config, "config")
    except DfstError:
        return None
    if not isinstance(data, dict) or data.get("format") not in OWNER_FORMATS:
        return None
    return OWNER_FORMATS[data["format"]], data


def _read_json(path: Path, what: str) -> object:
    """A manifest or config as JSON, read as every file is but not checked (it is what checks)."""
    return parse_json(read_unverified(path, what, "json_bytes"), f"{what} {path}")


def _check_unrecorded(path: Path, directory: Path) -> None:
    """No manifest in the file's directory: lost (refused), or never written (one warning)."""
    owner = owner_of(directory)
    if owner is None:
        return
    what, config = owner
    if config.get(MANIFEST_KEY) == MANIFEST_FILE:
        raise NotAsWritten(f"{path.parent / MANIFEST_FILE} is missing: dfst wrote this {what} with one, so "
                           f"{path.name} cannot be checked against what dfst wrote; dfst reads none of it")
    if directory not in _warned:
        _warned.add(directory)
        print(f"dfst: warning: {path.parent} has no {MANIFEST_FILE} (a {what} written elsewhere or by an "
              "older dfst): its files cannot be checked against what dfst wrote", file=sys.stderr)


def manifest_marker() -> dict:
    """What a run's or checkpoint's config.json says so that a lost manifest is noticed."""
    return {MANIFEST_KEY: MANIFEST_FILE}

