"""Every read of a user's file goes through here: bounded, non-blocking, one-line errors.

(Every bound on what dfst reads lives here and in `dfst.io.raw`, the layer below it that reads
bytes and parses JSON, so that a reviewer checks two files and no reader can skip a check.)

A path on the command line can name anything: a FIFO (reading blocks forever), /dev/zero (never
ends), a 2 GB file, JSON nested 100,000 deep (RecursionError), a zip bomb, a safetensors header
that points past the end of the file. The readers below refuse each of these with a DfstError
naming the file, before any real work or allocation:

- files: regular files only, checked with stat before opening (opening a device can have effects)
  and with fstat after (the path may have changed in between); opened O_NONBLOCK so a FIFO slipped
  in between cannot block; a size cap (dfst.io.limits.CAPS) checked before reading and while reading.
- JSON: UTF-8 only, a depth cap, a cap on the number of arrays and objects (each costs memory far
  beyond its two bytes of text), no NaN or Infinity unless the caller's format holds them.
- zip: member count, stored and deflated members only, no encryption, declared and actual inflated
  size under one budget, an inflation ratio cap, CRC checked.
- safetensors: header length, dtypes, shapes and offsets checked before the library sees a byte.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.limits import (
    CAPS,
    MAX_SAFETENSORS_HEADER,
    MAX_ZIP_MEMBERS,
    MAX_ZIP_RATIO,
    ZIP_RATIO_FLOOR,
    cap,
    human_bytes,
)
from dfst.io.raw import CHUNK, InputMissing, InvalidJson, over_cap, parse_json, read_unverified
from dfst.io.recorded import check_read

__all__ = ["InputMissing", "InvalidJson", "parse_json", "read_bytes", "read_json", "read_json_file",
           "read_json_if_exists", "read_text", "read_zip_members", "zip_members", "check_safetensors_header",
           "load_safetensors_bytes"]


# ---- files -------------------------------------------------------------------------------------

def read_bytes(path: str | Path, what: str, cap_name: str, *, verify: bool = True) -> bytes:
    """All bytes of the regular file `path`, at most cap(cap_name); `what` names it in errors. With
    `verify`, a file of a dfst run or checkpoint must be what dfst wrote (`dfst.io.recorded`);
    `verify=False` is for reads that only decide whether a path is dfst's to replace."""
    data = read_unverified(path, what, cap_name)
    if verify:
        check_read(path, data)
    return data


def read_text(path: str | Path, what: str, cap_name: str) -> str:
    """The file as UTF-8 text, checked as read_bytes."""
    try:
        return read_bytes(path, what, cap_name).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DfstError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


# ---- JSON --------------------------------------------------------------------------------------

def read_json(path: str | Path, what: str, cap_name: str = "json_bytes", *,
              allow_nan: bool = False, verify: bool = True) -> object:
    """The parsed JSON file at `path`, checked as read_bytes and parse_json."""
    return parse_json(read_bytes(path, what, cap_name, verify=verify), f"{what} {path}", allow_nan=allow_nan)


def read_json_if_exists(path: str | Path, what: str, cap_name: str = "json_bytes", *,
                        allow_nan: bool = False, verify: bool = True) -> object | None:
    """read_json, or None when nothing at all exists at `path` (a broken link is an error)."""
    try:
        return read_json(path, what, cap_name, allow_nan=allow_nan, verify=verify)
    except InputMissing:
        return None


def read_json_file(path: str | Path, missing: str, invalid: str | None = None, *,
                   verify: bool = True) -> object:
    """Parsed JSON at `path` (through dfst.io.inputs: a regular file, size and depth caps); a one-line
    DfstError, `missing` if nothing is there, `invalid` (if given) if it is not JSON.

    NaN is accepted: these are reports (eval.json, summary.json) that json.dumps wrote as it is.
    """
    try:
        return read_json(path, "file", allow_nan=True, verify=verify)
    except InputMissing:
        raise DfstError(missing) from None
    except InvalidJson as exc:
        raise DfstError(invalid or str(exc)) from None


# ---- zip ---------------------------------------------------------------------------------------

_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}  # bzip2 and lzma inflate without a bound
_MAX_CENTRAL_DIRECTORY = MAX_ZIP_MEMBERS * 4096  # names, extras and comments of every member


def read_zip_members(path: str | Path, names: tuple[str, ...], what: str, *,
                     verify: bool = True) -> dict[str, bytes]:
    """The members of zip `path` named in `names` that it holds, inflated and checked.

    The file is checked as read_bytes (cap dataset_bytes); all members read share one inflated
    budget, cap dataset_inflated, counted on the bytes actually inflated, not the declared sizes.
    A missing member is left out of the result: the caller knows what it needs.
    """
    return zip_members(read_bytes(path, what, "dataset_bytes", verify=verify), names, what, path)


def zip_members(raw: bytes, names: tuple[str, ...], what: str, path: str | Path) -> dict[str, bytes]:
    """`read_zip_members` on the bytes of a zip already in memory (`path`: where they were read, or
    are to be written: a writer checks its zip with the readers' own checks before writing it)."""
    if len(raw) > cap("dataset_bytes"):
        raise DfstError(over_cap(path, what, len(raw), "dataset_bytes"))
    budget = cap("dataset_inflated")
    members = {}
    try:
        _check_central_directory(raw, path, what)
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            if len(zf.infolist()) > MAX_ZIP_MEMBERS:
                raise DfstError(f"{what} {path} has {len(zf.infolist()):,} members, more than "
                                f"{MAX_ZIP_MEMBERS}")
            for name in (n for n in names if n in zf.NameToInfo):
                members[name] = _read_member(zf, zf.getinfo(name), budget, path, what)
                budget -= len(members[name])  # what the members after it may still inflate to
    except zipfile.BadZipFile as exc:
        if "not a zip file" in str(exc):
            raise DfstError(f"{path} is not a {what} (not a zip file, or truncated)") from None
        raise DfstError(f"{what} {path} is corrupted: {exc}") from None
    except (zlib.error, EOFError, ValueError, NotImplementedError, RuntimeError, OverflowError) as exc:
        raise DfstError(f"{what} {path} is corrupted: {' '.join(str(exc).split())}") from None
    return members


def _check_central_directory(raw: bytes, path: str | Path, what: str) -> None:
    """Bound the central directory before ZipFile builds an object per entry in it.

    A 256 MiB file can list millions of tiny entries (gigabytes of ZipInfo); the end record says
    how large the directory is. _EndRecData is zipfile's own reader of it, zip64 included.
    """
    reader = getattr(zipfile, "_EndRecData", None)
    if reader is None:  # a Python whose zipfile lacks it: the member count check after opening remains
        return
    end = reader(io.BytesIO(raw))
    if end is None:
        raise zipfile.BadZipFile("File is not a zip file")
    size, entries = end[zipfile._ECD_SIZE], end[zipfile._ECD_ENTRIES_TOTAL]
    if entries > MAX_ZIP_MEMBERS or size > _MAX_CENTRAL_DIRECTORY:
        raise DfstError(f"{what} {path} lists {entries:,} members in a {human_bytes(size)} directory, "
                        f"more than {MAX_ZIP_MEMBERS} members")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, path: str | Path,
                 what: str) -> bytes:
    """One member, refused before reading if its header says it is too big, and while reading if
    it inflates past the budget whatever the header says; zipfile checks the CRC at the end."""
    where = f"{what} {path}: member {info.filename}"
    if info.flag_bits & 0x1:
        raise DfstError(f"{where} is encrypted (dfst reads only unencrypted zips)")
    if info.compress_type not in _ZIP_METHODS:
        raise DfstError(f"{where} uses compression method {info.compress_type} (dfst reads stored or "
                        "deflated members)")
    _check_declared(info, budget, where)
    chunks, total = [], 0
    with zf.open(info) as f:
        while chunk := f.read(CHUNK):
            total += len(chunk)
            if total > budget:
                raise DfstError(_inflated_message(where, total, budget))
            chunks.append(chunk)
    if total != info.file_size:  # zipfile stops at the declared size, but not short of it
        raise DfstError(f"{where} is corrupted: it inflates to {total:,} bytes, its header says "
                        f"{info.file_size:,}")
    return b"".join(chunks)


def _check_declared(info: zipfile.ZipInfo, budget: int, where: str) -> None:
    if info.file_size > budget:
        raise DfstError(_inflated_message(where, info.file_size, budget))
    if info.file_size > ZIP_RATIO_FLOOR and info.file_size > MAX_ZIP_RATIO * max(info.compress_size, 1):
        raise DfstError(f"{where} inflates {info.compress_size:,} bytes to {human_bytes(info.file_size)} "
                        f"(more than {MAX_ZIP_RATIO}x: a zip bomb?)")


def _inflated_message(where: str, size: int, budget: int) -> str:
    """A member of `size` bytes (or more) over the `budget` the members before it left: the total
    is what the cap bounds, so that is what the message compares."""
    variable, limit = CAPS["dataset_inflated"][0], cap("dataset_inflated")
    total = limit - budget + size
    return (f"{where} inflates the members read to {human_bytes(total)} or more in all, over the cap of "
            f"{human_bytes(limit)} for all members together (set {variable} to raise it)")


# ---- safetensors -------------------------------------------------------------------------------

# Bytes per element of each dtype the safetensors format names (sub-byte float formats left out).
SAFETENSORS_DTYPES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
                      "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
_MAX_DIM = 1 << 62  # torch sizes are int64


def check_safetensors_header(raw: bytes, what: str) -> dict:
    """The parsed header of a safetensors file, every entry checked against the bytes after it.

    Layout: an 8-byte little-endian header length N, N bytes of JSON, then the data section.
    `what` names the file (with its path) in the message.
    """
    if len(raw) < 8:
        raise _bad_safetensors(what, f"{len(raw)} bytes, shorter than the 8-byte header length")
    length = int.from_bytes(raw[:8], "little")
    if length > MAX_SAFETENSORS_HEADER or 8 + length > len(raw):
        raise _bad_safetensors(what, f"header length {length:,} in a {len(raw):,}-byte file "
                                     f"(at most {MAX_SAFETENSORS_HEADER:,})")
    try:
        header = parse_json(raw[8:8 + length], "header")
    except InvalidJson as exc:
        raise _bad_safetensors(what, str(exc)) from None
    if not isinstance(header, dict):
        raise _bad_safetensors(what, "the header is not a JSON object")
    data_size = len(raw) - 8 - length
    for name, entry in header.items():
        problem = _metadata_problem(entry) if name == "__metadata__" else _entry_problem(entry, data_size)
        if problem:
            raise _bad_safetensors(what, f"{name!r} {problem}")
    return header


def _metadata_problem(entry: object) -> str | None:
    if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
        return "is not an object of strings"
    return None


def _entry_problem(entry: object, data_size: int) -> str | None:
    """What is wrong with one tensor entry of the header, or None."""
    if not isinstance(entry, dict) or entry.get("dtype") not in SAFETENSORS_DTYPES:
        return "has no known dtype"
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if not isinstance(shape, list) or not all(_is_count(n, _MAX_DIM) for n in shape):
        return f"has shape {shape!r}, not a list of sizes"
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(n, data_size) for n in offsets)
            and offsets[0] <= offsets[1]):
        return f"has data_offsets {offsets!r}, not [begin, end] within the {data_size:,}-byte data"
    elements = _elements(shape, data_size)
    if elements is None:
        return f"has shape {shape!r}, more elements than the file holds bytes"
    if elements * SAFETENSORS_DTYPES[entry["dtype"]] != offsets[1] - offsets[0]:
        return f"has shape {shape!r} of {entry['dtype']}, which does not fill data_offsets {offsets!r}"
    return None


def _elements(shape: list[int], bound: int) -> int | None:
    """The product of `shape`, or None once it passes `bound` (a product of huge sizes never
    gets computed in full)."""
    if 0 in shape:
        return 0
    elements = 1
    for n in shape:
        elements *= n
        if elements > bound:
            return None
    return elements


def _is_count(n: object, bound: int) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= bound


def _bad_safetensors(what: str, detail: str) -> DfstError:
    return DfstError(f"{what} is damaged or not safetensors: {detail}")


# What a damaged file can still raise inside the library (its parser, then torch.frombuffer).
_SAFETENSORS_ERRORS = (AssertionError, AttributeError, KeyError, RuntimeError, TypeError, ValueError,
                       OverflowError)


def load_safetensors_bytes(raw: bytes, what: str) -> dict:
    """{name: torch.Tensor} of a safetensors file, its header checked first."""
    # Imported here: the JSON readers must not pull in torch (the CLI starts faster without it).
    from safetensors import SafetensorError
    from safetensors.torch import load

    check_safetensors_header(raw, what)
    try:
        return load(raw)
    except (SafetensorError, *_SAFETENSORS_ERRORS) as exc:
        raise _bad_safetensors(what, " ".join(str(exc).split())) from None
