"""Every write dfst makes goes through here: what it may replace, and how it writes (docs/safety.md).

Three rules keep a user's files safe:
1. Never through or over a link, a FIFO, a device or a socket: an output path is a regular file or
   nothing, checked with lstat (the link itself, not what it points to).
2. An existing file is replaced only with --force, and --force replaces only a *dfst artifact*: a
   file that carries dfst's marker (`is_dfst_file`). A user's own file of the same name is refused.
3. Files are written atomically: a temporary file beside the target, then a rename, so a crash or a
   kill -9 leaves the old file or the new one, never half of either.
4. One writer per output file: `check_output_file` claims the file for this process until it is
   written (`claim_output`), so a second dfst process writing the same path is refused at its start
   rather than silently replacing the first one's file at its end.
Every refusal is a one-line DfstError naming the path (exit code 2), raised before any work.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from dfst import __version__
from dfst.errors import DfstError
from dfst.io.locks import acquire, release, remove_if_unheld
from dfst.io.raw import file_kind

# Carried inside every non-JSON file dfst writes (PNG/PDF/SVG metadata, a DOT comment).
MARKER = "written by dfst"
_PEEK = 16 * 1024  # markers sit in a file's first or last few KiB


def marker_text() -> str:
    """The marker with the version, for metadata fields and comments."""
    return f"{MARKER} {__version__}"


def plot_metadata(suffix: str) -> dict:
    """matplotlib `savefig(metadata=...)` that puts the marker into a PNG, SVG or PDF."""
    return {"Software": marker_text()} if suffix == ".png" else {"Creator": marker_text()}


def refuse_special(path: Path, what: str = "output path") -> None:
    """A link, FIFO, device, socket or directory where dfst would write a file: a DfstError."""
    kind = file_kind(path)
    if kind not in ("missing", "file"):
        raise DfstError(f"{what} {path} is a {kind}; dfst writes only regular files and never "
                        "follows or replaces links or special files")


def check_parent(path: Path) -> None:
    """The directory that will hold `path` exists and is writable."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        why = "does not exist" if file_kind(parent) == "missing" else "is not a directory"
        raise DfstError(f"cannot write {path}: {parent} {why}")
    if not os.access(parent, os.W_OK):
        raise DfstError(f"cannot write {path}: directory {parent} is not writable")


def check_creatable(path: Path) -> None:
    """`path` (a directory, made with its parents if missing) can be written: its nearest existing
    ancestor is writable."""
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        raise DfstError(f"cannot write {path}: {existing} is not writable")


def writable_directory(path: Path) -> bool:
    """Can this process create files in `path`? (A read-only mount is only seen on writing.)"""
    return path.is_dir() and os.access(path, os.W_OK)


def check_output_file(path: str | Path, *, force: bool = False) -> Path:
    """Refuse, before any work, an output file that cannot or should not be (re)written."""
    path = Path(path)
    refuse_special(path)
    if file_kind(path) == "file":
        if not force:
            raise DfstError(f"output file {path} already exists (pass --force to replace it)")
        if not is_dfst_file(path):
            raise DfstError(f"output file {path} was not written by dfst; --force replaces only "
                            "dfst's own files (choose another path)")
    check_parent(path)
    claim_output(path)
    return path


def refuse_foreign(path: Path, why: str) -> None:
    """A regular file at `path` that dfst did not write: a DfstError saying `why` dfst wanted it."""
    if file_kind(path) == "file" and not is_dfst_file(path):
        raise DfstError(f"{path} was not written by dfst and {why}; dfst never replaces or removes "
                        "a file it did not write (move it away)")


def is_dfst_file(path: Path) -> bool:
    """Does the regular file at `path` carry dfst's marker? Reads at most a few dozen KiB."""
    if file_kind(path) != "file":  # never open a FIFO or a device, not even to look
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(_PEEK)
            f.seek(max(0, os.fstat(f.fileno()).st_size - _PEEK))
            tail = f.read(_PEEK)
    except OSError:
        return False
    if head.startswith(b"PK\x03\x04"):
        return _is_dfst_zip(path)
    if head.lstrip().startswith(b"{"):
        return is_dfst_record(_json_or_none(path))
    return MARKER.encode() in head or MARKER.encode() in tail


def holds_format(path: Path, fmt: str) -> bool:
    """Is `path` a regular file holding a JSON object of dfst's `format` `fmt` (a checkpoint's
    config.json, a report's marker)? Damaged or not JSON: no, so dfst leaves it alone."""
    data = _json_or_none(path) if file_kind(path) == "file" else None
    return isinstance(data, dict) and data.get("format") == fmt


def is_dfst_record(data: object) -> bool:
    """A JSON object dfst wrote: a `format` of dfst's, or `dfst_version`, or a stored result."""
    if not isinstance(data, dict):
        return False
    fmt = data.get("format")
    legacy_result = "system" in data and "hardware" in data  # results from before the marker
    return (isinstance(fmt, str) and fmt.startswith("dfst")) or "dfst_version" in data or legacy_result


def _json_or_none(path: Path) -> object:
    """The JSON in `path`, read with the caps; None where it cannot be read or parsed."""
    from dfst.io.inputs import read_json_file

    try:
        # unverified: a damaged file of dfst's is still dfst's, for --force to replace
        return read_json_file(path, f"cannot read {path}", verify=False)
    except DfstError:
        return None


def _is_dfst_zip(path: Path) -> bool:
    from dfst.io.inputs import parse_json, read_zip_members

    try:
        meta = parse_json(read_zip_members(path, ("meta.json",), "zip", verify=False)["meta.json"],
                          f"{path} meta.json")
    except (DfstError, KeyError):
        return False
    return isinstance(meta, dict) and meta.get("format") == "dfst-pto"


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write all of `data` to `path` or nothing at all; never through or over a link or special file."""
    write_chunks_atomic(path, (data,))


def write_json(path: str | Path, data: object, *, indent: int | None = 1, allow_nan: bool = True) -> None:
    """`data` as `json_bytes` makes it, written as `write_atomic` writes: every JSON file dfst writes
    goes through here."""
    write_atomic(path, json_bytes(data, indent=indent, allow_nan=allow_nan))


def json_bytes(data: object, *, indent: int | None = 1, allow_nan: bool = True) -> bytes:
    """`data` as a JSON document: `indent` spaces, one final newline; `allow_nan=False` refuses NaN and
    infinities, which JSON does not have."""
    return (json.dumps(data, indent=indent, allow_nan=allow_nan) + "\n").encode()


def write_chunks_atomic(path: str | Path, chunks: Iterable[bytes], *, replace: bool = True) -> None:
    """Write the chunks, as they come, to `path` or nothing at all (a temporary file beside it, then
    its name): a stream of gigabytes never sits in memory. With `replace=False` a file that appeared
    at `path` meanwhile is left alone (a hard link never lands on an existing name; where links are
    not supported, a rename)."""
    path = Path(path)
    refuse_special(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                                   prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())  # the rename must not land before the bytes do
        os.chmod(tmp, 0o644)
        if replace:
            os.replace(tmp, path)
        else:
            _place_new(tmp, path)
    except OSError as exc:
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)  # gone already once it has its name
    release_output(path)


def _place_new(tmp: str, path: Path) -> None:
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise DfstError(f"output file {path} appeared while it was written; it was left alone") from None
    except OSError:
        os.replace(tmp, path)


def append_text(path: Path, text: str) -> None:
    """Append to a log dfst keeps (metrics.jsonl); never through a link or into a special file.
    Not atomic by design: a line cut short by a kill is skipped when the log is read back."""
    refuse_special(path)
    try:
        with open(path, "a") as f:
            f.write(text)
    except OSError as exc:
        raise DfstError(f"cannot write {path}: {exc.strerror}") from None


def remove_own_file(path: Path) -> None:
    """Remove a file dfst wrote earlier (a stale report); anything but a regular file is left alone."""
    if file_kind(path) == "file":
        try:
            path.unlink()
        except OSError as exc:
            raise DfstError(f"cannot remove {path}: {exc.strerror}") from None


def is_temp_of(name: str, targets) -> bool:
    """Is `name` a temporary file of an atomic write (`.NAME.xxxx.tmp`) of one of `targets`?"""
    return name.endswith(".tmp") and any(name.startswith(f".{t}.") for t in targets)


def remove_stale_temporaries(directory: Path, names) -> None:
    """Remove what a killed `write_atomic` of one of `names` left in `directory`; nothing else."""
    for path in directory.iterdir():
        if is_temp_of(path.name, names):
            remove_own_file(path)


def remove_own_tree(path: Path) -> None:
    """Remove a directory dfst wrote, whose entries the caller has checked are all dfst's own;
    a link or anything but a real directory is left alone."""
    if file_kind(path) == "directory":
        try:
            shutil.rmtree(path)
        except OSError as exc:
            raise DfstError(f"cannot remove {path}: {exc.strerror}") from None


def make_directory(path: Path, what: str = "output directory") -> Path:
    """Create `path` (and parents) unless it is already a real directory; never through a link."""
    kind = file_kind(path)
    if kind == "symbolic link":
        raise DfstError(f"{what} {path} is a symbolic link; dfst never writes through one "
                        "(give the directory it points to)")
    if kind not in ("missing", "directory"):
        raise DfstError(f"{what} {path} is a {kind}, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DfstError(f"cannot create {what} {path}: {exc.strerror}") from None
    if not os.access(path, os.W_OK):
        raise DfstError(f"{what} {path} is not writable")
    return path


def replace_between(text: str, start_mark: str, end_mark: str, block: str, where: str = "the text") -> str:
    """`text` with everything strictly between the two markers replaced by a newline and `block`."""
    start, end = text.find(start_mark), text.find(end_mark)
    if start < 0 or end < start:
        raise DfstError(f"{where} has no {start_mark} ... {end_mark} block")
    return text[: start + len(start_mark)] + "\n" + block + text[end:]


def check_rewritable(path: str | Path, start_mark: str, end_mark: str) -> None:
    """Refuse, before any work, a file `rewrite_between` would refuse (no marked block, not a file)."""
    _rewritten(Path(path), start_mark, end_mark, "")


def rewrite_between(path: str | Path, start_mark: str, end_mark: str, block: str) -> None:
    """Replace the marked block of a file (a README's generated table); nothing else changes."""
    write_atomic(Path(path), _rewritten(Path(path), start_mark, end_mark, block).encode())


def _rewritten(path: Path, start_mark: str, end_mark: str, block: str) -> str:
    """The text of the file at `path` (a regular file, size-capped) with its marked block replaced."""
    from dfst.io.inputs import read_text

    refuse_special(path, "file to rewrite")
    text = read_text(path, "file to rewrite", "text_bytes")
    return replace_between(text, start_mark, end_mark, block, str(path))


# ----------------------------------------------------------------------------- one writer per file

_CLAIMS: dict[str, tuple[Path, int]] = {}  # output path -> (its lock file, the fd holding it)
STALE_CLAIM_SECONDS = 60  # a lock file this old and unlocked was left by a holder that died


def claim_output(path: str | Path) -> None:
    """Hold `path` for this process until it is written or the process ends; another process
    holding it is a DfstError naming it. The lock sits in a per-user directory under the system's
    temporary directory, so no lock file ever lands among the user's own files."""
    key = _claim_key(Path(path))
    if key not in _CLAIMS:
        lock = claim_lock_path(path)
        _CLAIMS[key] = (lock, acquire(lock, f"output {path}"))


def claim_directory(out: str | Path, *, what: str, own: tuple[str, ...], is_ours: Callable[[Path], bool],
                    force: bool) -> Path:
    """Claim `out` for writing a dfst `what` (a checkpoint, a report) into it, in place of what is there:
    `check_directory`'s rule, then a `what` of dfst's is replaced only with `force`. The claim
    (`claim_output`) holds until `release_output(out)` or the process ends."""
    out = Path(out)
    claim_output(out)  # a second process writing here is refused, not silently mixed in
    if check_directory(out, what=what, own=own, is_ours=is_ours) and not force:
        raise DfstError(f"{out} already holds a dfst {what} (pass --force to replace it)")
    return out


def check_directory(out: Path, *, what: str, own: tuple[str, ...] | Callable[[str], bool],
                    is_ours: Callable[[Path], bool], keep_foreign: bool = False,
                    leftovers: tuple[str, ...] = ()) -> bool:
    """The one rule of every directory dfst writes into, checked before any work: True when `out`
    holds a `what` of dfst's (`is_ours(out)`), which the caller may replace or resume; False when it
    is missing, empty, or holds only what a killed dfst left (`leftovers`, such as a lock file, and
    temporaries of `own`: the names a `what` writes, a tuple or a test of a name). Refused with a
    one-line DfstError: a file or a link at `out`, a directory holding anything else but no dfst
    `what`, and, unless `keep_foreign` (a training run, which resumes and leaves a user's files beside
    it alone), a `what` of dfst's beside a name it does not write."""
    kind = file_kind(out)
    if kind == "missing":
        return False
    if kind != "directory":
        raise DfstError(f"output path {out} is a {kind}, not a directory (give a new or empty directory)")
    is_own = own if callable(own) else lambda name: name in own or is_temp_of(name, own)
    entries = sorted(p.name for p in out.iterdir())
    foreign = [name for name in entries if not is_own(name)]
    if not is_ours(out):
        found = [name for name in entries
                 if name not in leftovers and not (is_own(name) and name.endswith(".tmp"))]
        if not found:
            return False
        named = (foreign or found)[0]
        raise DfstError(f"output directory {out} is not empty and holds no dfst {what} ({named!r} is in it; "
                        "choose another path)")
    if foreign and not keep_foreign:
        raise DfstError(f"output directory {out} holds {foreign[0]!r}, which no dfst {what} wrote; --force "
                        "replaces only a directory that is all dfst's (choose another path)")
    return True


def claim_lock_path(path: str | Path) -> Path:
    """The lock file that claims `path` (in the per-user lock directory, named by the resolved path)."""
    return _claims_directory() / f"{hashlib.sha256(_claim_key(Path(path)).encode()).hexdigest()[:40]}.lock"


def release_output(path: str | Path) -> None:
    """Let other processes write `path` again (done by every atomic write once the file is in place)."""
    claim = _CLAIMS.pop(_claim_key(Path(path)), None)
    if claim is not None:
        release(*claim)


def _claim_key(path: Path) -> str:
    return os.path.join(os.path.realpath(path.parent if str(path.parent) else "."), path.name)


@functools.cache
def _claims_directory() -> Path:
    """The per-user lock directory, made once per process, with the lock files that dead holders
    left there removed (unlocked: they guard nothing, and would pile up)."""
    directory = Path(tempfile.gettempdir()) / f"dfst-locks-{os.getuid()}"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(directory)
    except OSError as exc:
        raise DfstError(f"cannot create dfst's lock directory {directory}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise DfstError(f"dfst's lock directory {directory} is not a directory of this user's "
                        "(set TMPDIR to another directory)")
    now = time.time()
    for path in directory.glob("*.lock"):
        try:
            old = now - os.lstat(path).st_mtime > STALE_CLAIM_SECONDS  # never one being created now
        except FileNotFoundError:
            continue  # its holder removed it meanwhile
        if old:
            remove_if_unheld(path)
    return directory


@atexit.register
def release_all_outputs() -> None:
    """Free every output this process still claims (at exit, and when a CLI command ends)."""
    for key in list(_CLAIMS):
        release(*_CLAIMS.pop(key))
