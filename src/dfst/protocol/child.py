"""A model in any language: a command that answers JSON lines on its stdin with JSON lines on stdout.

dfst starts the command once (through /bin/sh, in a session and process group of its own) and writes
one request a line, `{"id": 7, "a": "987", "b": "45"}`; the command writes one reply a line,
`{"id": 7, "answer": "1032"}`, flushing after each. Replies may come in any order. Requests are
pipelined: up to WINDOW requests (and WINDOW_BYTES of them) wait for replies at once, so the command
is never idle and dfst's memory stays flat however many pairs a length has.

One thread, one `selectors` loop over the three pipes, all non-blocking: a command that stops
reading cannot block dfst's writes, so every fault ends in a one-line DfstError: the command exits,
closes its output, goes `timeout` seconds without reading or answering, answers an id that was not
asked, writes a line that is not a reply, or one longer than the reply cap. Whatever happens, `close`
kills the command's whole process group (a shell and what it started) and reaps it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Iterator

from dfst.errors import DfstError
from dfst.protocol.instances import Request
from dfst.protocol.replies import parse_reply

WINDOW = 1024            # requests waiting for a reply at once
WINDOW_BYTES = 16 << 20  # ... and their bytes
READ_CHUNK = 1 << 20
STDERR_TAIL = 4096       # bytes of the command's stderr kept for an error message
GRACE = 1.0              # seconds the command has to exit after its input closes, before it is killed


def default_reply_cap(request_bytes: int) -> int:
    """A reply may be 1 MiB plus four times the longest request (a product has len a + len b digits)."""
    return (1 << 20) + 4 * request_bytes


class CommandModel:
    """A running command that answers requests (a context manager: leaving it kills the command)."""

    def __init__(self, command: str, *, timeout: float = 60.0, max_reply: int | None = None) -> None:
        if not command.strip():
            raise DfstError("--cmd is empty: give the command that answers the requests")
        if not timeout > 0:
            raise DfstError(f"the timeout must be a positive number of seconds, got {timeout}")
        self.command, self.timeout, self.max_reply = command, timeout, max_reply
        self.proc: subprocess.Popen | None = None
        self.stderr_tail = b""
        self.replies = 0

    def __enter__(self) -> CommandModel:
        try:
            self.proc = subprocess.Popen(self.command, shell=True, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True)
        except OSError as exc:
            raise DfstError(f"cannot start the command {self.command!r}: {exc.strerror}") from None
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            os.set_blocking(pipe.fileno(), False)
        self._out = bytearray()  # stdout bytes of an unfinished line
        return self

    def __exit__(self, *exc_info) -> None:
        self.close(graceful=exc_info[0] is None)

    def answer(self, requests: Iterator[Request]) -> Iterator[tuple[Request, str | None]]:
        """Send every request, pipelined; yield each with its reply as replies arrive."""
        pending: dict[int, Request] = {}
        sending: deque[memoryview] = deque()
        source, exhausted, waiting_bytes, longest = iter(requests), False, 0, 0
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ, "stdout")
            sel.register(self.proc.stderr, selectors.EVENT_READ, "stderr")
            progress = time.monotonic()
            while True:
                while not exhausted and len(pending) < WINDOW and waiting_bytes < WINDOW_BYTES:
                    request = next(source, None)
                    if request is None:
                        exhausted = True
                        break
                    pending[request.id] = request
                    sending.append(memoryview(request.line))
                    waiting_bytes += len(request.line)
                    longest = max(longest, len(request.line))
                if not pending:
                    return
                self._watch_stdin(sel, bool(sending))
                for key, _ in sel.select(timeout=0.2):
                    if key.data == "stdin":
                        self._write(sending)
                        progress = time.monotonic()
                    elif key.data == "stderr":
                        self._read_stderr(sel)
                    else:
                        for request_id, answer in self._read_replies(pending, longest):
                            request = pending.pop(request_id)
                            waiting_bytes -= len(request.line)
                            progress = time.monotonic()
                            yield request, answer
                if time.monotonic() - progress > self.timeout:
                    self._fail(f"the command gave no reply for {self.timeout:g} s with {len(pending)} "
                               f"request(s) waiting (first id {min(pending)}): it hangs, or does not flush "
                               "its output after each reply")

    def _watch_stdin(self, sel: selectors.BaseSelector, wanted: bool) -> None:
        registered = _registered(sel, "stdin")
        if wanted and not registered:
            sel.register(self.proc.stdin, selectors.EVENT_WRITE, "stdin")
        elif registered and not wanted:
            sel.unregister(self.proc.stdin)

    def _write(self, sending: deque[memoryview]) -> None:
        try:
            written = os.write(self.proc.stdin.fileno(), sending[0][:1 << 16])
        except BlockingIOError:
            return
        except BrokenPipeError:
            self._fail("the command stopped reading its input", died=True)
        sending[0] = sending[0][written:]
        if not len(sending[0]):
            sending.popleft()

    def _read_stderr(self, sel: selectors.BaseSelector) -> None:
        chunk = _read(self.proc.stderr)
        if chunk == b"":
            sel.unregister(self.proc.stderr)  # closed; stdout tells whether the command is gone
        elif chunk:
            self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL:]

    def _read_replies(self, pending: dict[int, Request], longest: int) -> Iterator[tuple[int, str | None]]:
        chunk = _read(self.proc.stdout)
        if chunk == b"":
            self._fail(f"the command closed its output with {len(pending)} request(s) unanswered", died=True)
        self._out += chunk or b""
        *lines, rest = self._out.split(b"\n")
        cap = self.max_reply or default_reply_cap(longest)
        if len(rest) > cap:
            self._fail(f"reply {self.replies + 1} of the command is over the reply cap of {cap:,} bytes "
                       "(--max-reply) and has no end of line yet")
        self._out = bytearray(rest)
        for line in lines:
            if not line.strip():
                continue
            if len(line) > cap:
                self._fail(f"reply {self.replies + 1} of the command is {len(line):,} bytes, over the reply "
                           f"cap of {cap:,} bytes (--max-reply)")
            request_id, answer = parse_reply(bytes(line), f"reply {self.replies + 1} of the command")
            if request_id not in pending:
                self._fail(f"the command answered id {request_id}, which is not waiting for an answer "
                           "(never asked, or answered already)")
            self.replies += 1
            yield request_id, answer

    def _fail(self, message: str, *, died: bool = False) -> None:
        """Raise the one-line error, with the exit status and the last stderr line when there are any."""
        if died:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=GRACE)
            self._check_leftover()
        status = self.proc.poll()
        if status is not None:
            message += f"; it {_exit_words(status)}"
        last = _last_line(self.stderr_tail + (_read(self.proc.stderr) or b""))
        if last:
            message += f"; its stderr ends: {last}"
        raise DfstError(message)

    def _check_leftover(self) -> None:
        """A command that printed something else and quit: say so rather than that it quit."""
        rest = bytes(self._out)
        while len(rest) < READ_CHUNK and (chunk := _read(self.proc.stdout)):
            rest += chunk
        for number, line in enumerate(rest.split(b"\n"), start=self.replies + 1):
            if line.strip():
                parse_reply(line, f"reply {number} of the command")

    def close(self, graceful: bool = True) -> None:
        """End the command: close its input, give it GRACE seconds when all went well, then kill its
        process group (whatever it started too) and reap it."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        with contextlib.suppress(OSError):  # a broken pipe: the command is gone already
            proc.stdin.close()
        if graceful:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=GRACE)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # the group outlives its leader when a child lingers
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _registered(sel: selectors.BaseSelector, name: str) -> bool:
    return any(key.data == name for key in sel.get_map().values())


def _read(pipe) -> bytes | None:
    """What the pipe holds now (b"" at its end, None when nothing is there yet)."""
    try:
        return os.read(pipe.fileno(), READ_CHUNK)
    except BlockingIOError:
        return None
    except (OSError, ValueError):
        return b""


def _exit_words(status: int) -> str:
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with code {status}"


def _last_line(tail: bytes) -> str:
    lines = [line.strip() for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
