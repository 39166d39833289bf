"""The machinery every line-oriented reader shares.

A :class:`LineReader` streams a file in chunks of lines, parses each line's prefix with the
reader's grammars, folds multi-line records into the row of their header line (carrying an
unfinished record over to the next chunk), and builds canonical rows. Readers differ only in
their grammars, their ``sniff`` and two hooks: :meth:`LineReader.hints` (what the file as a
whole says: the year, the zone, the host) and :meth:`LineReader.finish` (columns only that
format can derive).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final, TypeVar

import numpy as np
import polars as pl

from analyzer.hosts import chip_location
from analyzer.ingest import grammars
from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.extra import compact_json
from analyzer.ingest.folding import EXCEPTION_LINE, TRACEBACK_HEADER, mark_records
from analyzer.ingest.framing import LineChunk, iter_line_chunks, merge_chunks, take_lines
from analyzer.ingest.grammars import Grammar
from analyzer.ingest.k8s import POD_NAME
from analyzer.ingest.timestamps import NS, check_tz
from analyzer.schema import host_expr, severity_expr
from analyzer.streams import Content

SNIFF_LINES: Final = 200
_ANCHOR_LINES: Final = 500
_T = TypeVar("_T")


def looks_binary(head: bytes) -> bool:
    """Whether a file head looks like binary data rather than text (NUL bytes)."""
    return b"\x00" in head[:8192]


def head_lines(head: bytes) -> list[str]:
    """The non-blank lines of a file head (the last one dropped when it may be cut)."""
    lines = head.decode("utf-8", "replace").splitlines()[:SNIFF_LINES]
    if len(head) >= 1024 and len(lines) > 1:
        lines = lines[:-1]
    return [line for line in lines if line.strip()]


# Node names as they appear in bundle paths (GKE nodes, TPU VMs, IPs).
_PATH_HOST: Final = re.compile(r"^(?:gke-[a-z0-9-]+|[a-z0-9-]+-w-\d+|\d{1,3}(?:\.\d{1,3}){3})$")
_POD_FILE: Final = re.compile(POD_NAME)


def path_host(path: str) -> str | None:
    """A node name in the bundle path (``nodes/gke-…/kubelet.log``), if there is one."""
    for part in reversed(path.split("/")[:-1]):
        if _PATH_HOST.match(part.lower()):
            return part
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    for piece in (stem, stem.removeprefix("kubelet-"), stem.removesuffix("-kubelet")):
        if _PATH_HOST.match(piece.lower()):
            return piece
    return None


def path_pod(path: str) -> str | None:
    """A JobSet pod name used as the file name (``kubectl logs POD > POD.log``)."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return stem if _POD_FILE.match(stem) else None


@dataclass
class FileHints:
    """What a file as a whole says about its rows.

    ``anchor`` gives year-less stamps their year; ``tz`` is the zone of local stamps; the
    other fields fill the row columns of the same name where a line does not say; ``extra``
    goes into every row's ``extra``.
    """

    anchor: dt.date
    tz: str
    host: str | None = None
    pod: str | None = None
    container: str | None = None
    workload: str | None = None
    worker: int | None = None
    extra: dict[str, str] = field(default_factory=dict)


class LineReader:
    """Base of the line-oriented readers (see module docstring)."""

    name: ClassVar[str]
    source: ClassVar[str]
    grammars: ClassVar[tuple[Grammar, ...]] = grammars.GRAMMARS

    def sniff(self, head: bytes, path: str) -> float:
        """Share of head lines this reader's grammars recognize, scaled to at most 0.6."""
        if not head or looks_binary(head):
            return 0.0
        lines = head_lines(head)
        if not lines:
            return 0.05
        return 0.05 + 0.55 * grammars.share_recognized(lines, self.grammars)

    def hints(self, head: bytes, ctx: ReadContext) -> FileHints:
        """What the file says as a whole: the year anchor, the zone, and a node or pod name
        the bundle path gives."""
        tz = check_tz(ctx.options.tz)
        return FileHints(
            year_anchor(head, ctx, tz, self.grammars),
            tz,
            host=path_host(ctx.path),
            pod=path_pod(ctx.path),
        )

    def adjust(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """Format-specific changes to parsed lines before they are folded into records.

        A reader may also add ``fold_message``/``fold_level``: what the folding rules should
        see instead of the line's message and level (they are dropped afterwards).
        """
        return lines

    def finish(self, rows: pl.DataFrame, hints: FileHints) -> pl.DataFrame:
        """Format-specific columns; rows arrive in canonical form (plus ``attrs``)."""
        return rows

    def can_batch(self, head: bytes) -> bool:
        """Whether this file, when small, may be read together with others of this reader
        (:meth:`read_batch`): ``finish`` must then work on rows of several files at once."""
        return False

    def read_batch(
        self, files: Sequence[tuple[bytes, LineChunk, ReadContext]]
    ) -> list[pl.DataFrame]:
        """Read several small whole files (head, all their lines, context) in one pass.

        A bundle holds thousands of node logs of a few hundred lines each, and a query's
        fixed cost is paid per query, not per line: one pass over all of them costs about
        what one file cost alone. Files never fold into each other (each starts a fold
        segment) and keep their own hints; the result is one frame per file, the rows
        :meth:`read` would have yielded for it.
        """
        hints = [self.hints(head, ctx) for head, _, ctx in files]
        if len(files) > 1 and any(h.tz != hints[0].tz or h.extra for h in hints):
            # Zones and extra fields are literals of the whole pass: such files go one by one.
            return [frame for item in files for frame in self.read_batch([item])]
        count = len(files)
        sizes = np.array([len(chunk) for _, chunk, _ in files], dtype=np.int64)
        texts: list[pl.Series] = []
        repairs: list[np.ndarray] = []
        for _, chunk, _ in files:
            text, repaired = chunk.text()
            texts.append(text)
            repairs.append(repaired)
        text = pl.concat(texts)
        if any(b"\x1b" in chunk.data for _, chunk, _ in files):
            text = text.str.replace_all(grammars.ANSI_ESCAPE, "")
        owner = pl.Series("batch_file", np.repeat(np.arange(count, dtype=np.int32), sizes))
        firsts = np.zeros(int(sizes.sum()), dtype=np.bool_)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        firsts[starts[sizes > 0]] = True
        anchors = pl.Series([h.anchor for h in hints], dtype=pl.Date).gather(owner)
        parsed = grammars.parse_lines_lazy(
            text, anchor=anchors, tz=hints[0].tz, grammars=self.grammars
        ).with_columns(
            text=text,
            line=pl.Series(np.concatenate([c.line_numbers for _, c, _ in files])),
            offset=pl.Series(np.concatenate([c.offsets for _, c, _ in files])),
            fold_break=pl.Series(firsts),
            batch_file=owner,
            batch_anchor=anchors,
        )
        marked = mark_records(
            self.adjust(parsed),
            max_lines=files[0][2].options.max_record_lines,
            max_bytes=files[0][2].options.max_record_bytes,
        ).collect()
        marked = marked.drop("fold_message", "fold_level", "fold_break", strict=False)

        def per_file(name: str, dtype: pl.DataType) -> pl.Expr:
            return pl.col("batch_file").replace_strict(
                list(range(count)),
                [getattr(h, name) for h in hints],
                default=None,
                return_dtype=dtype,
            )

        rows = _records(marked.lazy(), None, self, per_file, {}).collect()
        rows = self.finish(rows, hints[0])
        blank = marked.group_by("batch_file").agg(pl.col("is_blank").sum()).sort("batch_file")
        blanks = dict(zip(blank["batch_file"].to_list(), blank["is_blank"].to_list(), strict=True))
        frames = rows.drop("attrs", "batch_anchor", strict=False).partition_by(
            "batch_file", maintain_order=True, as_dict=True, include_key=False
        )
        out: list[pl.DataFrame] = []
        for index, (_, chunk, ctx) in enumerate(files):
            frame = frames.get(
                (index,), rows.clear().drop("attrs", "batch_anchor", "batch_file", strict=False)
            )
            _note_repairs(chunk, repairs[index], len(chunk), ctx)
            blank_lines = int(blanks.get(index, 0))
            ctx.counts.records += len(chunk)
            ctx.counts.blank += blank_lines
            ctx.counts.rows += frame.height
            ctx.counts.folded += len(chunk) - blank_lines - frame.height
            out.append(frame)
        return out

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Stream the file as folded records."""
        hints = self.hints(content.head(SNIFF_BYTES), ctx)
        carry: LineChunk | None = None
        last_ts: object = None
        for chunk, is_last in _with_last(iter_line_chunks(content, ctx)):
            if carry is not None:
                chunk = merge_chunks(carry, chunk)
                carry = None
            if len(chunk) == 0:
                continue
            text, repaired = chunk.text()
            if b"\x1b" in chunk.data:
                text = text.str.replace_all(grammars.ANSI_ESCAPE, "")
            marked = self._mark(chunk, text, hints, ctx)
            keep = marked.height
            if not is_last:
                # The last record may go on in the next chunk: carry it over (the record caps
                # bound how much can be carried).
                starts = np.flatnonzero((marked["is_header"] | marked["is_split"]).to_numpy())
                keep = int(starts[-1]) if starts.size else 0
                carry = take_lines(chunk, keep)
                if keep == 0:
                    continue
                marked = marked.head(keep)
            _note_repairs(chunk, repaired, keep, ctx)
            records = _records(marked.lazy(), last_ts, self, _constant(hints), hints.extra)
            rows = self.finish(records.collect(), hints).drop("batch_file")
            seen = rows["ts"].drop_nulls()
            if seen.len():
                last_ts = seen[-1]
            blank = int(marked["is_blank"].sum())
            ctx.counts.records += marked.height
            ctx.counts.blank += blank
            ctx.counts.rows += rows.height
            ctx.counts.folded += marked.height - blank - rows.height
            if rows.height:
                yield rows.drop("attrs")

    def _mark(
        self, chunk: LineChunk, text: pl.Series, hints: FileHints, ctx: ReadContext
    ) -> pl.DataFrame:
        parsed = grammars.parse_lines_lazy(
            text, anchor=hints.anchor, tz=hints.tz, grammars=self.grammars
        ).with_columns(
            text=text,
            line=pl.Series(chunk.line_numbers),
            offset=pl.Series(chunk.offsets),
            batch_file=pl.lit(0, dtype=pl.Int32),
        )
        marked = mark_records(
            self.adjust(parsed),
            max_lines=ctx.options.max_record_lines,
            max_bytes=ctx.options.max_record_bytes,
        ).collect()
        return marked.drop("fold_message", "fold_level", strict=False)


def _with_last(items: Iterator[_T]) -> Iterator[tuple[_T, bool]]:
    """Pair every item with whether it is the last one."""
    previous: list[_T] = []
    for item in items:
        if previous:
            yield previous[0], False
        previous = [item]
    if previous:
        yield previous[0], True


def _note_repairs(chunk: LineChunk, repaired: np.ndarray, keep: int, ctx: ReadContext) -> None:
    """Quarantine notes for cut lines and invalid UTF-8 among the first ``keep`` lines."""
    limit = ctx.options.max_line_bytes
    for index, length in sorted(chunk.oversize.items()):
        if index < keep:
            ctx.repaired(
                chunk.first_line + index,
                int(chunk.offsets[index]),
                f"line is {length:,} bytes long; the row keeps its first {limit:,} bytes",
            )
    for index in np.flatnonzero(repaired[:keep]).tolist():
        ctx.repaired(
            chunk.first_line + index,
            int(chunk.offsets[index]),
            "line is not valid UTF-8; invalid bytes were replaced by U+FFFD",
        )


def _constant(hints: FileHints) -> Callable[[str, pl.DataType], pl.Expr]:
    """The hints of one file as literals (see :func:`_records`)."""

    def hint(name: str, dtype: pl.DataType) -> pl.Expr:
        return pl.lit(getattr(hints, name), dtype=dtype)

    return hint


def _records(
    marked: pl.LazyFrame,
    last_ts: object,
    reader: LineReader,
    hint: Callable[[str, pl.DataType], pl.Expr],
    extra: dict[str, str],
) -> pl.LazyFrame:
    """One row per record: header fields, folded message and extra JSON.

    Most records are one line; only the lines of multi-line records go through a group-by.
    ``hint(name, dtype)`` is the expression of a :class:`FileHints` field (a literal for one
    file, a lookup by ``batch_file`` for a batch of files); ``extra`` goes into every row.
    Timestamps are carried forward within a file (``batch_file``), never across files.
    """
    names = marked.collect_schema().names()
    first = [*_FIRST, *(["batch_anchor"] if "batch_anchor" in names else [])]
    lines = marked.filter(pl.col("record").is_not_null())
    record = pl.col("record")
    multi = (record == record.shift(-1)).fill_null(False) | (record == record.shift(1)).fill_null(
        False
    )
    single = lines.filter(~multi).select(
        *first,
        (pl.col("message") == TRACEBACK_HEADER).alias("_traceback"),
        pl.col("message"),
        pl.lit(1, dtype=pl.UInt32).alias("_lines"),
        pl.lit(None, dtype=pl.String).alias("_exception"),
    )
    # Continuation lines keep their text verbatim except for wrappers (kubectl/CRI prefixes,
    # ANSI colours) that are not part of what the program wrote; CRI partial lines join the
    # line before them without a newline.
    starts_piece = pl.col("is_header") | pl.col("is_split")
    piece = (
        pl.when(starts_piece | pl.col("joins_previous"))
        .then(pl.col("message"))
        .otherwise(pl.concat_str([pl.lit("\n"), pl.col("message")]))
    )
    grouped = (
        lines.filter(multi)
        .with_columns(
            piece.alias("_piece"),
            pl.when(pl.col("message").str.contains(EXCEPTION_LINE) & ~pl.col("is_header"))
            .then(pl.col("message"))
            .alias("_exception"),
        )
        .group_by("record", maintain_order=True)
        .agg(
            pl.col(*first).first(),
            (pl.col("message").first() == TRACEBACK_HEADER).alias("_traceback"),
            pl.col("_piece").str.join("").alias("message"),
            pl.len().alias("_lines"),
            pl.col("_exception").drop_nulls().last().alias("_exception"),
        )
        .drop("record")
    )
    records = pl.concat([single, grouped], how="vertical").sort("line")
    filled = pl.col("ts").fill_null(strategy="forward").over("batch_file")
    if last_ts is not None:
        filled = filled.fill_null(pl.lit(last_ts, dtype=NS))
    return records.select(
        pl.col("line").cast(pl.Int32),
        pl.col("offset"),
        pl.lit(reader.source).alias("source"),
        pl.concat_str([pl.lit(f"{reader.name}."), pl.col("family")]).alias("reader"),
        filled.alias("ts"),
        pl.when(pl.col("ts").is_null() & filled.is_not_null())
        .then(pl.lit("inherited"))
        .otherwise(pl.col("ts_quality"))
        .alias("ts_quality"),
        pl.coalesce(
            severity_expr(pl.col("level")),
            pl.when(pl.col("_traceback")).then(pl.lit("ERROR")),
        ).alias("severity"),
        host_expr(pl.coalesce(pl.col("host"), hint("host", pl.String()))).alias("host"),
        pl.coalesce(pl.col("pod"), hint("pod", pl.String())).alias("pod"),
        pl.coalesce(pl.col("container"), hint("container", pl.String())).alias("container"),
        pl.lit(None, dtype=pl.String).alias("namespace"),
        hint("workload", pl.String()).alias("workload"),
        pl.coalesce(pl.col("rank"), hint("worker", pl.Int32())).alias("worker"),
        pl.col("logger"),
        pl.col("message"),
        pl.col("attrs"),
        compact_json(
            [
                ("tid", pl.col("tid"), "token"),
                ("lines", pl.when(pl.col("_lines") > 1).then(pl.col("_lines")), "number"),
                ("exception", pl.col("_exception"), "text"),
                (
                    "payload_ts",
                    pl.col("payload_ts").dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ"),
                    "token",
                ),
                ("stream", pl.col("stream"), "token"),
                ("continues_record", pl.when(pl.col("is_split")).then(pl.lit(True)), "bool"),
                ("attrs", pl.col("attrs"), "members"),
                *[(key, pl.lit(value), "text") for key, value in extra.items()],
            ]
        ).alias("extra"),
        chip_location(pl.col("message")).alias("_alias"),
        pl.lit("chip").alias("_alias_kind"),
        pl.col("batch_file"),
        *([pl.col("batch_anchor")] if "batch_anchor" in names else []),
    )


_FIRST: Final = (
    "batch_file",
    "line",
    "offset",
    "ts",
    "ts_quality",
    "level",
    "logger",
    "family",
    "host",
    "pod",
    "container",
    "rank",
    "tid",
    "payload_ts",
    "stream",
    "is_split",
    "attrs",
)


def year_anchor(
    head: bytes,
    ctx: ReadContext,
    tz: str,
    grammar_set: tuple[Grammar, ...] = grammars.GRAMMARS,
) -> dt.date:
    """A date near this file's logs, for stamps without a year.

    In order: ``--year``; the glog/klog ``Log file created at:`` header; the first line in the
    file's head whose own stamp carries a year; the file's modification time. Decided from the
    head of the file so it does not depend on how the file is cut into chunks. Where the year
    came from is recorded in ``ctx.year_from`` (``option``, ``header``, ``file``, ``mtime``):
    years taken from the modification time are checked again against the rest of the bundle
    when the case is finished.
    """
    if ctx.options.year is not None:
        ctx.year_from = "option"
        return dt.date(ctx.options.year, 7, 2)
    lines = head.decode("utf-8", "replace").splitlines()[:_ANCHOR_LINES]
    for line in lines[:20]:
        match = re.match(grammars.LOG_FILE_HEADER, line)
        if match:
            try:
                anchor = dt.date(*(int(part) for part in match.groups()))
            except ValueError:
                break
            if not 1678 <= anchor.year <= 2261:  # stamps are nanoseconds since 1970 (int64)
                break
            ctx.year_from = "header"
            return anchor
    ctx.year_from = "mtime"
    fallback = ctx.anchor_date()
    if not lines or not grammars.any_yearless(lines, grammar_set):
        return fallback  # nothing in this head needs a year
    if not grammars.any_dated(lines, grammar_set):
        return fallback  # nothing in this head could give one (a journal, a klog file)
    text = pl.Series(lines, dtype=pl.String).str.replace_all(grammars.ANSI_ESCAPE, "")
    parsed = grammars.parse_lines(text, anchor=fallback, tz=tz, grammars=grammar_set)
    dated = parsed.filter(pl.col("ts_quality").is_in(["exact", "inferred_tz"]))["ts"].drop_nulls()
    if dated.len():
        ctx.year_from = "file"
        first = dated.item(0)
        return first.date()  # type: ignore[no-any-return]
    return fallback
