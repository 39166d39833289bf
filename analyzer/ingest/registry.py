"""The reader registry and the choice of a reader for a file.

The registry is one explicit tuple: adding a reader means adding its module under
:mod:`analyzer.ingest.readers` and an entry here (a test checks that every reader class of
that package is registered). Every reader scores the head of the file;
the best score wins, ties going to the earlier reader. A file nobody claims with at least
:data:`RECOGNIZED` is *unrecognized*: it is still read by the text reader, so its lines become
rows, and the inventory says it was not recognized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from analyzer.errors import UsageError
from analyzer.ingest.base import Reader
from analyzer.ingest.lines.head import looks_binary
from analyzer.ingest.lines.reader import LineReader
from analyzer.ingest.readers.cloud_logging import CloudLoggingReader
from analyzer.ingest.readers.diagon_api import DiagonApiReader
from analyzer.ingest.readers.diagon_daemon import DiagonDaemonReader
from analyzer.ingest.readers.kubelet import KubeletReader
from analyzer.ingest.readers.modelarts_api import ModelArtsApiReader
from analyzer.ingest.readers.modelarts_log import ModelArtsLogReader
from analyzer.ingest.readers.text import TextReader

READERS: Final[tuple[Reader, ...]] = (
    CloudLoggingReader(),
    KubeletReader(),
    DiagonApiReader(),
    DiagonDaemonReader(),
    ModelArtsLogReader(),
    ModelArtsApiReader(),
    TextReader(),
)

#: Readers whose rows keep one message line per line of the file: the n-th line of a folded
#: record's message is the file's line ``line + n`` (citations can point inside a record).
LINE_READERS: Final = frozenset(r.name for r in READERS if isinstance(r, LineReader))

#: The lowest score that counts as a reader recognizing a file.
RECOGNIZED: Final = 0.2

_FALLBACK: Final = READERS[-1]


@dataclass(frozen=True)
class Choice:
    """The reader picked for a file and how sure the pick is."""

    reader: Reader
    score: float
    recognized: bool


def reader_named(name: str) -> Reader:
    """The registered reader called ``name`` (for ``--reader``)."""
    for reader in READERS:
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in READERS)
    raise UsageError(f"unknown reader {name!r} (known: {known})")


def choose_reader(head: bytes, path: str, forced: str | None = None) -> Choice | None:
    """Pick the reader for a file from its first bytes; ``None`` for binary data."""
    if forced is not None:
        return Choice(reader_named(forced), 1.0, True)
    best: Choice | None = None
    for reader in READERS:
        score = reader.sniff(head, path)
        if best is None or score > best.score:
            best = Choice(reader, score, score >= RECOGNIZED)
    assert best is not None
    if best.recognized:
        return best
    if looks_binary(head):
        return None
    return Choice(_FALLBACK, best.score, False)
