"""The ``text`` reader: container stdout/stderr and plain log files.

Every line is parsed with the common prefix grammars (absl/glog, TF tsl, Python logging,
log4j, syslog, kubectl event tables, with ``kubectl`` and CRI wrappers peeled off; the lines
of ``kubectl describe`` output name the pod or node of their block), multi-line records are folded
into the row of their header line, and lines nothing recognizes still become rows (with the
timestamp of the record before them, or none). The reader is also the fallback for files no
other reader claims, so nothing in a bundle is left unread.
"""

from __future__ import annotations

from typing import ClassVar, Final

import polars as pl

from analyzer.ingest.columns.k8s import describe_subjects
from analyzer.ingest.lines.hints import FileHints
from analyzer.ingest.lines.reader import LineReader
from analyzer.schema import host_expr

#: ``ray::fn() (pid=48133, ip=10.130.2.221)``, the first line of a Ray task's error.
_RAY_TASK_HEADER: Final = (
    r"^(?:[\w.]+(?:\([\w.]+\))?: )?ray::\S+ \(pid=\d+, ip=(\d{1,3}(?:\.\d{1,3}){3})\b"
)


class TextReader(LineReader):
    """Line-oriented text logs (see module docstring)."""

    name: ClassVar[str] = "text"
    source: ClassVar[str] = "text"

    def adjust(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """Lines of ``kubectl describe`` output name the pod or node of their block."""
        return describe_subjects(lines)

    def finish(self, rows: pl.DataFrame, hints: FileHints) -> pl.DataFrame:
        """A Ray task's error names the node it ran on in its header line (``ray::train()
        (pid=48133, ip=10.130.2.221)``, after ``RayTaskError(…): `` or alone): that record is
        that node's, unless the line itself named another host."""
        if not rows.height:
            return rows
        return rows.with_columns(
            host_expr(
                pl.coalesce(pl.col("host"), pl.col("message").str.extract(_RAY_TASK_HEADER, 1))
            ).alias("host")
        )

    def can_batch(self, head: bytes) -> bool:
        """Plain text has no format-specific columns, so files batch freely."""
        return True
