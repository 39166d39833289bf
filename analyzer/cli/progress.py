"""The progress bar of ``culprit ingest`` and ``culprit analyze``.

It implements the ingest pipeline's :class:`analyzer.ingest.pipeline.progress.Progress`
protocol, so the library reports progress without knowing how (or whether) it is shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.cli.render import console

if TYPE_CHECKING:
    from rich.progress import TaskID

#: File names longer than this are shown by their end (the part that tells files apart).
_SHOWN_PATH_CHARS = 48


class ProgressBar:
    """Bytes read so far, speed and elapsed time, on stderr; drawn only on a terminal and
    erased when done."""

    def __init__(self, *, enabled: bool) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        screen = console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}", style="cyan"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeElapsedColumn(),
            console=screen,
            transient=True,
            disable=not enabled or not screen.is_terminal,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def start(self, total: int | None) -> None:
        """Work begins; ``total`` bytes of input when known."""
        self._task = self._progress.add_task("ingest", total=total)

    def file(self, path: str) -> None:
        """A new file is being read."""
        if self._task is not None:
            shown = (
                path if len(path) <= _SHOWN_PATH_CHARS else "…" + path[-(_SHOWN_PATH_CHARS - 1) :]
            )
            self._progress.update(self._task, description=shown)

    def advance(self, stored_bytes: int) -> None:
        """``stored_bytes`` more input bytes were consumed."""
        if self._task is not None:
            self._progress.advance(self._task, stored_bytes)
