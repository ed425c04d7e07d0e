"""Answers computed elsewhere: a JSON Lines file of replies, `{"id": 7, "answer": "1032"}`, any order.

`dfst score TASK --instances-out FILE` writes the requests; run them through a model anywhere (a GPU
cluster, another language) and give its replies back with `--answers`. The file is read twice and never
held: a first pass checks every line and notes where each id's line starts; scoring then reads each
answer at its offset. Memory is a few dozen bytes per id, whatever the answers' lengths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.raw import InputMissing, check_regular
from dfst.protocol.instances import Request
from dfst.protocol.replies import parse_reply


class AnswersFile:
    """The replies of one answers file, by id (a context manager: it keeps the file open)."""

    def __init__(self, path: str | Path, max_line: int) -> None:
        self.path, self.max_line = Path(path), max_line
        try:
            check_regular(self.path, "answers file")  # never a FIFO or a device
        except InputMissing:
            raise DfstError(f"answers file {self.path} does not exist") from None
        self.offsets: dict[int, int] = {}
        self.used: set[int] = set()

    def __enter__(self) -> AnswersFile:
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115 (closed in __exit__)
        except OSError as exc:
            raise DfstError(f"cannot read answers file {self.path}: {exc.strerror}") from None
        self._index()
        return self

    def __exit__(self, *exc_info) -> None:
        self._file.close()

    def _index(self) -> None:
        offset, number = 0, 0
        while line := self._file.readline(self.max_line + 1):
            number += 1
            if len(line) > self.max_line:
                raise DfstError(f"line {number} of {self.path} is over {self.max_line:,} bytes, longer than "
                                "any answer to this instance set")
            if line.strip():
                request_id, _ = parse_reply(line, f"line {number} of {self.path}")
                if request_id in self.offsets:
                    raise DfstError(f"{self.path} answers id {request_id} twice (line {number})")
                self.offsets[request_id] = offset
            offset += len(line)

    def answer(self, requests: Iterator[Request]) -> Iterator[tuple[Request, str | None]]:
        """Each request with its answer from the file; an id the file lacks is a DfstError."""
        for request in requests:
            if request.id not in self.offsets:
                raise DfstError(f"{self.path} has no answer for id {request.id}: were the answers computed "
                                "for this instance set (the same TASK, --digits, --random and --seed)?")
            self._file.seek(self.offsets[request.id])
            self.used.add(request.id)
            yield request, parse_reply(self._file.readline(self.max_line), f"{self.path}")[1]

    def check_all_used(self) -> None:
        """Every answer in the file was for an instance of the set (else it was another set's)."""
        extra = sorted(set(self.offsets) - self.used)
        if extra:
            raise DfstError(f"{self.path} answers {len(extra)} id(s) not in this instance set (first: "
                            f"{extra[0]}): were the answers computed for the same TASK, --digits, "
                            "--random and --seed?")


def file_sha256(path: str | Path, what: str) -> str:
    """The SHA-256 of a regular file, read in chunks (an instance set's hash is its file's)."""
    try:
        check_regular(path, what)
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except InputMissing:
        raise DfstError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise DfstError(f"cannot read {what} {path}: {exc.strerror}") from None
    return digest.hexdigest()
