"""`dfst score --instances-out FILE`: the exact requests of an instance set, one JSON line each.

The file is the requests `dfst score --cmd` would send, in order (`{"id": 7, "a": "987", "b": "45"}`),
so a model can read it as it would read dfst's pipe, and `sha256sum FILE` is the set's hash. It is
written as it is drawn (`dfst.io.outputs.write_chunks_atomic`: a temporary file beside the target, then
its name), so a set of gigabytes never sits in memory and a crash leaves no half file. An existing
path is never replaced.
"""

from __future__ import annotations

from pathlib import Path

from dfst.errors import DfstError
from dfst.io.outputs import check_parent, file_kind, refuse_special, write_chunks_atomic
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import HeldOut, InstanceSet, is_first, level_stream
from dfst.protocol.ladder import check_lengths, ladder
from dfst.tasks import Task
from dfst.tasks.budget import estimate_hard_set


def write_instances(task: Task, cfg: EvalConfig, path: str | Path,
                    held_out: HeldOut | None = None) -> tuple[str, int]:
    """Write the set of `cfg`'s lengths to `path`, none of `held_out`'s training pairs in it; returns
    its SHA-256 and its number of instances."""
    path = Path(path)
    if cfg.until_fail:
        raise DfstError("--instances-out writes the set of the given --digits; --until-fail's lengths depend "
                        "on the model's answers")
    check_new_file(path)
    check_lengths(task, cfg, lambda n: estimate_hard_set(task, n, cfg.hard))
    instance_set = InstanceSet()
    lines = (request.line for n in ladder(cfg) for request in instance_set.number(
        level_stream(task, n, random=cfg.random, seed=cfg.seed, hard=cfg.hard, whole=is_first(n, cfg),
                     held_out=held_out)))
    write_chunks_atomic(path, lines, replace=False)
    return instance_set.sha256, instance_set.count


def check_new_file(path: Path) -> None:
    """Refuse, before any work, a path that exists (dfst cannot tell a user's JSONL file from its own)."""
    refuse_special(path)
    if file_kind(path) == "file":
        raise DfstError(f"output file {path} already exists (remove it or choose another path)")
    check_parent(path)

