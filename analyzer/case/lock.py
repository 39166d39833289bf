"""One writer per case: a lock file beside the case directory, held while a case is written.

Two ingests into one output would otherwise destroy each other's work: each starts by removing
the staging directory it finds (a killed run's leftover, as far as it can tell), and the
second to commit replaces the first's case. The lock is ``flock(2)`` on
``.<case>.lock`` in the directory that holds the case (beside the staging directory, not in
the case, which is swapped whole at commit): the kernel releases it when its process ends,
however it ends, so a lock left by a killed process never blocks anyone; the file only says
who holds it. It is removed when released.

Where the system has no ``flock`` (Windows) nothing is locked.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from analyzer import defaults
from analyzer.errors import CaseError, CaseLockedError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: How often a waiting ingest tries the lock again, in seconds.
POLL_S: Final = 0.1


def lock_path(case: Path) -> Path:
    """The lock file of the case directory ``case``."""
    return case.parent / f".{case.name}.lock"


@contextlib.contextmanager
def case_lock(case: Path, *, wait_s: float = defaults.LOCK_WAIT_S) -> Iterator[None]:
    """Hold the lock of ``case`` for the block; the directory that holds it is created (and
    removed again if the block fails and leaves it empty).

    Args:
        case: the case directory about to be written.
        wait_s: how long to wait for another holder, in seconds (0: refuse at once).

    Raises:
        CaseLockedError: another process holds the lock after ``wait_s`` seconds.
        CaseError: the directory or the lock file cannot be created.
    """
    created = _make_directories(case.parent)
    succeeded = False
    try:
        descriptor = _acquire(case, wait_s)
        try:
            yield
            succeeded = True
        finally:
            _release(case, descriptor)
    finally:
        if not succeeded:
            # Only the directories this call made, and only when empty: nothing of ours is
            # left in them.
            for made in created:
                with contextlib.suppress(OSError):
                    made.rmdir()


def _make_directories(parent: Path) -> list[Path]:
    """Create ``parent`` and its missing ancestors; those it created, deepest first."""
    missing: list[Path] = []
    current = parent.absolute()
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CaseError(f"cannot create the directory: {exc}", path=str(parent)) from None
    return missing


def _acquire(case: Path, wait_s: float) -> int | None:
    """The descriptor of the locked file, once this process holds it (``None`` without
    ``flock``)."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    path = lock_path(case)
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise CaseError(f"cannot create the lock file: {exc}", path=str(path)) from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(descriptor)
            os.close(descriptor)
            if time.monotonic() >= deadline:
                raise CaseLockedError(_refusal(holder, wait_s), path=str(case)) from None
            time.sleep(POLL_S)
            continue
        if _still_there(descriptor, path):
            _describe(descriptor)
            return descriptor
        # The holder released and removed the file between our open and our lock: the file
        # we hold is no longer the lock; take the new one.
        os.close(descriptor)


def _release(case: Path, descriptor: int | None) -> None:
    if descriptor is None:  # pragma: no cover - Windows
        return
    # Removed while still held, so a process that opened it meanwhile finds, once it holds
    # it, that it is gone and opens the new one (_still_there).
    with contextlib.suppress(OSError):
        if _still_there(descriptor, lock_path(case)):
            lock_path(case).unlink()
    os.close(descriptor)


def _still_there(descriptor: int, path: Path) -> bool:
    try:
        here = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(descriptor)
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def _describe(descriptor: int) -> None:
    """Say in the file who holds the lock (for the message of whoever finds it held)."""
    text = json.dumps(
        {
            "pid": os.getpid(),
            "since": dt.datetime.now(tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:2]] if sys.argv else []),
        }
    )
    with contextlib.suppress(OSError):
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, text.encode(), 0)


def _holder(descriptor: int) -> dict[str, object]:
    try:
        found = json.loads(os.pread(descriptor, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _refusal(holder: dict[str, object], wait_s: float) -> str:
    who = "another culprit process"
    if holder.get("pid") is not None:
        command = f"`{holder['command']}`, " if holder.get("command") else ""
        who = f"another culprit process ({command}pid {holder['pid']}, since {holder.get('since')})"
    waited = f"waited {wait_s:g} s; " if wait_s > 0 else ""
    return (
        f"{who} is writing this case; {waited}let it finish, or pass --wait SECONDS to wait for it"
    )
