"""Every cap dfst puts on what it reads and what it spends, as named constants (docs/safety.md).

A cap protects a user from a tiny input that would otherwise take all the memory, disk or time of
the machine (a zip bomb, /dev/zero given as a file, a billion-digit operand). Each has a default
that no legitimate file of dfst comes near, and an environment variable to raise it:

    DFST_MAX_JSON_BYTES=512M dfst certify ...

Sizes accept a plain byte count or a K/M/G/T suffix (powers of 1024). A bad value is an error
naming the variable, never silently ignored.
"""

from __future__ import annotations

import os
import re

from dfst.errors import DfstError

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(text: str, what: str) -> int:
    """'512M', '2G', '1048576' -> bytes; a one-line DfstError naming `what` otherwise."""
    match = _SIZE.match(str(text))
    if not match:
        raise DfstError(f"{what} {text!r} is not a size (a byte count, or a number with K, M, G or T)")
    value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value < 1:
        raise DfstError(f"{what} {text!r} must be at least 1 byte")
    return value


def _cap(variable: str, default: int) -> int:
    """The default, or the value of environment variable `variable` when it is set."""
    text = os.environ.get(variable)
    return default if text is None else parse_size(text, f"environment variable {variable}")


def cap(name: str) -> int:
    """The cap called `name` (a key of CAPS), read from the environment at the time of the call."""
    variable, default, _ = CAPS[name]
    return _cap(variable, default)


MiB, GiB = 1 << 20, 1 << 30

# name: (environment variable, default, what it bounds). Read through `cap(name)`, so a test or a
# user can raise one for a single command.
CAPS: dict[str, tuple[str, int, str]] = {
    "json_bytes": ("DFST_MAX_JSON_BYTES", 64 * MiB,
                   "one JSON file: agent, config.json, summary.json, eval.json, a result or certificate; "
                   "dfst score --trained-on's pairs"),
    "operand_bytes": ("DFST_MAX_OPERAND_BYTES", 256 * MiB, "an @FILE operand"),
    "dataset_bytes": ("DFST_MAX_DATASET_BYTES", 256 * MiB, "a PTO dataset zip, as stored on disk"),
    "dataset_inflated": ("DFST_MAX_DATASET_INFLATED", 256 * MiB,
                         "a PTO dataset zip, all members decompressed together"),
    "checkpoint_bytes": ("DFST_MAX_CHECKPOINT_BYTES", 1 * GiB,
                         "model.safetensors or train_state.safetensors"),
    "metrics_bytes": ("DFST_MAX_METRICS_BYTES", 256 * MiB, "a run's metrics.jsonl"),
    "text_bytes": ("DFST_MAX_TEXT_BYTES", 64 * MiB, "a README whose generated table dfst rewrites"),
}

# Not sizes: limits of structure, fixed because no file dfst writes comes near them.
MAX_JSON_DEPTH = 64  # nesting of arrays and objects; dfst's own files nest 6 deep at most
# Arrays and objects in one JSON text: each costs 56+ bytes of memory for 2 bytes of text, so 64 MiB
# of "{}," would take 1.4 GiB. A 200,000-rule agent holds 200,000.
MAX_JSON_CONTAINERS = 1 << 21
MAX_ZIP_MEMBERS = 64  # a PTO dataset has 5
# Inflated / stored bytes of one zip member, checked on members over ZIP_RATIO_FLOOR inflated (small
# ones cannot hurt). dfst's own datasets compress 2x to 40x; a zip bomb needs hundreds to ~1000x.
MAX_ZIP_RATIO = 400
ZIP_RATIO_FLOOR = 1 * MiB
MAX_SAFETENSORS_HEADER = 1 * MiB  # the JSON header of a safetensors file; dfst's are a few KiB

# The share of the machine's RAM that one rollout may plan to use (dfst eval/solve --max-memory).
MEMORY_FRACTION = 0.5


def machine_memory() -> int:
    """Physical RAM in bytes (the cgroup limit when one is lower), 8 GiB when neither can be read."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 * GiB
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read(64).strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    return total


def default_max_memory() -> int:
    """--max-memory when none is given: DFST_MAX_MEMORY, else MEMORY_FRACTION of the machine's RAM."""
    text = os.environ.get("DFST_MAX_MEMORY")
    if text is not None:
        return parse_size(text, "environment variable DFST_MAX_MEMORY")
    return int(machine_memory() * MEMORY_FRACTION)


# Caps on work, not on sizes: how many training runs one command plans, how many processes it starts
# side by side, how many steps of the reference simulator it replays. Each is checked on a count
# made before the first unit of work (`check_work`) and raised with its environment variable, a plain
# count (DFST_MAX_CELLS=50000). name: (environment variable, default, unit, what it bounds); the
# default None is WORKERS_PER_CPU times the machine's CPUs.
WORKERS_PER_CPU = 4
WORK_CAPS: dict[str, tuple[str, int | None, str, str]] = {
    "cells": ("DFST_MAX_CELLS", 10_000, "training runs",
              "training runs (task x grid point x seed) of one dfst sweep or dfst reproduce, or the "
              "cells of dfst bench learnability, each minutes of CPU"),
    "workers": ("DFST_MAX_WORKERS", None, "processes",
                f"processes one --workers starts on this machine ({WORKERS_PER_CPU} per CPU)"),
    "replay_steps": ("DFST_MAX_REPLAY_STEPS", 10**9, "simulator steps",
                     "expert steps replayed by the reference simulator (about 3 µs each), on the task's "
                     "step bound: dfst coverage, and the cover samplers of dfst data and dfst train"),
}


def work_cap(name: str) -> int:
    """The cap called `name` (a key of WORK_CAPS), read from the environment at the time of the call."""
    variable, default, _, _ = WORK_CAPS[name]
    text = os.environ.get(variable)
    if text is None:
        return default if default is not None else WORKERS_PER_CPU * (os.cpu_count() or 1)
    if not text.strip().isdigit() or int(text) < 1:
        raise DfstError(f"environment variable {variable} {text!r} is not a count >= 1")
    return int(text)


def check_work(name: str, planned: int, what: str) -> int:
    """`planned` units of work (WORK_CAPS[name]), or a one-line DfstError saying that `what` plans
    more than the cap and how to raise it."""
    variable, _, unit, _ = WORK_CAPS[name]
    limit = work_cap(name)
    if planned > limit:
        raise DfstError(f"{what} plans {planned:,} {unit}, over the cap of {limit:,} "
                        f"(set {variable} to raise it)")
    return planned


def human_bytes(n: float) -> str:
    """1536 -> '1.5 KiB', for messages."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"
