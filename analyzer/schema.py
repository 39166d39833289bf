"""The canonical row: one Arrow schema for every row of every source, defined once.

Readers build polars frames with any subset of these columns; :func:`conform` fills the rest
with nulls and casts to the exact Arrow types. Severity and host normalization live here and
nowhere else, as polars expressions, so every reader applies the same rules.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import polars as pl
import pyarrow as pa

from analyzer import defaults

_DICT: Final = pa.dictionary(pa.int32(), pa.string())

#: The canonical row (ARCHITECTURE.md, "The canonical row"). Order matters: Parquet files of a
#: case are written with exactly this schema.
CANONICAL_SCHEMA: Final = pa.schema(
    [
        pa.field("row_id", pa.int64(), nullable=False),
        pa.field("file_id", pa.int32(), nullable=False),
        pa.field("line", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("source", _DICT, nullable=False),
        pa.field("reader", _DICT, nullable=False),
        pa.field("ts", pa.timestamp("ns", tz="UTC")),
        pa.field("ts_quality", _DICT, nullable=False),
        pa.field("severity", _DICT, nullable=False),
        pa.field("host", _DICT),
        pa.field("pod", _DICT),
        pa.field("container", _DICT),
        pa.field("namespace", _DICT),
        pa.field("workload", _DICT),
        pa.field("worker", pa.int32()),
        pa.field("slice", pa.int32()),
        pa.field("attempt", pa.int32()),
        pa.field("logger", _DICT),
        pa.field("message", pa.large_string(), nullable=False),
        pa.field("extra", pa.large_string()),
        pa.field("insert_id", pa.string()),
    ]
)

COLUMNS: Final = tuple(CANONICAL_SCHEMA.names)

SOURCES: Final = ("cloud_logging", "kubelet", "modelarts", "diagon", "text")

#: How much to trust ``ts``: ``exact`` has date, time and zone; ``inferred_year`` had no year;
#: ``inferred_tz`` had a date but no zone; ``inherited`` came from the record before it;
#: ``missing`` means ``ts`` is null; ``out_of_range`` means the row had a time the case cannot
#: place (outside :data:`TS_EARLIEST`..:data:`TS_LATEST`, beyond what nanoseconds since 1970
#: hold, or days away from the rest of its file): ``ts`` is null, the row and its line stay.
TS_QUALITIES: Final = (
    "exact",
    "inferred_year",
    "inferred_tz",
    "inherited",
    "missing",
    "out_of_range",
)
#: The first instant a row's time may have...
TS_EARLIEST: Final = dt.datetime(defaults.TS_EARLIEST_YEAR, 1, 1, tzinfo=dt.UTC)
#: ...and the first it may no longer have.
TS_LATEST: Final = dt.datetime(defaults.TS_LATEST_YEAR + 1, 1, 1, tzinfo=dt.UTC)


def plausible_ts(ts: pl.Expr) -> pl.Expr:
    """Whether ``ts`` lies in the years a case accepts (null stays null)."""
    return ts.is_between(
        pl.lit(TS_EARLIEST, dtype=pl.Datetime("ns", "UTC")),
        pl.lit(TS_LATEST, dtype=pl.Datetime("ns", "UTC")),
        closed="left",
    )


#: Cloud Logging's severity scale, lowest first.
SEVERITIES: Final = (
    "DEFAULT",
    "DEBUG",
    "INFO",
    "NOTICE",
    "WARNING",
    "ERROR",
    "CRITICAL",
    "ALERT",
    "EMERGENCY",
)

# Every spelling of a level culprit has met, upper-cased, onto the canonical scale: glog/klog
# letters, Python and CANN level names, syslog PRIORITY digits and Cloud Logging's numeric
# LogSeverity values.
_SEVERITY_ALIASES: Final[dict[str, str]] = {
    **{name: name for name in SEVERITIES},
    "I": "INFO",
    "W": "WARNING",
    "E": "ERROR",
    "F": "CRITICAL",
    "D": "DEBUG",
    "V": "DEBUG",
    "TRACE": "DEBUG",
    "VERBOSE": "DEBUG",
    "FINE": "DEBUG",
    "INFORMATION": "INFO",
    "EVENT": "INFO",
    "WARN": "WARNING",
    # Kubernetes event types.
    "NORMAL": "INFO",
    "ERR": "ERROR",
    "EXCEPTION": "ERROR",
    "SEVERE": "ERROR",
    "CRIT": "CRITICAL",
    "FATAL": "CRITICAL",
    "EMERG": "EMERGENCY",
    "PANIC": "EMERGENCY",
    "0": "EMERGENCY",
    "1": "ALERT",
    "2": "CRITICAL",
    "3": "ERROR",
    "4": "WARNING",
    "5": "NOTICE",
    "6": "INFO",
    "7": "DEBUG",
    "100": "DEBUG",
    "200": "INFO",
    "300": "NOTICE",
    "400": "WARNING",
    "500": "ERROR",
    "600": "CRITICAL",
    "700": "ALERT",
    "800": "EMERGENCY",
}


def severity_expr(raw: pl.Expr) -> pl.Expr:
    """Map a raw level (``E``, ``warn``, ``3``, ``ERROR`` …) onto :data:`SEVERITIES`.

    Unknown or null levels give null, so callers can ``coalesce`` several candidates and end
    with ``DEFAULT``.
    """
    return (
        raw.cast(pl.String)
        .str.strip_chars()
        .str.to_uppercase()
        .replace_strict(_SEVERITY_ALIASES, default=None, return_dtype=pl.String)
    )


def normalize_severity(raw: str | None) -> str | None:
    """Scalar form of :func:`severity_expr`, for single values (tests, options)."""
    return pl.select(severity_expr(pl.lit(raw, dtype=pl.String))).item()  # type: ignore[no-any-return]


# Domain suffixes that name the same VM: ``gke-x.c.my-proj.internal`` and ``gke-x`` are one host.
_HOST_SUFFIX: Final = r"\.(?:c\.[a-z0-9-]+\.internal|[a-z0-9-]+\.internal|internal|localdomain)$"


def host_expr(raw: pl.Expr) -> pl.Expr:
    """Normalize a host name: trimmed, lower-case, no trailing dot or GCE internal domain.

    Empty results become null so a missing host is never the empty string.
    """
    host = (
        raw.cast(pl.String)
        .str.strip_chars()
        .str.strip_chars_end(".")
        .str.to_lowercase()
        .str.replace(_HOST_SUFFIX, "")
    )
    # replace, not when/then: an eager select would compute ``host`` once per reference.
    return host.replace("", None)


def normalize_host(raw: str | None) -> str | None:
    """Scalar form of :func:`host_expr`."""
    return pl.select(host_expr(pl.lit(raw, dtype=pl.String))).item()  # type: ignore[no-any-return]


_POLARS_TYPES: Final[dict[str, pl.DataType]] = {
    "row_id": pl.Int64(),
    "file_id": pl.Int32(),
    "line": pl.Int32(),
    "offset": pl.Int64(),
    "ts": pl.Datetime("ns", "UTC"),
    "worker": pl.Int32(),
    "slice": pl.Int32(),
    "attempt": pl.Int32(),
}


def conform(frame: pl.DataFrame) -> pa.Table:
    """Return ``frame`` as an Arrow table with exactly :data:`CANONICAL_SCHEMA`.

    Missing columns become nulls; columns not in the schema are dropped. A null ``ts`` forces
    ``ts_quality = missing`` and a null severity becomes ``DEFAULT`` so those invariants hold
    for every reader.
    """
    exprs = []
    for name in COLUMNS:
        dtype = _POLARS_TYPES.get(name, pl.String())
        column = pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype=dtype)
        exprs.append(column.alias(name))
    shaped = frame.select(exprs).with_columns(
        pl.when(pl.col("ts").is_null())
        .then(pl.lit("missing"))
        .otherwise(pl.col("ts_quality").fill_null("exact"))
        .alias("ts_quality"),
        pl.col("severity").fill_null("DEFAULT"),
        pl.col("message").fill_null(""),
    )
    return shaped.to_arrow().cast(CANONICAL_SCHEMA)


def empty_rows() -> pa.Table:
    """An empty table with the canonical schema."""
    return CANONICAL_SCHEMA.empty_table()
