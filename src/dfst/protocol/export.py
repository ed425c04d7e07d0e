"""`dfst score --instances-out FILE`: the exact requests of an instance set, one JSON line each.

The file is the requests `dfst score --cmd` would send, in order (`{"id": 7, "a": "987", "b": "45"}`),
so a model can read it as it would read dfst's pipe, and `sha256sum FILE` is the set's hash. It is
written as it is drawn (a temporary file beside the target, then a rename), so a set of gigabytes
never sits in memory and a crash leaves no half file. An existing path is never replaced.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dfst.errors import DfstError
from dfst.outputs import check_parent, file_kind, refuse_special
from dfst.protocol.instances import InstanceSet, level_stream
from dfst.protocol.scorer import ScoreConfig, check_memory
from dfst.tasks import Task


def write_instances(task: Task, cfg: ScoreConfig, path: str | Path) -> tuple[str, int]:
    """Write the set of `cfg`'s lengths to `path`; returns its SHA-256 and its number of instances."""
    path = Path(path)
    if cfg.until_fail:
        raise DfstError("--instances-out writes the set of the given --digits; --until-fail's lengths depend "
                        "on the model's answers")
    check_new_file(path)
    check_memory(task, max(cfg.digits))
    instance_set = InstanceSet()
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as f:
            for n in cfg.ladder:
                stream = level_stream(task, n, random=cfg.random, seed=cfg.seed, hard=cfg.hard)
                for request in instance_set.number(stream):
                    f.write(request.line)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        _place(tmp, path)
    except OSError as exc:
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return instance_set.sha256, instance_set.count


def check_new_file(path: Path) -> None:
    """Refuse, before any work, a path that exists (dfst cannot tell a user's JSONL file from its own)."""
    refuse_special(path)
    if file_kind(path) == "file":
        raise DfstError(f"output file {path} already exists (remove it or choose another path)")
    check_parent(path)


def _temporary(path: Path) -> tuple[int, str]:
    try:
        return tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.",
                                suffix=".tmp")
    except OSError as exc:
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None


def _place(tmp: str, path: Path) -> None:
    """Give the finished file its name, never over a file that appeared meanwhile (a hard link fails
    on an existing name; where links are not supported, a rename)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise DfstError(f"output file {path} appeared while the set was written; it was left alone") from None
    except OSError:
        os.replace(tmp, path)
