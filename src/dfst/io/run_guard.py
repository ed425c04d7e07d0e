"""What keeps a run directory whole: one writer at a time, and a manifest of what dfst wrote.

Lock. A writer holds DIR/.dfst.lock (`dfst.io.locks`) for its whole life; the file names the holder
(pid, host, command) so a second writer can say who is in the way.

Manifest. DIR/manifest.json lists the sha256 and size of every file dfst wrote there. A file is
replaced in two steps so that a kill at any moment leaves a manifest that accepts what is on disk:
first the manifest accepts the old content or the new one, then the file is renamed into place,
then the manifest keeps only the new one. `check_manifest` finds a file that was changed, truncated
or removed since (never "finished" on a damaged run).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.inputs import read_json_file
from dfst.io.locks import acquire, release
from dfst.io.outputs import file_kind, make_directory, write_atomic, write_json
from dfst.io.recorded import MANIFEST_FILE, MANIFEST_FORMAT, accepts

LOCK_FILE = ".dfst.lock"
FORCE_HINT = "; use --force to start over"  # ends every "changed since dfst wrote it" message


# ----------------------------------------------------------------------------- the lock


@contextmanager
def run_lock(directory: str | Path, command: str) -> Iterator[Path]:
    """Hold DIR/.dfst.lock (DIR created if missing) for the duration; a second holder is a DfstError."""
    directory = Path(directory)
    make_directory(directory)
    path = directory / LOCK_FILE
    fd = acquire(path, str(directory), command)
    try:
        yield directory
    finally:
        release(path, fd)


# ----------------------------------------------------------------------------- the manifest


def file_entry(path: Path) -> dict:
    """{"sha256", "size"} of a regular file, read in chunks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return {"sha256": digest.hexdigest(), "size": size}


def read_manifest(directory: Path) -> dict | None:
    """The manifest's files ({relative path: entry}), or None for a run written before manifests."""
    path = directory / MANIFEST_FILE
    if file_kind(path) == "missing":
        return None
    data = read_json_file(path, f"cannot read {path}", verify=False)  # (it lists itself nowhere)
    if not (isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT
            and isinstance(data.get("files"), dict)):
        raise DfstError(f"{path} is not a dfst run manifest" + FORCE_HINT)
    return data["files"]


def _write_manifest(directory: Path, files: dict) -> None:
    body = {"format": MANIFEST_FORMAT, "version": 1, "files": dict(sorted(files.items()))}
    write_json(directory / MANIFEST_FILE, body)


def write_recorded(directory: Path, name: str, data: bytes) -> None:
    """Write DIR/name atomically and record it; a kill at any point leaves the two consistent (the
    first file written, a run's config.json, is never on disk without a manifest beside it)."""
    files = read_manifest(directory) or {}
    new = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    # accept the old file (None: none yet) or the new one while the rename is pending
    old = files.get(name) or (file_entry(directory / name) if file_kind(directory / name) == "file" else None)
    _write_manifest(directory, files | {name: new | {"previous": old}})
    write_atomic(directory / name, data)
    _write_manifest(directory, files | {name: new})


def record_paths(directory: Path, *names: str) -> None:
    """Record DIR/name for each name (a file, or a checkpoint directory: every file under it) that
    dfst has just written, replacing their old entries."""
    files = {k: v for k, v in (read_manifest(directory) or {}).items()
             if not any(k == name or k.startswith(f"{name}/") for name in names)}
    for name in names:
        root = directory / name
        paths = sorted(root.rglob("*")) if file_kind(root) == "directory" else [root]
        for path in paths:
            temporary = path.name.startswith(".") and path.name.endswith(".tmp")
            # a checkpoint's own manifest is not listed: it changes whenever `dfst eval` records its
            # report there, and every file it lists is listed here too
            if file_kind(path) == "file" and not temporary and path.name != MANIFEST_FILE:
                files[path.relative_to(directory).as_posix()] = file_entry(path)
    _write_manifest(directory, files)


def check_manifest(directory: Path, names: Iterable[str] | None = None) -> None:
    """Every recorded file (or those under `names`) is what dfst wrote; else a one-line DfstError."""
    files = read_manifest(directory) or {}
    wanted = None if names is None else tuple(names)
    for rel, entry in files.items():
        if wanted is None or rel.split("/")[0] in wanted:
            _check_entry(directory, rel, entry)


def _check_entry(directory: Path, rel: str, entry: dict) -> None:
    path = directory / rel
    if file_kind(path) != "file":
        if "previous" in entry and entry["previous"] is None:
            return  # a first write cut short before its rename: nothing was there yet
        raise DfstError(f"{path} has changed since dfst wrote it (it is gone or not a regular file)"
                        + FORCE_HINT)
    found = file_entry(path)
    if not accepts(entry, found["sha256"]):
        raise DfstError(f"{path} has changed since dfst wrote it (sha256 mismatch: {found['size']:,} bytes, "
                        f"dfst wrote {entry.get('size', 0):,})" + FORCE_HINT)
