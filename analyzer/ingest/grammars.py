"""Line prefix grammars (absl/glog, TF tsl, Python logging, log4j, syslog …), vectorized.

:func:`parse_lines` takes a column of single lines and returns, per line, the grammar that
matched, the level, logger, timestamp and the message with the prefix removed. Wrappers that
other tools put in front of a line (``kubectl logs --prefix``, ``--timestamps``, CRI framing,
torchrun ``[rankN]:``) are peeled off first and kept as fields. Every grammar is one anchored
regex run over the whole column by polars; no Python code runs per line.

Grammar texts follow ``../shared/reference/formats.md`` §2.1, §5.1 and §5.4.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Final, Literal

import polars as pl

from analyzer.ingest import timestamps as tsp

StampKind = Literal["mmdd", "full", "epoch", "zoned", "yymmdd", "yymmdd_compact", "syslog", "none"]


@dataclass(frozen=True)
class Grammar:
    """One line grammar.

    ``pattern`` is anchored and uses the named groups ``lvl`` and ``msg`` (always), and
    optionally ``stamp``, ``zone``, ``logger``, ``tid`` and ``host``. ``family`` becomes the
    row's reader suffix (``text.absl``).
    """

    name: str
    family: str
    pattern: str
    stamp: StampKind


_LOGGER_FILE: Final = r"(?P<logger>[^ :\]]+:\d+)"
# The message may span lines when a Cloud Logging agent merged a traceback into one entry.
_MSG: Final = r"(?P<msg>(?s:.*))$"
_HMS: Final = r"\d{2}:\d{2}:\d{2}"
_ISO_LOCAL: Final = rf"\d{{4}}-\d{{2}}-\d{{2}}[ T]{_HMS}(?:[,.]\d{{1,9}})?"
_PY_LEVEL: Final = "DEBUG|INFO|WARNING|ERROR|CRITICAL"
_JAVA_LEVEL: Final = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE"

#: Tried in this order; the first match wins. Order matters where grammars overlap: the
#: pre-``InitializeLog`` epoch form of absl must come before the ``MMDD`` form.
GRAMMARS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "absl_epoch",
        "absl",
        rf"^(?P<lvl>[IWEF])0000 00:00:(?P<stamp>\d+\.\d+) +(?P<tid>\d+) "
        rf"{_LOGGER_FILE}\] ?{_MSG}",
        "epoch",
    ),
    Grammar(
        "absl",
        "absl",
        rf"^(?P<lvl>[IWEF])(?P<stamp>\d{{4}} {_HMS}\.\d{{6}}) +(?P<tid>\d+) "
        rf"{_LOGGER_FILE}\] ?{_MSG}",
        "mmdd",
    ),
    Grammar(
        "tsl",
        "absl",
        rf"^(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} {_HMS}\.\d{{6}}): (?P<lvl>[IWEF])(?: +(?P<tid>\d+))? "
        rf"(?P<logger>[^:\]]+:\d+)\] ?{_MSG}",
        "full",
    ),
    Grammar(
        "jax_debug",
        "python",
        rf"^(?P<lvl>{_PY_LEVEL}):(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} {_HMS},\d{{3}}):"
        rf"(?P<logger>[^:]+:\d+): ?{_MSG}",
        "full",
    ),
    Grammar(
        "python_basic",
        "python",
        rf"^(?P<lvl>{_PY_LEVEL}):(?P<logger>[^:\s]*):{_MSG}",
        "none",
    ),
    Grammar(
        "asctime",
        "python",
        rf"^(?P<stamp>{_ISO_LOCAL}) - (?:(?P<logger>\S+) - )?(?P<lvl>[A-Z]+) - {_MSG}",
        "full",
    ),
    Grammar(
        "vllm",
        "vllm",
        rf"^(?:\([^)]*\) )?(?P<lvl>{_PY_LEVEL}) (?P<stamp>\d{{2}}-\d{{2}} {_HMS}) "
        rf"\[(?P<logger>[^\]:]+:\d+)\] {_MSG}",
        "mmdd",
    ),
    Grammar(
        "log4j",
        "log4j",
        rf"^(?P<stamp>{_ISO_LOCAL})(?P<zone>Z|[+-]\d{{2}}:?\d{{2}})?\s+(?:(?P<tid>\d+)\s+)?"
        rf"\[?(?P<lvl>{_JAVA_LEVEL})\]?\s+{_MSG}",
        "full",
    ),
    Grammar(
        "spark",
        "log4j",
        rf"^(?P<stamp>\d{{2}}/\d{{2}}/\d{{2}} {_HMS})\s+(?P<lvl>{_JAVA_LEVEL})"
        rf"\s+(?:(?P<logger>[\w.$]+):\s)?{_MSG}",
        "yymmdd",
    ),
    Grammar(
        "hdfs",
        "log4j",
        rf"^(?P<stamp>\d{{6}} \d{{6}}) (?P<tid>\d+) (?P<lvl>{_JAVA_LEVEL}) "
        rf"(?P<logger>[\w.$]+): {_MSG}",
        "yymmdd_compact",
    ),
    Grammar(
        "syslog",
        "syslog",
        rf"^(?P<stamp>[A-Z][a-z]{{2}} +\d{{1,2}} {_HMS}(?:\.\d{{1,6}})?) (?P<host>[^\s\[\]:]+) +"
        rf"(?P<logger>[^\[:\s](?:[^\[:]*[^\[:\s])?)(?:\[(?P<tid>\d+)\])?: ?(?P<lvl>){_MSG}",
        "syslog",
    ),
)

_FIELDS: Final = ("lvl", "msg", "stamp", "zone", "logger", "tid", "host")

# Wrappers other tools add in front of a line; peeled off in this order.
_KUBECTL_PREFIX: Final = r"^(?P<all>\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] )"
_TIMESTAMP_PREFIX: Final = (
    r"^(?P<all>(?P<rfc>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) "
    r"(?:(?P<stream>stdout|stderr) (?P<tag>[PF]) )?)"
)
_RANK_PREFIX: Final = r"^(?P<all>\[rank(?P<rank>\d+)\]: ?)"
ANSI_ESCAPE: Final = r"\x1b\[[0-9;?]*[A-Za-z]"
LOG_FILE_HEADER: Final = r"^Log file created at: (\d{4})/(\d{2})/(\d{2}) "


def _peel(frame: pl.DataFrame, pattern: str, fields: dict[str, str]) -> pl.DataFrame:
    """Extract a wrapper prefix from ``rest`` into ``fields`` (group -> column) and drop it."""
    groups = pl.col("rest").str.extract_groups(pattern)
    peeled = frame.with_columns(groups.alias("_w")).with_columns(
        *[pl.col("_w").struct.field(group).alias(column) for group, column in fields.items()],
        pl.col("rest")
        .str.slice(pl.col("_w").struct.field("all").str.len_chars().fill_null(0))
        .alias("rest"),
    )
    return peeled.drop("_w")


def parse_lines(text: pl.Series, *, anchor: pl.Series | dt.date, tz: str = "UTC") -> pl.DataFrame:
    """Parse the prefix of every line in ``text``.

    Args:
        text: one line per value (no line terminators).
        anchor: a date near the logs (one per line as a Date Series, or one for all), used
            to give year-less timestamps their year.
        tz: zone of local timestamps without an offset.

    Returns:
        A frame aligned with ``text`` with columns ``grammar`` (null when no grammar matched),
        ``family`` (``plain`` when none matched), ``level``, ``logger``, ``tid``, ``host``,
        ``message`` (the line without its prefixes), ``ts``, ``ts_quality``, ``payload_ts``
        (the line's own stamp when a wrapper also had one), ``pod``, ``container``, ``rank``
        and ``stream``.
    """
    frame = pl.DataFrame({"rest": text})
    if isinstance(anchor, dt.date):
        anchor_expr = pl.lit(anchor, dtype=pl.Date)
    else:
        frame = frame.with_columns(anchor.alias("_anchor").cast(pl.Date))
        anchor_expr = pl.col("_anchor")
    frame = _peel(frame, _KUBECTL_PREFIX, {"pod": "pod", "container": "container"})
    frame = _peel(
        frame, _TIMESTAMP_PREFIX, {"rfc": "wrap_ts", "stream": "stream", "tag": "cri_tag"}
    )
    frame = _peel(frame, _RANK_PREFIX, {"rank": "rank"})

    matches = [
        pl.col("rest").str.extract_groups(g.pattern).alias(f"_g{i}") for i, g in enumerate(GRAMMARS)
    ]
    frame = frame.with_columns(matches)
    hit = [pl.col(f"_g{i}").struct.field("msg").is_not_null() for i in range(len(GRAMMARS))]

    def pick(field: str) -> pl.Expr:
        expr: Any = None
        for i, grammar in enumerate(GRAMMARS):
            if field not in _group_names(grammar.pattern):
                value = pl.lit(None, dtype=pl.String)
            else:
                value = pl.col(f"_g{i}").struct.field(field)
            expr = pl.when(hit[i]).then(value) if expr is None else expr.when(hit[i]).then(value)
        assert expr is not None
        result: pl.Expr = expr.otherwise(None)
        return result

    def choose(values: list[str | None]) -> pl.Expr:
        expr: Any = None
        for i, value in enumerate(values):
            lit = pl.lit(value, dtype=pl.String)
            expr = pl.when(hit[i]).then(lit) if expr is None else expr.when(hit[i]).then(lit)
        assert expr is not None
        result: pl.Expr = expr.otherwise(None)
        return result

    frame = frame.with_columns(
        choose([g.name for g in GRAMMARS]).alias("grammar"),
        choose([g.family for g in GRAMMARS]).alias("family"),
        choose([g.stamp for g in GRAMMARS]).alias("_kind"),
        *[pick(field).alias(f"_{field}") for field in _FIELDS],
    )
    payload_ts = _stamp_expr(anchor_expr, tz)
    wrap_ts = tsp.rfc3339(pl.col("wrap_ts"))
    kind = pl.col("_kind")
    frame = frame.with_columns(payload_ts.alias("payload_ts"), wrap_ts.alias("_wrap_ts"))
    quality = (
        pl.when(pl.col("_wrap_ts").is_not_null())
        .then(pl.lit("exact"))
        .when(pl.col("payload_ts").is_null())
        .then(pl.lit(None, dtype=pl.String))
        .when(kind.is_in(["epoch", "zoned"]))
        .then(pl.lit("exact"))
        .when(kind.is_in(["mmdd", "syslog"]))
        .then(pl.lit("inferred_year"))
        .otherwise(pl.lit("inferred_tz"))
    )
    return frame.select(
        pl.col("grammar"),
        pl.col("family").fill_null("plain"),
        pl.when(pl.col("_lvl").str.len_bytes() > 0).then(pl.col("_lvl")).alias("level"),
        pl.col("_logger").alias("logger"),
        pl.col("_tid").alias("tid"),
        pl.col("_host").alias("host"),
        pl.coalesce(pl.col("_msg"), pl.col("rest")).alias("message"),
        pl.coalesce(pl.col("_wrap_ts"), pl.col("payload_ts")).alias("ts"),
        quality.alias("ts_quality"),
        pl.when(pl.col("_wrap_ts").is_not_null()).then(pl.col("payload_ts")).alias("payload_ts"),
        pl.col("pod"),
        pl.col("container"),
        pl.col("rank").cast(pl.Int32, strict=False),
        pl.col("stream"),
    )


def _stamp_expr(anchor: pl.Expr, tz: str) -> pl.Expr:
    """The line's own timestamp from ``_stamp``/``_zone`` according to ``_kind``."""
    stamp = pl.col("_stamp")
    kind = pl.col("_kind")
    full = stamp.str.replace(",", ".", literal=True).str.replace("T", " ", literal=True)
    zoned = pl.concat_str([full.str.replace(" ", "T", literal=True), pl.col("_zone")])
    mmdd = stamp.str.replace(r"^(\d{2})-?(\d{2}) ", "${1}-${2} ")
    return (
        pl.when(kind == "epoch")
        .then(tsp.epoch_seconds(stamp))
        .when((kind == "full") & pl.col("_zone").is_not_null())
        .then(tsp.rfc3339(zoned))
        .when(kind == "full")
        .then(tsp.local_time(full, "%Y-%m-%d %H:%M:%S%.f", tz))
        .when(kind == "mmdd")
        .then(tsp.yearless(mmdd, "%Y-%m-%d %H:%M:%S%.f", anchor, tz))
        .when(kind == "yymmdd")
        .then(tsp.local_time(stamp, "%y/%m/%d %H:%M:%S", tz))
        .when(kind == "yymmdd_compact")
        .then(tsp.local_time(stamp, "%y%m%d %H%M%S", tz))
        .when(kind == "syslog")
        .then(tsp.yearless(stamp.str.replace(r" +", " "), "%Y-%b %d %H:%M:%S%.f", anchor, tz))
        .otherwise(None)
    )


def _group_names(pattern: str) -> set[str]:
    import re

    return set(re.findall(r"\(\?P<(\w+)>", pattern))
