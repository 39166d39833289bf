"""The one exception tree of the library.

Every error culprit raises on purpose is an :class:`AnalyzerError`. It carries the bundle path
(and line, when known) it is about, so the CLI can print one precise line and exit with code 2
instead of a traceback. Problems inside the *data* (a corrupt line, a truncated stream) are not
exceptions: they become quarantine entries and ingestion goes on.
"""

from __future__ import annotations


class AnalyzerError(Exception):
    """Base class of every error culprit raises deliberately.

    Args:
        message: what went wrong, phrased for the user.
        path: the file (bundle-relative where possible) the error is about.
        line: 1-based line in that file, when known.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


class UsageError(AnalyzerError):
    """An option or argument has a value culprit cannot use."""


class BundleError(AnalyzerError):
    """The bundle cannot be opened or walked (missing input, unreadable archive)."""


class UnsafeMemberError(BundleError):
    """An archive member or link would escape the bundle, or is not a regular file."""


class ExpansionLimitError(BundleError):
    """Decompression produced more bytes than the configured cap (a likely bomb).

    ``scope`` is ``stream`` when one compressed stream expanded too much (that member is
    refused, the rest of the bundle goes on) and ``bundle`` when the whole bundle went over
    its total cap (ingestion stops).
    """

    def __init__(self, message: str, *, path: str | None = None, scope: str = "stream") -> None:
        super().__init__(message, path=path)
        self.scope = scope


class CaseError(AnalyzerError):
    """A case directory is missing, incomplete or from an incompatible version."""


class DiskSpaceError(CaseError):
    """There is not enough free space to write a case (found before writing, or when the
    system said so half-way); ``path`` names the directory that is short of space, and
    nothing half-written is left there."""


class CaseLockedError(CaseError):
    """Another culprit process is writing the same case (``path``) right now."""


class QueryError(AnalyzerError):
    """A SQL query over a case failed."""


class SignatureError(AnalyzerError):
    """A signature file, folder or catalogue cannot be used (the message lists why)."""


class HandoffError(AnalyzerError):
    """A handoff bundle is damaged, tampered with, or not a handoff at all (``path`` names the
    archive, and the message the member)."""


class CollectError(AnalyzerError):
    """A collection cannot start or go on: an option the plan cannot use, a discovery command
    that failed (``path`` names the command's output in the bundle), a bundle folder that holds
    another collection."""
