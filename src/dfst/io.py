"""Safe file output: write to a temporary file beside the target, then rename.

A failure part-way (full disk, interrupted run) never leaves a truncated file, and an existing file
is only replaced when the caller says so.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from dfst.errors import DfstError


def check_writable(path: str | Path, *, overwrite: bool = False) -> Path:
    """Fail early, before any work, if `path` cannot or should not be written."""
    path = Path(path)
    if path.is_dir():
        raise DfstError(f"output path {path} is a directory")
    if path.exists() and not overwrite:
        raise DfstError(f"output file {path} already exists (pass --force to replace it)")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise DfstError(f"cannot write {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise DfstError(f"cannot write {path}: directory {parent} is not writable")
    return path


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write all of `data` to `path` or nothing at all."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                                   prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None


def read_json_file(path: str | Path, missing: str, invalid: str | None = None) -> object:
    """Parsed JSON at `path`; a one-line DfstError, `missing` or `invalid`, if absent or not JSON."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except OSError:
        raise DfstError(missing) from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DfstError(invalid or f"{path} is not valid JSON") from None


def replace_between(text: str, start_mark: str, end_mark: str, block: str, where: str = "the text") -> str:
    """`text` with everything strictly between the two markers replaced by a newline and `block`."""
    start, end = text.find(start_mark), text.find(end_mark)
    if start < 0 or end < start:
        raise DfstError(f"{where} has no {start_mark} ... {end_mark} block")
    return text[: start + len(start_mark)] + "\n" + block + text[end:]


def rewrite_between(path: str | Path, start_mark: str, end_mark: str, block: str) -> None:
    """Replace the marked block of a file (a README's generated table); nothing else changes."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise DfstError(f"cannot read {path}: {exc.strerror}") from None
    write_atomic(path, replace_between(text, start_mark, end_mark, block, str(path)).encode())
