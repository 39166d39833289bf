"""Log templates: every row's message reduced to its constant part, in polars.

A message is cut to its first line (a traceback: its first and last line) and its first
:data:`TEMPLATE_CHARS` characters, and every variable token is replaced by ``<*>`` with one
regex pass (:data:`VARIABLE`): UUIDs, IPv4 addresses (with a port), hex numbers, paths of two
or more components, and any token that holds a digit (numbers, ranks, host names such as
``gke-tpu-7``, ``rank3``, hashes). Dotted names without a digit stay: they are module and
exception names (``jaxlib.xla_extension.XlaRuntimeError``) far more often than host names.
Whitespace runs fold to one space. The regex passes run once per distinct message once its
digits are zeroed (:func:`digits_zeroed`: the same template, far fewer texts). The template
id is a hash of the template text, so the same template has the same id in every case
written by the same tool (a cross-run diff compares the text as well).

Masking was measured against a Drain-style parser on loghub samples (``benchmarks/RESULTS.md``,
"Log templates"): the regex pass runs inside polars over whole columns, needs no per-row
Python, and gives the same template for the same line whatever came before it (Drain's tree
depends on the order lines arrive in), which a cross-run diff needs.

The first analysis of a case writes, beside its rows (:func:`write_templates`, called by
:func:`analyzer.diagnose.patterns.make_patterns` right after matching; ``culprit match`` does
not: the tables do not depend on the catalogue):

* ``templates.parquet``: one row per template: id, text, rows, hosts, time buckets it
  appears in, first row, first time, whether any of its rows states an error and how
  plainly (:func:`error_rank`);
* ``template_hosts.parquet``: rows per template × host × time bucket (:data:`BUCKET_S`),
  with the first and last row and time of each cell: the small table the spatial and
  cross-run rules read;
* ``template_rows.parquet``: the template id of every row, with its time and host (row_id,
  template_id, ts, host): what the rules of one restart attempt group.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from analyzer.case.layout import TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE, TEMPLATES_FILE
from analyzer.case.store import Case
from analyzer.errors import CaseError

#: Characters of a message that make its template (a folded traceback's first lines).
TEMPLATE_CHARS: Final = 240
#: Width of the time buckets of ``template_hosts.parquet``, in seconds.
BUCKET_S: Final = 60
#: The key of the Parquet metadata that says how a templates file was made.
META_KEY: Final = "culprit.templates"
TEMPLATES_FORMAT: Final = "culprit-templates/1"
#: Bytes of message text :func:`digits_zeroed` works on at once (fits in a core's L2 cache).
ZERO_BLOCK: Final = 1 << 18
#: Seed of the hash that stands for a digits-zeroed key in :func:`_identified`.
_KEY_SEED: Final = 7
#: Bits of the key :func:`_cell_order` packs (a signed 64-bit integer's).
_ORDER_BITS: Final = 63
#: The placeholder of every masked token.
PLACEHOLDER: Final = "<*>"

#: One pass over the message: every alternative is a variable token.
VARIABLE: Final = "(?-u)" + "|".join(
    [
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        r"(?:[A-Za-z]:)?(?:[/\\][A-Za-z0-9_.@%+=,~-]+){2,}[/\\]?",
        # Numbers, hex, addresses with their port, ranks, host-7, rank3, hashes: any token
        # with a digit (ASCII classes: a third faster than Unicode ones in polars' regex).
        r"[A-Za-z0-9_.:+-]*[0-9][A-Za-z0-9_.:+-]*",
    ]
)
#: Severities that make a row error-level.
ERROR_SEVERITIES: Final = ("ERROR", "CRITICAL", "ALERT", "EMERGENCY")
#: Severities a prefix states as routine: a row of these says an error word in passing
#: (``FLAG: --fail-swap-on``) more often than it states a failure.
ROUTINE_SEVERITIES: Final = ("DEBUG", "INFO")
#: The vocabulary of failure, whatever the program: a row that uses it states an error.
ERROR_WORDS: Final = (
    r"(?i)\b(?:errors?|fatal|fail|failed|failing|failure|exception|panic|panicked|critical"
    r"|abort|aborted|aborting|killed|oom|oomkilled|out of memory|exhausted|timeout|timed out"
    r"|times out|refused|unable|cannot|can't|could not|couldn't|denied|invalid|crash|crashed"
    r"|segfault|segmentation fault|core dumped|sig(?:segv|abrt|kill|bus|ill|fpe|term)"
    r"|terminated|preempted|preemption|evicted|eviction|exit ?code|exit status|unhealthy"
    r"|not healthy|not ready"
    r"|blocked for more than|illegal|non-ok|deadline exceeded|unreachable|traceback)\b"
    r"|\w(?:Error|Exception)\b|^[EF]\d{4} "
)


#: The rules the tables are made by, as a digest kept in their metadata: tables made by other
#: rules are made again. (A change to the code of :func:`template_expr` itself bumps
#: :data:`TEMPLATES_FORMAT`.)
RULES: Final = hashlib.sha256(
    "\0".join(
        [
            VARIABLE,
            PLACEHOLDER,
            ERROR_WORDS,
            str(TEMPLATE_CHARS),
            str(BUCKET_S),
            *ERROR_SEVERITIES,
            *ROUTINE_SEVERITIES,
        ]
    ).encode()
).hexdigest()[:16]


def template_expr(message: pl.Expr) -> pl.Expr:
    """The template of ``message`` (a string expression): of its first line only (what a
    reader folded under a line varies from host to host), and for a Python traceback, whose
    first line is always the same header, of its last line too (the exception)."""
    sliced = message.str.slice(0, TEMPLATE_CHARS)
    # Most messages are one line: only those with a line end pay for the regex (a sixth of
    # the cost of running it on every message).
    head = (
        pl.when(sliced.str.contains("\n", literal=True))
        .then(sliced.str.extract(r"^([^\n]*)", 1))
        .otherwise(sliced)
    )
    tail = (
        pl.when(message.str.starts_with("Traceback"))
        .then(message.str.extract(r"([^\n]+)\n*$", 1).str.slice(0, TEMPLATE_CHARS))
        .otherwise(None)
    )
    return (
        pl.concat_str([head, tail], separator=" ... ", ignore_nulls=True)
        .str.replace_all(VARIABLE, PLACEHOLDER)
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
    )


def template_id(template: pl.Expr) -> pl.Expr:
    """A stable 64-bit id of a template text."""
    return template.hash(seed=26)


def error_rank(severity: pl.Expr, template: pl.Expr) -> pl.Expr:
    """How plainly a row states an error (lower is plainer; null: it does not): 0 an
    error-level severity and the words of failure, 1 the words without a routine severity,
    2 the severity alone, 3 the words under an INFO/DEBUG prefix. ``template`` is the row's
    template (its first line, and a traceback's exception)."""
    return _rank(severity, template.str.contains(ERROR_WORDS))


def _rank(severity: pl.Expr, worded: pl.Expr) -> pl.Expr:
    """:func:`error_rank` given whether the template uses the words of failure."""
    level = severity.cast(pl.String)
    high = level.is_in(ERROR_SEVERITIES)
    return (
        pl.when(high & worded)
        .then(0)
        .when(worded & ~level.is_in(ROUTINE_SEVERITIES))
        .then(1)
        .when(high)
        .then(2)
        .when(worded)
        .then(3)
        .otherwise(None)
        .cast(pl.Int8)
    )


def digits_zeroed(message: pl.Series) -> pl.Series:
    """``message`` with every ASCII digit replaced by ``0``: a key that maps to the same
    template as the message itself, and that the messages of one template mostly share.

    Every class of :data:`VARIABLE` holds all ten ASCII digits or none of them, so it matches
    the same spans in the key as in the message; any digit starts a match of its last
    alternative, so every digit ends up inside a masked span, and the text left between spans
    holds none. Slicing, line ends, ``Traceback`` and whitespace see the same characters (a
    digit is one byte, and the bytes of ``0``-``9`` never occur inside a multi-byte UTF-8
    character). A 10 M-row case holds 3 M distinct messages (steps, losses, timings) but 30 k
    distinct keys: the regex passes run on those.
    """
    array = message.rechunk().to_arrow(compat_level=pl.CompatLevel.oldest())
    validity, offsets, data = array.buffers()
    if data is None or data.size == 0:
        return message
    # Byte arithmetic over the text buffer, in place of a regex over each row (a tenth of
    # polars' str.replace_all): digit bytes 0x30-0x39 keep their high nibble only. A block
    # at a time, so the steps' scratch stays in the CPU's cache.
    text = np.frombuffer(data, dtype=np.uint8)
    zeroed = np.empty_like(text)
    scratch = np.empty(min(text.size, ZERO_BLOCK), dtype=np.uint8)
    for start in range(0, text.size, ZERO_BLOCK):
        block = text[start : start + ZERO_BLOCK]
        mask = scratch[: block.size]
        np.subtract(block, np.uint8(0x30), out=mask)
        np.less(mask, np.uint8(10), out=mask)
        np.multiply(mask, np.uint8(0x0F), out=mask)
        np.invert(mask, out=mask)
        np.bitwise_and(block, mask, out=zeroed[start : start + ZERO_BLOCK])
    keys = pa.LargeStringArray.from_buffers(
        len(array), offsets, pa.py_buffer(zeroed), validity, array.null_count, array.offset
    )
    return pl.Series(message.name, keys)


def templated(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (row_id, ts, host, severity, message) with template_id, template, error."""
    identified, texts = _identified(rows)
    return identified.join(texts, on="template_id", how="left", maintain_order="left").select(
        *rows.columns, "template", "template_id", "error_rank"
    )


def _key_hash(keys: pl.Series) -> pl.Series:
    """The 64-bit hash that stands for a digits-zeroed key."""
    return keys.hash(seed=_KEY_SEED)


def _identified(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``rows`` (row_id, ts, host, severity, message) with template_id and error_rank, and
    the text of each of their templates (template_id, template).

    Masking and the words of failure are regex passes over the text, and a case repeats
    itself: a 10 M-row incident has 3 M distinct messages but 30 k distinct messages once
    their digits are zeroed (:func:`digits_zeroed`), and a few dozen templates. Each key is
    masked once, each distinct template searched for the words once, and both mapped back
    to the rows (a null message too: its template is the empty one). The template's text is
    not copied onto every row (20 M strings at 4,096 hosts): the tables keep its id.
    """
    keys = digits_zeroed(rows["message"]).alias("_text")
    # A row finds its key's template through a 64-bit hash of the key: joining on the text
    # hashed and compared 1.5 GB of keys again at 4,096 hosts. Two keys of one call with the
    # same hash would take each other's template, so then the text is the join key.
    hashed = _key_hash(keys).alias("_key")
    distinct = pl.DataFrame([keys, hashed]).unique("_text")
    masks = distinct.lazy().with_columns(template_expr(pl.col("_text")).alias("template"))
    worded = (
        masks.select("template")
        .unique()
        .with_columns(pl.col("template").str.contains(ERROR_WORDS).alias("_worded"))
    )
    table = (
        masks.join(worded, on="template", how="left", nulls_equal=True)
        .with_columns(template_id(pl.col("template")).alias("template_id"))
        .collect()
    )
    if distinct.get_column("_key").n_unique() == distinct.height:
        ids = hashed.replace_strict(table["_key"], table["template_id"], return_dtype=pl.UInt64)
        words = hashed.replace_strict(table["_key"], table["_worded"], return_dtype=pl.Boolean)
    else:
        joined = keys.to_frame().join(
            table.select("_text", "template_id", "_worded"),
            on="_text",
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
        ids, words = joined["template_id"], joined["_worded"]
    identified = rows.with_columns(
        ids.alias("template_id"), _rank(pl.col("severity"), pl.lit(words)).alias("error_rank")
    )
    return identified, table.select("template_id", "template").unique("template_id")


def span_columns() -> list[pl.Expr]:
    """What a group of templated rows keeps: its rows, its first and last row and time."""
    return [
        pl.len().cast(pl.Int64).alias("rows"),
        pl.col("row_id").min().alias("first_row"),
        pl.col("row_id").max().alias("last_row"),
        pl.col("ts").min().alias("first_ts"),
        pl.col("ts").max().alias("last_ts"),
    ]


def _cells(rows: pl.DataFrame) -> pl.DataFrame:
    """Rows per template × host × bucket, with first/last row and time, from templated rows
    (row_id, template_id, ts, host), sorted by template, host name and bucket."""
    cells = (
        rows.lazy()
        .group_by("template_id", "host", pl.col("ts").dt.truncate(f"{BUCKET_S}s").alias("bucket"))
        .agg(*span_columns())
        .collect()
    )
    order = _cell_order(cells)
    if order is None:
        # More templates × hosts × buckets than one 64-bit key holds: sort on the three
        # columns, the host by its rank among the case's hosts (an Enum of their names).
        named = cells.with_columns(pl.col("host").cast(pl.String))
        hosts = pl.Enum(named["host"].drop_nulls().unique().sort())
        return named.sort("template_id", pl.col("host").cast(hosts), "bucket", nulls_last=True)
    return (
        cells.with_columns(order.alias("_order"), pl.col("host").cast(pl.String))
        .sort("_order")
        .drop("_order")
    )


def _cell_order(cells: pl.DataFrame) -> pl.Expr | None:
    """One 64-bit key per cell that sorts as (template_id, host name, bucket), nulls last:
    each part's rank among its distinct values, packed. Sorting 4 M cells on the three
    columns took 2 s (row encoding of every comparison), on this key 0.4 s. None when the
    ranks do not fit in :data:`_ORDER_BITS` bits."""
    templates = cells.get_column("template_id").unique().sort()
    names = cells.get_column("host").drop_nulls().unique()
    # The host's category code, ranked by its name (the order of the names' sort).
    codes = names.to_physical()
    host_rank = names.cast(pl.String).rank("ordinal").cast(pl.UInt64) - 1
    minute = pl.col("bucket").dt.epoch("s") // BUCKET_S
    bounds = cells.select(minute.min().alias("low"), minute.max().alias("high")).row(0)
    low = bounds[0] if bounds[0] is not None else 0
    high = bounds[1] if bounds[1] is not None else 0
    span_t, span_h, span_b = len(templates), len(names) + 1, high - low + 2
    if span_t * span_h * span_b >= 1 << _ORDER_BITS:
        return None
    template = pl.col("template_id").replace_strict(
        templates, pl.Series(range(span_t), dtype=pl.UInt64), return_dtype=pl.UInt64
    )
    host = (
        pl.col("host")
        .to_physical()
        .replace_strict(codes, host_rank, default=span_h - 1, return_dtype=pl.UInt64)
    )
    bucket = (minute - low).fill_null(span_b - 1).cast(pl.UInt64)
    return (template * span_h + host) * span_b + bucket


def _in_row_order(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """``parts`` (frames with a row_id) as one frame sorted by row_id; without sorting when
    each part is sorted and they follow one another (row files of one ingest are)."""
    if not parts:
        return pl.DataFrame(
            schema={
                "row_id": pl.Int64,
                "template_id": pl.UInt64,
                "ts": pl.Datetime("ns", "UTC"),
                "host": pl.String,
            }
        )
    ids = [part["row_id"] for part in parts if part.height]
    ordered = all(column.is_sorted() for column in ids) and all(
        before[-1] < after[0] for before, after in itertools.pairwise(ids)
    )
    if len({part.schema["host"] for part in parts}) > 1:
        # Row files that disagree on the host's type (a category in one, text in another).
        parts = [part.with_columns(pl.col("host").cast(pl.String)) for part in parts]
    joined = pl.concat(parts)
    return joined if ordered else joined.sort("row_id")


def write_templates(files: list[Path], directory: Path) -> int:
    """Template every row of ``files`` (row files of a case) and write the three tables into
    ``directory`` (the case's); returns the number of templates. Tables already there that
    were made from these very files (names, sizes and row counts) by these rules are kept:
    a case's rows never change once written (an ingest writes a new directory), and
    re-matching a case would otherwise template it all again (half of a re-analysis).

    Raises:
        CaseError: a table cannot be written.
    """
    source = _source(files)
    if _made_from(directory, source):
        return int(pq.read_metadata(directory / TEMPLATES_FILE).num_rows)
    columns = ("row_id", "ts", "host", "severity", "message")
    per_row: list[pl.DataFrame] = []
    texts: list[pl.DataFrame] = []
    for file in files:
        # One row file at a time: only a file's messages are held at once; what the tables
        # keep of a row is its id, template id, time and host (a category: 4 bytes).
        rows, text = _identified(pl.read_parquet(file, columns=list(columns)))
        per_row.append(rows.select("row_id", "template_id", "ts", "host"))
        texts.append(
            rows.group_by("template_id")
            .agg(pl.col("error_rank").min(), pl.col("row_id").min().alias("first_row"))
            .join(text, on="template_id")
            .select("template_id", "template", "error_rank", "first_row")
        )
    templates_of_rows = _in_row_order(per_row)
    table_cells = _cells(templates_of_rows) if files else empty_cells()
    summary = (
        table_cells.group_by("template_id")
        .agg(
            pl.col("rows").sum(),
            pl.col("host").drop_nulls().n_unique().cast(pl.Int64).alias("hosts"),
            pl.col("bucket").drop_nulls().n_unique().cast(pl.Int64).alias("buckets"),
            pl.col("first_ts").min(),
        )
        .join(
            pl.concat(texts)
            .sort("first_row")
            .group_by("template_id")
            .agg(
                pl.col("template").first(),
                pl.col("error_rank").min(),
                pl.col("first_row").min(),
            )
            .with_columns(pl.col("error_rank").is_not_null().alias("error")),
            on="template_id",
        )
        .select(
            "template_id",
            "template",
            "rows",
            "hosts",
            "buckets",
            "first_row",
            "first_ts",
            "error",
            "error_rank",
        )
        .sort("first_row")
        if texts
        else empty_templates()
    )
    rows_total = templates_of_rows.height
    meta = json.dumps(
        {
            "format": TEMPLATES_FORMAT,
            "rows_scanned": rows_total,
            "rules": RULES,
            "source": source,
        }
    )
    _write(
        templates_of_rows.with_columns(pl.col("host").cast(pl.String)),
        directory / TEMPLATE_ROWS_FILE,
        meta,
    )
    _write(table_cells, directory / TEMPLATE_HOSTS_FILE, meta)
    _write(summary, directory / TEMPLATES_FILE, meta)
    return summary.height


def _source(files: list[Path]) -> list[list[Any]]:
    """What tables of ``files`` are made from: each file's name, size and row count."""
    return [[file.name, file.stat().st_size, pq.read_metadata(file).num_rows] for file in files]


def _made_from(directory: Path, source: list[list[Any]]) -> bool:
    """Whether the three tables in ``directory`` were made from ``source`` by these rules."""
    for name in (TEMPLATES_FILE, TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE):
        path = directory / name
        try:
            raw = pl.read_parquet_metadata(path).get(META_KEY) if path.is_file() else None
            meta = json.loads(raw) if raw else {}
        except (OSError, ValueError, pl.exceptions.PolarsError):
            return False
        if not isinstance(meta, dict) or (
            meta.get("format"),
            meta.get("rules"),
            meta.get("source"),
        ) != (TEMPLATES_FORMAT, RULES, source):
            return False
    return True


def empty_cells() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "template_id": pl.UInt64,
            "host": pl.String,
            "bucket": pl.Datetime("ns", "UTC"),
            "rows": pl.Int64,
            "first_row": pl.Int64,
            "last_row": pl.Int64,
            "first_ts": pl.Datetime("ns", "UTC"),
            "last_ts": pl.Datetime("ns", "UTC"),
        }
    )


def empty_templates() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "template_id": pl.UInt64,
            "template": pl.String,
            "rows": pl.Int64,
            "hosts": pl.Int64,
            "buckets": pl.Int64,
            "first_row": pl.Int64,
            "first_ts": pl.Datetime("ns", "UTC"),
            "error": pl.Boolean,
            "error_rank": pl.Int8,
        }
    )


def _write(frame: pl.DataFrame, path: Path, meta: str) -> None:
    """Write atomically (a reader never sees half a file)."""
    temporary = path.with_name(f".{path.name}.partial")
    try:
        frame.write_parquet(
            temporary, compression="zstd", compression_level=1, metadata={META_KEY: meta}
        )
        temporary.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise CaseError(f"cannot write {path.name}: {exc}", path=str(path.parent)) from None


def templates_current(case: Case) -> bool:
    """Whether the case's template tables exist and cover its rows."""
    paths = [case.path / name for name in (TEMPLATES_FILE, TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE)]
    if not all(path.is_file() for path in paths):
        return False
    raw = pl.read_parquet_metadata(paths[0]).get(META_KEY)
    meta = json.loads(raw) if raw else {}
    return bool(
        meta.get("format") == TEMPLATES_FORMAT and meta.get("rows_scanned") == case.meta.counts.rows
    )
