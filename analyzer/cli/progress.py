"""The progress bar of ``culprit ingest`` and ``culprit analyze``.

It implements the ingest pipeline's :class:`analyzer.ingest.pipeline.progress.Progress`
protocol, so the library reports progress without knowing how (or whether) it is shown.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from analyzer.cli.render import console

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: File names longer than this are shown by their end (the part that tells files apart).
_SHOWN_PATH_CHARS = 48
#: The variables through which rich takes a stream that is no terminal for one.
_TERMINAL_OVERRIDES = ("FORCE_COLOR", "TTY_COMPATIBLE")


def _may_be_a_terminal(stream: TextIO) -> bool:
    """False when rich's console would surely find ``stream`` no terminal: no variable forces
    one and the stream is no tty (rich then asks nothing else)."""
    if any(name in os.environ for name in _TERMINAL_OVERRIDES):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed: rich says no terminal too
        return False


class ProgressBar:
    """Bytes read so far, speed and elapsed time, on stderr; drawn only on a terminal and
    erased when done."""

    def __init__(self, *, enabled: bool) -> None:
        self._task: TaskID | None = None
        # Nothing drawn (--quiet, --json, stderr not a terminal): rich.progress is not even
        # imported, a twentieth of a second of a small file's analysis, nor rich.console
        # when the answer is plain without it.
        self._progress: Progress | None = None
        if not enabled or not _may_be_a_terminal(sys.stderr):
            return
        screen = console(stderr=True)
        if not screen.is_terminal:
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}", style="cyan"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeElapsedColumn(),
            console=screen,
            transient=True,
        )

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def start(self, total: int | None) -> None:
        """Work begins; ``total`` bytes of input when known."""
        if self._progress is not None:
            self._task = self._progress.add_task("ingest", total=total)

    def file(self, path: str) -> None:
        """A new file is being read."""
        if self._progress is not None and self._task is not None:
            shown = (
                path if len(path) <= _SHOWN_PATH_CHARS else "…" + path[-(_SHOWN_PATH_CHARS - 1) :]
            )
            self._progress.update(self._task, description=shown)

    def advance(self, stored_bytes: int) -> None:
        """``stored_bytes`` more input bytes were consumed."""
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, stored_bytes)


class CollectBars:
    """A line per command running (what it has written so far) under a line counting the
    commands done, on stderr; drawn only on a terminal and erased when done. It implements
    the collection's :class:`analyzer.collect.runner.Progress` protocol."""

    def __init__(self, *, enabled: bool) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        screen = console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}", style="cyan"),
            BarColumn(),
            TextColumn("{task.fields[what]}"),
            TimeElapsedColumn(),
            console=screen,
            transient=True,
            disable=not enabled or not screen.is_terminal,
        )
        self._total: TaskID | None = None
        self._done = 0
        self._written: dict[str, int] = {}
        self._running: dict[str, TaskID] = {}

    def __enter__(self) -> CollectBars:
        self._progress.start()
        self._total = self._progress.add_task("collect", total=None, what="0 commands done")
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def started(self, step: Any) -> None:
        """A command began."""
        self._written[step.id] = 0
        self._running[step.id] = self._progress.add_task(
            f"  {_shown(step.id)}", total=None, what=""
        )

    def advanced(self, step: Any, count: int) -> None:
        """A command wrote ``count`` more bytes."""
        from rich.filesize import decimal

        task = self._running.get(step.id)
        if task is not None:
            self._written[step.id] = written = self._written.get(step.id, 0) + count
            self._progress.update(task, what=decimal(written))

    def finished(self, step: Any, result: Any, skipped: bool) -> None:
        """A command ended (or was complete already)."""
        task = self._running.pop(step.id, None)
        if task is not None:
            self._progress.remove_task(task)
        self._done += 1
        if self._total is not None:
            self._progress.update(self._total, what=f"{self._done} commands done")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_PATH_CHARS else "…" + text[-(_SHOWN_PATH_CHARS - 1) :]
