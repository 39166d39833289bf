"""The reference backend: every signature's regex over every candidate row, in plain Python
with the ``regex`` package. Slow and obviously right; the other backends must agree with it.

The pattern goes to ``regex`` with its ASCII flag (``\\d \\w \\b`` and ``(?i)`` ASCII), after
:func:`~analyzer.signatures.dialect.translate` fixed the two places where even that flag
leaves Python off the contract: ``\\s`` (Python's includes the vertical tab) and ``$``
(Python's also matches before a final newline).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

import polars as pl
import pyarrow.parquet as pq
import regex

from analyzer.errors import SignatureError
from analyzer.signatures.compile import (
    MATCHES_SCHEMA,
    Compiled,
    CompiledCatalogue,
    captures_json,
)
from analyzer.signatures.dialect import UnportableRegex, ascii_lower, translate

FLAGS: Final = regex.ASCII | regex.VERSION0
#: Rows per batch when matching a case's files.
BATCH_ROWS: Final = 65_536


def compile_error(pattern: str) -> str | None:
    """Why Python's ``regex`` rejects ``pattern`` once translated, or None."""
    try:
        _compiled(pattern)
    except SignatureError as exc:
        return str(exc.__cause__)
    return None


@functools.cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    # One compile per pattern and process, shared by the lint's check and the matching:
    # compiling with ``regex`` costs milliseconds, and the lint used to do it three times.
    try:
        return regex.compile(translate(pattern, "python"), FLAGS)
    except (UnportableRegex, regex.error) as exc:
        message = f"the regex {pattern!r} does not compile in Python: {exc}"
        raise SignatureError(message) from exc


def match_start(pattern: str, message: str, group: str | None = None) -> int | None:
    """Where in ``message`` the leftmost match of ``pattern`` starts (or, with ``group``,
    where that capture group starts when it took part); None when nothing matches."""
    hit = _compiled(pattern).search(message)
    if hit is None:
        return None
    if group is not None and hit.start(group) >= 0:
        return int(hit.start(group))
    return int(hit.start())


def _anchors(signature: Compiled) -> tuple[str, ...]:
    """The anchors as a message is searched for them: ASCII-lower-cased for a
    case-insensitive signature."""
    if signature.case_insensitive:
        return tuple(ascii_lower(anchor) for anchor in signature.anchors)
    return signature.anchors


def match_messages(
    catalogue: CompiledCatalogue, rows: Iterable[tuple[int, str, str | None]]
) -> pl.DataFrame:
    """Matches of ``rows`` (row_id, source, message) as a matches table."""
    patterns = [
        (signature, _anchors(signature), _compiled(signature.regex))
        for signature in catalogue.signatures
    ]
    # The signatures of each source, in catalogue order, found once per source.
    by_source: dict[str, list[tuple[Compiled, tuple[str, ...], regex.Pattern[str]]]] = {}
    found: list[tuple[int, str, str, str]] = []
    for row_id, source, message in rows:
        if message is None:
            continue
        applicable = by_source.get(source)
        if applicable is None:
            applicable = by_source[source] = [p for p in patterns if source in p[0].sources]
        folded = ascii_lower(message)
        for signature, anchors, pattern in applicable:
            searched = folded if signature.case_insensitive else message
            if not any(anchor in searched for anchor in anchors):
                continue
            hit = pattern.search(message)
            if hit is None:
                continue
            captures = captures_json(hit.groupdict())
            found.append((row_id, signature.code, signature.role, captures))
    return pl.DataFrame(found, schema=MATCHES_SCHEMA, orient="row").sort("row_id", "signature")


def match(catalogue: CompiledCatalogue, rows: pl.DataFrame) -> pl.DataFrame:
    """Matches of a frame with ``row_id``, ``source`` and ``message`` columns."""
    frame = rows.select("row_id", pl.col("source").cast(pl.String), "message")
    return match_messages(catalogue, frame.iter_rows())


def match_files(catalogue: CompiledCatalogue, files: Sequence[Path]) -> Iterator[pl.DataFrame]:
    """Matches of the canonical rows in ``files`` (Parquet), a batch of rows at a time."""
    for path in files:
        reader = pq.ParquetFile(path)
        for batch in reader.iter_batches(BATCH_ROWS, columns=["row_id", "source", "message"]):
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            yield match(catalogue, frame)
