"""Pull many fields out of many JSON objects at once, with DuckDB.

Readers of JSON records (Cloud Logging entries, journald JSON) declare the fields they want as
named lists of JSON paths (alternatives, first non-null wins) and get back a polars frame with
one column per name. Each record is parsed once by DuckDB's JSON functions; records that are
not valid JSON objects are quarantined here, with their line, offset and raw bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.framing import LineChunk, iter_line_chunks
from analyzer.streams import Readable

if TYPE_CHECKING:
    import duckdb

_LOCAL = threading.local()
_STRING_VIEWS: Final = pl.CompatLevel.newest()


def connection() -> duckdb.DuckDBPyConnection:
    """This thread's DuckDB connection (opening one costs ~25 ms; bundles have many files)."""
    existing: duckdb.DuckDBPyConnection | None = getattr(_LOCAL, "connection", None)
    if existing is None:
        # Imported here: a bundle without JSON never pays for DuckDB.
        import duckdb

        existing = duckdb.connect()
        # Strings handed over as Arrow string views, polars' own layout: neither the records
        # going in nor the fields coming out are copied into another string layout.
        existing.execute("SET produce_arrow_string_view = true")
        # DuckDB draws a progress bar on a terminal for a long query, --quiet or not.
        existing.execute("SET enable_progress_bar = false")
        _LOCAL.connection = existing
    return existing


def _sql_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


@dataclass(frozen=True)
class FieldSpec:
    """Fields to extract: ``scalars`` as strings, ``objects`` as JSON text (verbatim).

    Each maps a column name to JSON paths tried in order.
    """

    scalars: dict[str, list[str]]
    objects: dict[str, list[str]]
    # Derived once from the two above (set in __post_init__ of the frozen instance).
    _index: dict[str, list[int]] = field(init=False, repr=False, compare=False)
    _raw_index: dict[str, list[int]] = field(init=False, repr=False, compare=False)
    _sql: str = field(init=False, repr=False, compare=False)
    _fast_sql: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        paths, index = _flatten(self.scalars)
        raw_paths, raw_index = _flatten(self.objects)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_raw_index", raw_index)
        # Each JSON function parses the record again, so validity and type are not asked for
        # every record: a record whose extraction succeeded is valid JSON (``f`` not null),
        # and only the few whose extraction failed are classified (:data:`_CLASSIFY`).
        object.__setattr__(self, "_sql", _select(paths, raw_paths, guarded=True))
        object.__setattr__(self, "_fast_sql", _select(paths, raw_paths, guarded=False))

    def columns(self) -> list[pl.Expr]:
        """Expressions turning the extracted lists into one column per field."""
        index, raw_index = self._index, self._raw_index
        scalars = [
            pl.coalesce([pl.col("f").list.get(i, null_on_oob=True) for i in positions]).alias(name)
            for name, positions in index.items()
        ]
        objects = [
            pl.coalesce([pl.col("r").list.get(i, null_on_oob=True) for i in positions]).alias(
                f"raw_{name}"
            )
            for name, positions in raw_index.items()
        ]
        return scalars + objects


def _select(paths: list[str], raw_paths: list[str], *, guarded: bool) -> str:
    """The extraction query. ``guarded``: each record's extraction inside ``try`` (null where
    it fails); unguarded, one record DuckDB cannot parse fails the whole query, and the
    sub-objects come back as the JSON type's text without a cast to VARCHAR (the same text:
    JSON is VARCHAR underneath). The guards and the cast cost a fifth of the extraction."""
    fields = f"json_extract_string(text, {_sql_list(paths)})"
    if not raw_paths:
        objects = "NULL::VARCHAR[]"
    elif guarded:
        objects = f"CAST(json_extract(text, {_sql_list(raw_paths)}) AS VARCHAR[])"
    else:
        objects = f"json_extract(text, {_sql_list(raw_paths)})"
    if guarded:
        fields = f"try({fields})"
        objects = f"try({objects})" if raw_paths else objects
    return f"SELECT {fields} AS f, {objects} AS r FROM entries"


def _flatten(spec: dict[str, list[str]]) -> tuple[list[str], dict[str, list[int]]]:
    paths: list[str] = []
    index: dict[str, list[int]] = {}
    for name, alternatives in spec.items():
        index[name] = []
        for path in alternatives:
            index[name].append(len(paths))
            paths.append(path)
    return paths, index


_OBJECT: Final = "OBJECT"
#: Whether records whose extraction failed are valid JSON objects after all (DuckDB's own
#: answer, as for every record before; such a record keeps its row, with null fields).
_CLASSIFY: Final = "SELECT json_valid(text) AS valid, try(json_type(text)) AS kind FROM entries"
#: A record that parsed is an object exactly when its first byte past JSON whitespace (all
#: DuckDB's parser skips) is ``{``.
_OPENS_OBJECT: Final = r"^[ \t\r\n]*\{"


def json_lines(
    content: Readable, ctx: ReadContext
) -> Iterator[tuple[pl.Series, npt.NDArray[np.int32], npt.NDArray[np.int64]]]:
    """The records of a JSON-lines stream: (texts, line numbers, offsets) per chunk.

    Blank lines are counted as blank; lines cut at ``--max-line-bytes`` are quarantined (a
    cut JSON record cannot be parsed); lines with invalid UTF-8 are kept and noted.
    """
    for chunk in iter_line_chunks(content, ctx):
        text, repaired = chunk.text()
        lines = chunk.line_numbers
        ctx.counts.records += len(chunk)
        blank = _blank_lines(chunk, text)
        keep = ~blank
        ctx.counts.blank += int(blank.sum())
        for index, length in chunk.oversize.items():
            keep[index] = False
            ctx.drop(
                int(lines[index]),
                int(chunk.offsets[index]),
                f"line is {length:,} bytes, longer than --max-line-bytes; not parsed",
                chunk.raw_line(index),
            )
        for index in np.flatnonzero(repaired & keep).tolist():
            ctx.repaired(
                int(lines[index]),
                int(chunk.offsets[index]),
                "line is not valid UTF-8; invalid bytes were replaced by U+FFFD",
            )
        if keep.all():  # the usual case: no copy of the chunk's text
            yield text, lines, chunk.offsets
        else:
            yield text.filter(keep), lines[keep], chunk.offsets[keep]


#: First bytes of a line that may be blank: ASCII whitespace, and any non-ASCII byte (a line
#: of Unicode spaces is blank too).
_MAYBE_BLANK: Final = np.array([9, 10, 11, 12, 13, 28, 29, 30, 31, 32, *range(128, 256)])


def _blank_lines(chunk: LineChunk, text: pl.Series) -> npt.NDArray[np.bool_]:
    """Which lines hold nothing but whitespace.

    Only lines that are empty or start with a byte that may be whitespace are stripped: a
    JSON record starts with ``{``, so a chunk's text is not copied just to find none.
    """
    lengths = chunk.ends - chunk.starts
    if lengths.size == 0:
        return np.zeros(0, dtype=np.bool_)
    data = np.frombuffer(chunk.data, dtype=np.uint8)
    first = data[np.minimum(chunk.starts, max(len(data) - 1, 0))] if len(data) else lengths
    blank: npt.NDArray[np.bool_] = lengths == 0
    maybe = np.flatnonzero(~blank & np.isin(first, _MAYBE_BLANK))
    if maybe.size:
        stripped = text.gather(maybe).str.strip_chars().str.len_bytes() == 0
        blank[maybe] = stripped.to_numpy()
    return blank


def extract(
    spec: FieldSpec,
    texts: pl.Series,
    lines: npt.NDArray[np.int32],
    offsets: npt.NDArray[np.int64],
    ctx: ReadContext,
    what: str,
) -> pl.DataFrame:
    """The records of ``texts`` that are JSON objects, with ``spec``'s fields as columns plus
    ``entry`` (the record's text), ``line`` and ``offset``.

    Records that are not valid JSON, or not objects, are quarantined (``what`` names what an
    object should have been, for the reason).
    """
    if texts.len() == 0:
        return pl.DataFrame()
    import duckdb

    try:
        parsed = _query(spec._fast_sql, texts)
    except duckdb.Error:
        # A record that is not JSON (rare): the chunk is extracted again with every record
        # guarded, the failed ones null, and classified below.
        parsed = _query(spec._sql, texts)
    frame = parsed.with_columns(
        entry=texts,
        line=pl.Series(lines, dtype=pl.Int32),
        offset=pl.Series(offsets, dtype=pl.Int64),
    )
    valid = frame["f"].is_not_null()
    good = valid & texts.str.contains(_OPENS_OBJECT)
    if not valid.all():
        failed = np.flatnonzero(~valid.to_numpy())
        checked = _query(_CLASSIFY, texts.gather(failed))
        valid = valid.clone().scatter(failed, checked["valid"].fill_null(False))
        is_object = (checked["valid"] & (checked["kind"] == _OBJECT)).fill_null(False)
        good = good.scatter(failed, is_object)
    if good.all():  # the usual case: no copy of the chunk's columns
        return frame.with_columns(spec.columns()).drop("f", "r")
    frame = frame.with_columns(valid.alias("valid"))
    for line, offset, is_valid, text in (
        frame.filter(~good).select("line", "offset", "valid", "entry").iter_rows()
    ):
        reason = "not valid JSON" if not is_valid else f"JSON value is not an object ({what})"
        ctx.drop(line, offset, reason, text.encode()[:4096])
    return frame.filter(good).with_columns(spec.columns()).drop("valid", "f", "r")


def _query(sql: str, texts: pl.Series) -> pl.DataFrame:
    """``sql`` over the records ``texts`` (the table ``entries``, column ``text``)."""
    db = connection()
    db.register("entries", pa.table({"text": texts.to_arrow(compat_level=_STRING_VIEWS)}))
    try:
        parsed = pl.from_arrow(db.sql(sql).to_arrow_table())
    finally:
        db.unregister("entries")
    assert isinstance(parsed, pl.DataFrame)
    return parsed
