"""What the ingest pipeline reports while it works (the CLI draws it with rich)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """What the pipeline reports while it works (the CLI draws it with rich)."""

    def start(self, total: int | None) -> None:
        """Work begins; ``total`` bytes of input when known."""

    def file(self, path: str) -> None:
        """A new file is being read."""

    def advance(self, stored_bytes: int) -> None:
        """``stored_bytes`` more input bytes were consumed."""


class NullProgress:
    """Reports nothing."""

    def start(self, total: int | None) -> None:
        return None

    def file(self, path: str) -> None:
        return None

    def advance(self, stored_bytes: int) -> None:
        return None
