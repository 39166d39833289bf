"""What an ingest hands the case: the options it read with, per-file counts, quarantine entries.

These types belong to the case layer because the case stores them (``case.json`` keeps the
read options, ``files.parquet`` the counts, ``quarantine.parquet`` the issues); the ingest
machinery and its readers fill them in. Keeping them here lets the case layer stay independent
of ingest, which imports it, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from analyzer import defaults

#: Quarantine entry kinds. ``dropped``: an input record that produced no row. ``kept``: the
#: record produced a row, but something had to be repaired or cut (the reason says what).
#: ``file``: a problem with the file as a whole (truncated stream, refused member).
IssueKind = Literal["dropped", "kept", "file"]


@dataclass(frozen=True)
class ReadOptions:
    """Knobs shared by all readers.

    Args:
        year: year for timestamps that carry none (klog/absl ``MMDD``); inferred when ``None``.
        tz: zone of timestamps written in local time without an offset (IANA name or
            ``+08:00``); ``UTC`` when ``None``.
        max_line_bytes: a longer line keeps only this many bytes (and is quarantined as cut).
        chunk_bytes: how much decoded text a reader handles at once; bounds memory.
        max_record_lines: a multi-line record (traceback) is split after this many lines.
        max_record_bytes: ...or after this many bytes.
    """

    year: int | None = None
    tz: str | None = None
    max_line_bytes: int = defaults.MAX_LINE_BYTES
    chunk_bytes: int = 16 << 20
    max_record_lines: int = 500
    max_record_bytes: int = 256 << 10


@dataclass
class FileCounts:
    """Accounting for one file: ``records == rows + folded + blank + dropped + duplicates``.

    ``records`` are the framing units of the file: lines for line-oriented formats, elements
    for a JSON array, data rows for a CSV. ``folded`` records were joined into the row of the
    record before them (traceback lines); ``blank`` records were empty lines between records.
    """

    records: int = 0
    rows: int = 0
    folded: int = 0
    blank: int = 0
    dropped: int = 0
    duplicates: int = 0
    repaired: int = 0

    def balanced(self) -> bool:
        """Whether every input record is accounted for."""
        accounted = self.rows + self.folded + self.blank + self.dropped + self.duplicates
        return self.records == accounted


@dataclass
class Issue:
    """One quarantine entry."""

    kind: IssueKind
    line: int
    offset: int
    reason: str
    raw: bytes | None = None
