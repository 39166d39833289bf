"""Running one command: no shell, the caller's environment passed through untouched (the
CLIs find their own credentials; culprit never reads them), standard output streamed into a
file up to a byte cap, the end of the error output kept, a deadline, and every running child
known so that Ctrl-C can stop them all.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Final, Protocol

#: What a quota or rate refusal prints (gcloud's RESOURCE_EXHAUSTED and "Quota exceeded",
#: HTTP 429, Huawei's API gateway throttling). The same pattern is used by the printed script
#: (``grep -Ei``), so it keeps to what both regex dialects read alike.
QUOTA: Final = (
    r"RESOURCE_EXHAUSTED|quota exceeded|too many requests|rate ?limit|throttl"
    r"|(^|[^0-9])429([^0-9]|$)"
)
_QUOTA: Final = re.compile(QUOTA, re.IGNORECASE | re.MULTILINE)
#: Bytes of a command's error output kept for the record.
STDERR_TAIL: Final = 4096
_CHUNK: Final = 1 << 16
#: Bytes a captured argument (a URL) may take.
CAPTURE_CAP: Final = 1 << 20


def is_quota(stderr: str) -> bool:
    """Whether a failed command's error output says it was refused for quota or rate."""
    return _QUOTA.search(stderr) is not None


@dataclass(frozen=True)
class Outcome:
    """How one run of a command ended."""

    #: Its exit status (negative: killed by that signal), ``None`` when it never started.
    exit_status: int | None
    #: Bytes written to the sink.
    written: int
    #: Standard output went past the cap (the rest was not read; the command was stopped).
    truncated: bool
    #: Stopped at the deadline.
    timed_out: bool
    #: The end of its error output (bytes).
    stderr: bytes
    #: Why it could not start (not found, not executable).
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        return (
            self.error is None and not self.timed_out and (self.exit_status == 0 or self.truncated)
        )


class Children:
    """The commands running now, so an interrupt can stop every one of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopping = threading.Event()

    def add(self, child: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.add(child)
        if self.stopping.is_set():
            _kill(child)

    def discard(self, child: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(child)

    def stop_all(self) -> None:
        """Stop every running command and refuse to start new ones."""
        self.stopping.set()
        with self._lock:
            running = list(self._running)
        for child in running:
            _kill(child)


def _kill(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        child.kill()


def _drain(stream: IO[bytes], keep: bytearray) -> None:
    """Read an error stream to its end, keeping its last :data:`STDERR_TAIL` bytes."""
    for block in iter(lambda: stream.read(_CHUNK), b""):
        keep.extend(block)
        del keep[:-STDERR_TAIL]


class Sink(Protocol):
    """Where standard output goes: ``write`` takes what fits and says how much (less than
    given: the cap is reached and the command is stopped)."""

    def write(self, data: bytes, /) -> int:
        """Store a prefix of ``data``; its length."""
        ...


class Limited:
    """A sink over a binary file taking at most ``cap`` bytes."""

    def __init__(self, handle: IO[bytes], cap: int) -> None:
        self.handle = handle
        self.room = cap

    def write(self, data: bytes, /) -> int:
        taken = data[: max(self.room, 0)]
        self.handle.write(taken)
        self.room -= len(taken)
        return len(taken)


def run(argv: Sequence[str], sink: Sink, *, timeout: float, children: Children) -> Outcome:
    """Run ``argv`` (no shell), its standard output into ``sink``; stop it when the sink is
    full or at ``timeout`` seconds."""
    if children.stopping.is_set():
        return Outcome(None, 0, False, False, b"", "interrupted before it started")
    try:
        # A session of its own: Ctrl-C in the terminal reaches culprit alone, which stops the
        # children itself and records nothing they printed while dying.
        child = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        return Outcome(None, 0, False, False, b"", f"{argv[0]}: command not found on PATH")
    except OSError as exc:
        return Outcome(None, 0, False, False, b"", f"{argv[0]}: cannot run: {exc.strerror}")
    children.add(child)
    assert child.stdout is not None
    assert child.stderr is not None
    tail = bytearray()
    reader = threading.Thread(target=_drain, args=(child.stderr, tail), daemon=True)
    reader.start()
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill(child)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    written = 0
    truncated = False
    try:
        stdout = child.stdout.fileno()
        for block in iter(lambda: os.read(stdout, _CHUNK), b""):
            taken = sink.write(block)
            written += taken
            if taken < len(block):
                truncated = True
                _kill(child)
                break
    except BaseException:
        # Ctrl-C (or any error) while reading: the child must not outlive the read.
        _kill(child)
        raise
    finally:
        child.stdout.close()
        status = child.wait()
        timer.cancel()
        reader.join()
        child.stderr.close()
        children.discard(child)
    return Outcome(status, written, truncated, expired.is_set() and not truncated, bytes(tail))


def capture(argv: Sequence[str], *, timeout: float, children: Children) -> tuple[Outcome, str]:
    """Run ``argv`` for its (small) standard output: the outcome and the text, stripped."""
    buffer = io.BytesIO()
    outcome = run(argv, Limited(buffer, CAPTURE_CAP), timeout=timeout, children=children)
    return outcome, buffer.getvalue().decode("utf-8", "replace").strip()


def first_line(argv: Sequence[str], *, timeout: float, children: Children) -> str | None:
    """The first non-blank line a command prints (a tool's version), or ``None``."""
    outcome, text = capture(argv, timeout=timeout, children=children)
    if not outcome.succeeded:
        return None
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return None


def sleep_until(deadline: float, stopping: threading.Event) -> bool:
    """Wait until ``deadline`` (monotonic) unless stopped first; whether it was not stopped."""
    return not stopping.wait(max(0.0, deadline - time.monotonic()))
