"""One writer at a time: an exclusive `flock` on a lock file that names its holder.

Stands alone because both `dfst.io.outputs` (a single output file) and `dfst.io.run_guard` (a run
directory) lock, and run_guard builds on outputs.

The kernel drops a flock when its process dies, kill -9 included, so a lock file left behind never
blocks anyone. The holder removes the file when it is done; a writer that locked a file some other
process had just removed notices (the path no longer names its inode) and tries again.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
from pathlib import Path

from dfst.errors import DfstError

_HOLDER_BYTES = 4096  # a lock file holds one short JSON line; never read more of it


def acquire(path: Path, busy: str, command: str | None = None) -> int:
    """An fd holding an exclusive lock on `path` (created if missing) that names this process; if
    another process holds it, a DfstError: `busy` (what is in use) + who holds it."""
    for _ in range(10):  # only a holder removing its file at the same moment makes us go round
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise DfstError(f"cannot lock {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DfstError(f"cannot lock {path}: {exc.strerror}") from None
            raise DfstError(f"{busy} is in use by {holder(path)}; wait for it to finish or stop it") from None
        if _same_file(path, fd):
            _name_holder(fd, command or command_line())
            return fd
        os.close(fd)  # we locked a file its holder had just removed
    raise DfstError(f"cannot lock {path}: it keeps being replaced")


def release(path: Path, fd: int) -> None:
    """Remove the lock file, then drop the lock (still held: nobody can take the file we remove)."""
    Path(path).unlink(missing_ok=True)
    os.close(fd)


def remove_if_unheld(path: Path) -> bool:
    """Remove the lock file at `path` if no process holds it (its holder died: a kill -9 leaves the
    file, never the lock); True if it was removed."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # held: its holder is alive
    stale = _same_file(path, fd)
    release(path, fd) if stale else os.close(fd)
    return stale


def _name_holder(fd: int, command: str) -> None:
    info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command}
    os.ftruncate(fd, 0)
    os.write(fd, (json.dumps(info) + "\n").encode())


def _same_file(path: Path, fd: int) -> bool:
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def holder(path: Path) -> str:
    """'dfst pid 1234 on host (dfst train ...)', as far as the lock file says."""
    try:
        with open(path, "rb") as f:
            info = json.loads(f.read(_HOLDER_BYTES))
        where = "" if info.get("host") == socket.gethostname() else f" on {info.get('host')}"
        return f"dfst pid {int(info['pid'])}{where} ({' '.join(str(info['command']).split())})"
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return "another dfst process"


def command_line() -> str:
    """This process's command line, for a lock file."""
    return " ".join(["dfst", *sys.argv[1:]]) if sys.argv else "dfst"
