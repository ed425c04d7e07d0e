"""The bottom layer of dfst's reads: bytes of a regular file under a size cap, JSON under depth and
size caps, and what kind of thing a path is; one-line DfstErrors naming the file.

`dfst.io.inputs` is what readers call: it adds the check that a file of a run or checkpoint is what
dfst wrote (`dfst.io.recorded`), which itself reads manifests through this module, so that neither
imports the other.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.limits import CAPS, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, cap, human_bytes

CHUNK = 1 << 20
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # the only way a JSON text can hold a lone surrogate
_FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISSOCK, "a socket"))


class InputMissing(DfstError):
    """The path does not exist at all; callers with their own wording for that catch this."""


class InvalidJson(DfstError):
    """The bytes are not JSON dfst accepts (syntax, encoding, depth, size, NaN)."""


# ---- files -------------------------------------------------------------------------------------

def read_unverified(path: str | Path, what: str, cap_name: str) -> bytes:
    """All bytes of the regular file `path`, at most cap(cap_name); `what` names it in errors."""
    size = check_regular(path, what)
    limit = cap(cap_name)
    if size > limit:
        raise DfstError(over_cap(path, what, size, cap_name))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise DfstError(f"cannot read {what} {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb", buffering=0) as f:
        kind = _file_kind(os.fstat(fd).st_mode)  # it may have been swapped for a FIFO since the stat
        if kind:
            raise DfstError(f"{what} {path} is {kind}, not a regular file")
        data = _read_at_most(f, limit + 1, path, what)
    if len(data) > limit:
        raise DfstError(over_cap(path, what, len(data), cap_name) + " (it grew while being read)")
    return data


def check_regular(path: str | Path, what: str) -> int:
    """st_size of `path` if it is a regular file (links followed); a DfstError otherwise."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(path):
            raise DfstError(f"{what} {path} is a symbolic link to {os.readlink(path)}, which does "
                            "not exist") from None
        raise InputMissing(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise DfstError(f"cannot read {what} {path}: {exc.strerror}") from None
    kind = _file_kind(st.st_mode)
    if kind:
        link = f" (a link to {os.readlink(path)})" if os.path.islink(path) else ""
        raise DfstError(f"{what} {path}{link} is {kind}, not a regular file")
    return st.st_size


def _file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is, for the message."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def _read_at_most(f: io.RawIOBase, n: int, path: str | Path, what: str) -> bytes:
    chunks, total = [], 0
    try:
        while total < n:
            chunk = f.read(min(CHUNK, n - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise DfstError(f"cannot read {what} {path}: {exc.strerror}") from None
    return b"".join(chunks)


def over_cap(path: str | Path, what: str, size: int, cap_name: str) -> str:
    variable = CAPS[cap_name][0]
    return (f"{what} {path} is {human_bytes(size)}, over the cap of {human_bytes(cap(cap_name))} "
            f"(set {variable} to raise it)")


def file_kind(path: Path) -> str | None:
    """'missing', 'file', or what else is at `path` (the link itself, never its target)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except NotADirectoryError:
        return "missing"  # a parent is a file: reported by the parent check
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISLNK, "symbolic link"), (stat.S_ISDIR, "directory"),
                       (stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"



# ---- JSON --------------------------------------------------------------------------------------

def parse_json(raw: bytes | str, what: str, *, allow_nan: bool = False) -> object:
    """Parse UTF-8 JSON text; `what` (the file, with its path) starts every error message.

    NaN and Infinity are refused unless `allow_nan` (a run's metrics log holds NaN losses).
    """
    text = _decode(raw, what)
    brackets = text.count("[") + text.count("{")  # an upper bound: brackets inside strings count too
    if brackets > MAX_JSON_CONTAINERS:
        raise InvalidJson(f"{what} holds more than {MAX_JSON_CONTAINERS:,} arrays and objects")
    try:
        data = json.loads(text, parse_constant=None if allow_nan else _refuse_constant)
    except RecursionError:  # the C parser recurses once per level
        raise InvalidJson(f"{what} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, our NaN refusal, ints over 4,300 digits
        raise InvalidJson(f"{what} is not valid JSON: {' '.join(str(exc).split())}") from None
    if isinstance(data, (dict, list, str)):
        _check_tree(data, what, surrogates=_SURROGATE.search(text) is not None)
    return data


def _decode(raw: bytes | str, what: str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidJson(f"{what} is not valid JSON: not UTF-8 (byte {exc.start})") from None


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed here")


def _check_tree(data: object, what: str, surrogates: bool) -> None:
    """Depth at most MAX_JSON_DEPTH, without recursion; with `surrogates`, every string encodable."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_string(node, what)
            continue
        if depth > MAX_JSON_DEPTH:
            raise InvalidJson(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(node, dict):
            stack += [(key, depth) for key in node] if surrogates else ()
            node = node.values()
        for child in node:
            if isinstance(child, (dict, list)) or (surrogates and isinstance(child, str)):
                stack.append((child, depth + 1))


def _check_string(s: str, what: str) -> None:
    """A lone surrogate (from a "\\ud800" escape) parses, then breaks every print and write."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidJson(f"{what} is not valid JSON: a string holds a lone surrogate escape") from None
