"""The ``text`` reader: container stdout/stderr and plain log files.

Every line is parsed with the common prefix grammars (absl/glog, TF tsl, Python logging,
log4j, syslog, kubectl event tables, with ``kubectl`` and CRI wrappers peeled off; the lines
of ``kubectl describe`` output name the pod or node of their block), multi-line records are folded
into the row of their header line, and lines nothing recognizes still become rows (with the
timestamp of the record before them, or none). The reader is also the fallback for files no
other reader claims, so nothing in a bundle is left unread.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from analyzer.ingest.k8s import describe_subjects
from analyzer.ingest.lines import LineReader


class TextReader(LineReader):
    """Line-oriented text logs (see module docstring)."""

    name: ClassVar[str] = "text"
    source: ClassVar[str] = "text"

    def adjust(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """Lines of ``kubectl describe`` output name the pod or node of their block."""
        return describe_subjects(lines)

    def can_batch(self, head: bytes) -> bool:
        """Plain text has no format-specific columns, so files batch freely."""
        return True
