"""The ``cloud_logging`` reader: Google Cloud Logging exports.

Three framings of the same LogEntry (formats.md §1):

* ``cloud_logging.jsonl``: one entry per line (Log Router sink objects on Cloud Storage,
  ``LOG_ID/YYYY/MM/DD/HH:00:00_HH:59:59_S0.json``; also BigQuery/Log Analytics JSON exports);
* ``cloud_logging.json_array``: ``gcloud logging read --format=json``, one (possibly huge,
  newest-first) array, streamed element by element;
* ``cloud_logging.csv``: Logs Explorer downloads, dotted column names mapped back to entries.

Entries are parsed by DuckDB's JSON functions in bulk (one parse per entry, many paths), and
every field of the canonical row is derived with polars expressions following formats.md §1.8.

Multi-line records of container text entries (a traceback arrives as one entry per line) are
folded into one row (:mod:`analyzer.ingest.readers.cloud_logging_folding`); which fields are
taken from an entry and how each column is derived is
:mod:`analyzer.ingest.readers.cloud_logging_fields`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import ClassVar, Final

import numpy as np
import polars as pl

from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.blocks import BOM
from analyzer.ingest.columns.timestamps import check_tz
from analyzer.ingest.json.array import iter_elements
from analyzer.ingest.json.document import DocumentError, LocatedDict, LocatedList, load
from analyzer.ingest.json.fields import extract, json_lines
from analyzer.ingest.readers.cloud_logging_fields import SPEC, derive_rows
from analyzer.streams import Content

_GCS_OBJECT: Final = re.compile(
    r"/\d{4}/\d{2}/\d{2}/\d{2}:00:00_\d{2}:59:59_[SA]\d+\.json(?:\.gz)?$"
)
_CSV_LIMIT: Final = 512 << 20
#: The head of a Logging API ``entries.list`` response (what gcpdiag and REST clients save).
_API_RESPONSE: Final = re.compile(rb'^\{\s*"entries"\s*:\s*\[')
#: Such a response is one page, parsed whole (:mod:`analyzer.ingest.json.document` keeps each
#: entry's line).
_API_RESPONSE_LIMIT: Final = 256 << 20
_EMPTY_ARRAY: Final = re.compile(rb"\[\s*\]\s*")


def _one_entry_per_line(head: bytes) -> bool:
    """Whether a file that starts with ``{`` holds one entry per line (JSON lines) rather
    than pretty-printed entries spread over lines (one document, or several one after
    another as they are pasted): its first line is a whole JSON value, or too long to tell."""
    first, newline, _ = head.partition(b"\n")
    if not newline:
        return True
    try:
        json.loads(first)
    except ValueError:
        return first.strip() not in (b"{", b"{\r")
    except RecursionError:
        # Nested deeper than Python's parser goes: a whole value on the line all the same
        # (DuckDB parses the entries), not the lone "{" of a pretty-printed one.
        return True
    return True


class CloudLoggingReader:
    """Cloud Logging exports (see module docstring)."""

    name: ClassVar[str] = "cloud_logging"
    source: ClassVar[str] = "cloud_logging"

    def sniff(self, head: bytes, path: str) -> float:
        """High when the head holds LogEntry keys (or a CSV header of LogEntry columns)."""
        text = head.removeprefix(BOM).lstrip()
        bonus = 0.03 if _GCS_OBJECT.search(path) else 0.0
        if _EMPTY_ARRAY.fullmatch(text):
            # `gcloud logging read` found nothing: an export with no entries, not unknown text.
            return 0.5
        if text[:1] in (b"[", b"{"):
            window = text[:SNIFF_BYTES]
            has = {key: (b'"' + key + b'"') in window for key in _SNIFF_KEYS}
            payload = has[b"textPayload"] or has[b"jsonPayload"] or has[b"protoPayload"]
            if has[b"logName"] and (has[b"resource"] or has[b"insertId"]):
                return 0.95 + bonus
            if has[b"log_name"] and (has[b"text_payload"] or has[b"json_payload"]):
                return 0.9
            if has[b"timestamp"] and payload:
                return 0.8 + bonus
            return 0.0
        first_line = text.split(b"\n", 1)[0].decode("utf-8", "replace")
        columns = {c.strip().strip('"') for c in first_line.split(",")}
        if "timestamp" in columns and columns & _CSV_MARKERS:
            return 0.9
        return 0.0

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Stream the entries of the file as canonical rows."""
        head = content.head(SNIFF_BYTES).removeprefix(BOM).lstrip()
        tz = check_tz(ctx.options.tz)
        if _API_RESPONSE.match(head):
            yield from self._api_response(content, ctx, tz)
        elif head[:1] == b"[" or (head[:1] == b"{" and not _one_entry_per_line(head)):
            objects = head[:1] == b"{"
            for chunk in iter_elements(content, ctx, objects=objects):
                texts = pl.Series("text", chunk.texts, dtype=pl.String)
                yield from self._rows(texts, chunk.lines, chunk.offsets, ctx, tz, "json_array")
        elif head[:1] == b"{" or not head:
            yield from self._json_lines(content, ctx, tz)
        else:
            yield from self._csv(content, ctx, tz)

    # -- framings ----------------------------------------------------------------------------

    def _json_lines(self, content: Content, ctx: ReadContext, tz: str) -> Iterator[pl.DataFrame]:
        for texts, lines, offsets in json_lines(content, ctx):
            yield from self._rows(texts, lines, offsets, ctx, tz, "jsonl")

    def _api_response(self, content: Content, ctx: ReadContext, tz: str) -> Iterator[pl.DataFrame]:
        """An ``entries.list`` response of the Logging API: ``{"entries": [...],
        "nextPageToken": ...}``, one page, parsed whole (each entry keeps its line)."""
        data = content.read_at_most(_API_RESPONSE_LIMIT + 1)
        if len(data) > _API_RESPONSE_LIMIT:
            ctx.counts.records += 1
            ctx.file_issue(
                f"Logging API response is larger than {_API_RESPONSE_LIMIT:,} bytes; not parsed"
            )
            ctx.drop(1, 0, "Logging API response too large to parse", data[:4096])
            return
        try:
            document = load(data)
        except DocumentError as exc:
            ctx.counts.records += 1
            ctx.drop(exc.line, exc.offset, f"not valid JSON: {exc}", data[:4096])
            return
        entries = document.get("entries") if isinstance(document, dict) else None
        if not isinstance(entries, LocatedList):
            ctx.counts.records += 1
            ctx.drop(1, 0, '"entries" is not a list of log entries', data[:4096])
            return
        texts: list[str] = []
        lines: list[int] = []
        offsets: list[int] = []
        for entry in entries:
            ctx.counts.records += 1
            if not isinstance(entry, LocatedDict):
                ctx.drop(entries.line, entries.offset, "an element of entries is not an object")
                continue
            texts.append(json.dumps(entry))
            lines.append(entry.line)
            offsets.append(entry.offset)
        if texts:
            yield from self._rows(
                pl.Series("text", texts, dtype=pl.String),
                np.asarray(lines, dtype=np.int32),
                np.asarray(offsets, dtype=np.int64),
                ctx,
                tz,
                "api_response",
            )

    def _csv(self, content: Content, ctx: ReadContext, tz: str) -> Iterator[pl.DataFrame]:
        data = content.read_at_most(_CSV_LIMIT + 1)
        if len(data) > _CSV_LIMIT:
            ctx.file_issue(
                f"CSV export is larger than {_CSV_LIMIT:,} bytes; only the start is read"
            )
            data = data[:_CSV_LIMIT]
        skip = len(BOM) if data.startswith(BOM) else 0
        text = data[skip:].decode("utf-8", "replace")
        line_starts = np.concatenate(
            [[0], np.flatnonzero(np.frombuffer(data[skip:], np.uint8) == 10) + 1]
        )
        reader = csv.reader(io.StringIO(text, newline=""))
        header: list[str] | None = None
        texts: list[str] = []
        lines: list[int] = []
        offsets: list[int] = []
        previous_end = 0
        for row in _csv_records(reader):
            start_line = previous_end + 1
            previous_end = reader.line_num
            offset = (
                int(line_starts[start_line - 1]) + skip
                if start_line - 1 < len(line_starts)
                else len(data)
            )
            if isinstance(row, csv.Error):
                # A field over csv.field_size_limit(): the reader skips the rest of that line.
                if header is None:
                    ctx.file_issue(f"CSV header cannot be parsed ({row})", line=start_line)
                    continue
                ctx.counts.records += 1
                reason = f"CSV record cannot be parsed ({row})"
                ctx.drop(start_line, offset, reason, data[offset:][:4096])
                continue
            if header is None:
                header = row
                if "timestamp" not in header:
                    ctx.file_issue("CSV header has no 'timestamp' column: rows get no time", line=1)
                continue
            ctx.counts.records += 1
            if not any(cell.strip() for cell in row):
                ctx.counts.blank += 1
                continue
            if len(row) != len(header):
                ctx.drop(
                    start_line,
                    offset,
                    f"CSV row has {len(row)} fields but the header has {len(header)}",
                    ",".join(row).encode()[:4096],
                )
                continue
            texts.append(json.dumps(_entry_from_columns(header, row)))
            lines.append(start_line)
            offsets.append(offset)
        if texts:
            yield from self._rows(
                pl.Series("text", texts, dtype=pl.String),
                np.asarray(lines, dtype=np.int32),
                np.asarray(offsets, dtype=np.int64),
                ctx,
                tz,
                "csv",
            )

    # -- entries to rows ---------------------------------------------------------------------

    def _rows(
        self,
        texts: pl.Series,
        lines: np.ndarray,
        offsets: np.ndarray,
        ctx: ReadContext,
        tz: str,
        framing: str,
    ) -> Iterator[pl.DataFrame]:
        frame = extract(SPEC, texts, lines, offsets, ctx, "LogEntry")
        if frame.height == 0:
            return
        rows = derive_rows(frame, tz, ctx, framing)
        ctx.counts.rows += rows.height
        yield rows


_SNIFF_KEYS: Final = (
    b"logName",
    b"resource",
    b"insertId",
    b"timestamp",
    b"textPayload",
    b"jsonPayload",
    b"protoPayload",
    b"log_name",
    b"text_payload",
    b"json_payload",
)
_CSV_MARKERS: Final = {
    "textPayload",
    "logName",
    "insertId",
    "severity",
    "resource.type",
    "jsonPayload.message",
    "protoPayload.methodName",
}


def _csv_records(reader: Iterator[list[str]]) -> Iterator[list[str] | csv.Error]:
    """The records of a CSV reader, with the error in place of a record it cannot parse."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield exc


def _entry_from_columns(header: list[str], row: list[str]) -> dict[str, object]:
    """Rebuild a LogEntry from Logs Explorer's flattened CSV columns.

    ``labels.*`` and ``resource.labels.*`` keys are label names that may contain dots, so only
    the prefix is split; other dotted names nest at every dot.
    """
    entry: dict[str, object] = {}
    for column, value in zip(header, row, strict=True):
        if value == "":
            continue
        for prefix in ("resource.labels.", "labels."):
            if column.startswith(prefix):
                path = [*prefix.rstrip(".").split("."), column[len(prefix) :]]
                break
        else:
            path = column.split(".")
        node = entry
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[path[-1]] = value
    return entry
