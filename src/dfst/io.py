"""Older home of dfst's file helpers: reads of JSON files, and the write side re-exported from
dfst.outputs (which owns every write) for the modules that still import it from here.
"""

from __future__ import annotations

from pathlib import Path

from dfst.errors import DfstError
from dfst.outputs import (  # noqa: F401  (the write side lives in dfst.outputs)
    check_output_file,
    replace_between,
    rewrite_between,
    write_atomic,
)


def check_writable(path: str | Path, *, overwrite: bool = False) -> Path:
    """Fail early, before any work, if `path` cannot or should not be written (dfst.outputs' rules)."""
    return check_output_file(path, force=overwrite)


def read_json_file(path: str | Path, missing: str, invalid: str | None = None) -> object:
    """Parsed JSON at `path` (through dfst.inputs: a regular file, size and depth caps); a one-line
    DfstError, `missing` if nothing is there, `invalid` (if given) if it is not JSON.

    NaN is accepted: these are reports (eval.json, summary.json) that json.dumps wrote as it is.
    """
    from dfst.inputs import InputMissing, InvalidJson, read_json

    try:
        return read_json(path, "file", allow_nan=True)
    except InputMissing:
        raise DfstError(missing) from None
    except InvalidJson as exc:
        raise DfstError(invalid or str(exc)) from None
