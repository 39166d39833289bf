"""What every reader shares: the reader protocol and the per-file context.

A reader answers two questions, plaso-style: ``sniff`` ("is this file mine, and how sure am
I?", from the first bytes only) and ``read`` (stream the file as polars frames holding the
canonical columns). Provenance columns ``row_id`` and ``file_id`` are added by the ingest
pipeline, never by a reader. Everything a reader cannot turn into a row goes through the
:class:`ReadContext` into quarantine, with the file, line, offset and a reason. The read
options, per-file counts and quarantine entries are the case layer's types
(:mod:`analyzer.case.inputs`): the case stores them, and ingest fills them in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Final, Protocol

import polars as pl

from analyzer.case.inputs import FileCounts, Issue, ReadOptions
from analyzer.schema import TS_LATEST
from analyzer.streams import Content

#: Bytes of decoded content a reader's ``sniff`` gets to look at.
SNIFF_BYTES: Final = 64 << 10


@dataclass
class ReadContext:
    """Per-file state handed to a reader.

    Args:
        path: bundle-relative path of the file (for messages).
        options: the read options of this ingest run.
        mtime: modification time of the member, a fallback anchor for year inference.
    """

    path: str
    options: ReadOptions = field(default_factory=ReadOptions)
    mtime: float | None = None
    counts: FileCounts = field(default_factory=FileCounts)
    issues: list[Issue] = field(default_factory=list)
    #: Whether a file-level problem was noted (the file was not read to its end).
    incomplete: bool = False
    #: The first problem with the file as a whole (its inventory record's detail).
    first_problem: str | None = None
    #: Where the year of year-less stamps came from (see
    #: :func:`analyzer.ingest.lines.hints.year_anchor`).
    year_from: str | None = None

    def drop(self, line: int, offset: int, reason: str, raw: bytes | None = None) -> None:
        """Quarantine an input record that produces no row."""
        self.counts.dropped += 1
        self.issues.append(Issue("dropped", line, offset, reason, raw))

    def repaired(self, line: int, offset: int, reason: str) -> None:
        """Note a record that produced a row only after a repair (the row exists)."""
        self.counts.repaired += 1
        self.issues.append(Issue("kept", line, offset, reason))

    def file_issue(self, reason: str, *, line: int = 0, offset: int = 0) -> None:
        """Note a problem with the file as a whole."""
        self.incomplete = True
        self.first_problem = self.first_problem or reason
        self.issues.append(Issue("file", line, offset, reason))

    def take_issues(self) -> list[Issue]:
        """Hand over and forget the issues gathered so far (keeps memory bounded)."""
        issues, self.issues = self.issues, []
        return issues

    def anchor_date(self) -> dt.date:
        """A date near the logs, for year inference when nothing better is known.

        An mtime of 0 (a tar writer that set none) or outside the years a case accepts says
        nothing about the logs: it would give their year-less stamps a year that is then out
        of range.
        """
        if self.mtime is not None and 0 < self.mtime < TS_LATEST.timestamp():
            return dt.datetime.fromtimestamp(self.mtime, tz=dt.UTC).date()
        return dt.datetime.now(tz=dt.UTC).date()


class Reader(Protocol):
    """A format reader. Registered in :data:`analyzer.ingest.registry.READERS`."""

    #: Stable reader family name, e.g. ``cloud_logging``.
    name: ClassVar[str]
    #: The canonical ``source`` of its rows.
    source: ClassVar[str]

    def sniff(self, head: bytes, path: str) -> float:
        """Confidence in [0, 1] that the file is in this reader's format."""
        ...

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Stream the file as frames with canonical columns (no ``row_id``/``file_id``).

        Readers set ``line`` and ``offset`` for every row and count every record in
        ``ctx.counts``. An optional ``_dedup_key`` (UInt64) column marks rows that may be
        duplicates of rows elsewhere in the bundle.
        """
        ...
