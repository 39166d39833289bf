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
import functools
import re
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


def _peel(pattern: str, fields: dict[str, str]) -> list[list[pl.Expr]]:
    """Stages that extract a wrapper prefix from ``rest`` into ``fields`` and drop it."""
    groups = pl.col("rest").str.extract_groups(pattern).alias("_w")
    return [
        [groups],
        [
            *[pl.col("_w").struct.field(group).alias(column) for group, column in fields.items()],
            pl.col("rest")
            .str.slice(pl.col("_w").struct.field("all").str.len_chars().fill_null(0))
            .alias("rest"),
        ],
    ]


def _first_hit(values: list[pl.Expr], hit: list[pl.Expr]) -> pl.Expr:
    """The value of the first grammar that matched (null when none did)."""
    expr: Any = None
    for matched, value in zip(hit, values, strict=True):
        expr = pl.when(matched).then(value) if expr is None else expr.when(matched).then(value)
    result: pl.Expr = expr.otherwise(None)
    return result


@functools.lru_cache(maxsize=16)
def _plan(tz: str) -> tuple[list[list[pl.Expr]], list[pl.Expr]]:
    """The expression stages of :func:`parse_lines` for one zone (built once, reused).

    Building these expressions costs milliseconds; files are many and often small, so the
    plan is made once per zone and every call runs it in one lazy query.
    """
    stages: list[list[pl.Expr]] = []
    stages += _peel(_KUBECTL_PREFIX, {"pod": "pod", "container": "container"})
    stages += _peel(_TIMESTAMP_PREFIX, {"rfc": "wrap_ts", "stream": "stream", "tag": "cri_tag"})
    stages += _peel(_RANK_PREFIX, {"rank": "rank"})
    stages.append(
        [
            pl.col("rest").str.extract_groups(g.pattern).alias(f"_g{i}")
            for i, g in enumerate(GRAMMARS)
        ]
    )
    hit = [pl.col(f"_g{i}").struct.field("msg").is_not_null() for i in range(len(GRAMMARS))]

    def field_of(field: str) -> pl.Expr:
        values = [
            pl.col(f"_g{i}").struct.field(field)
            if field in _group_names(g.pattern)
            else pl.lit(None, dtype=pl.String)
            for i, g in enumerate(GRAMMARS)
        ]
        return _first_hit(values, hit).alias(f"_{field}")

    def constant(values: list[str]) -> list[pl.Expr]:
        return [pl.lit(value, dtype=pl.String) for value in values]

    stages.append(
        [
            _first_hit(constant([g.name for g in GRAMMARS]), hit).alias("grammar"),
            _first_hit(constant([g.family for g in GRAMMARS]), hit).alias("family"),
            _first_hit(constant([g.stamp for g in GRAMMARS]), hit).alias("_kind"),
            *[field_of(field) for field in _FIELDS],
        ]
    )
    stages.append(
        [
            _stamp_expr(pl.col("_anchor"), tz).alias("payload_ts"),
            tsp.rfc3339(pl.col("wrap_ts")).alias("_wrap_ts"),
        ]
    )
    kind = pl.col("_kind")
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
    final = [
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
        pl.col("cri_tag"),
    ]
    return stages, final


def parse_lines(text: pl.Series, *, anchor: pl.Series | dt.date, tz: str = "UTC") -> pl.DataFrame:
    """Eager form of :func:`parse_lines_lazy`."""
    return parse_lines_lazy(text, anchor=anchor, tz=tz).collect()


def parse_lines_lazy(
    text: pl.Series, *, anchor: pl.Series | dt.date, tz: str = "UTC"
) -> pl.LazyFrame:
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
        (the line's own stamp when a wrapper also had one), ``pod``, ``container``, ``rank``,
        ``stream`` and ``cri_tag`` (``P`` for a CRI partial line, ``F`` for a full one).
    """
    stages, final = _plan(tz)
    if isinstance(anchor, dt.date):
        anchors = pl.repeat(anchor, text.len(), dtype=pl.Date, eager=True)
    else:
        anchors = anchor.cast(pl.Date)
    query = pl.LazyFrame({"rest": text, "_anchor": anchors})
    for stage in stages:
        query = query.with_columns(stage)
    return query.select(final)


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


@functools.lru_cache(maxsize=1)
def _python_patterns() -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    wrappers = [re.compile(p) for p in (_KUBECTL_PREFIX, _TIMESTAMP_PREFIX, _RANK_PREFIX)]
    return wrappers, [re.compile(g.pattern) for g in GRAMMARS]


def share_recognized(lines: list[str]) -> float:
    """Share of ``lines`` that a grammar or a timestamp wrapper recognizes.

    For sniffing a file head: Python's ``re`` on at most a few hundred lines is cheaper than a
    polars query, and close enough to the real grammars for a score.
    """
    if not lines:
        return 0.0
    wrappers, patterns = _python_patterns()
    ansi = re.compile(ANSI_ESCAPE)
    known = 0
    for line in lines:
        rest = ansi.sub("", line)
        stamped = False
        for wrapper in wrappers:
            match = wrapper.match(rest)
            if match:
                stamped = stamped or bool(match.groupdict().get("rfc"))
                rest = rest[match.end("all") :]
        if stamped or any(pattern.match(rest) for pattern in patterns):
            known += 1
    return known / len(lines)


def _group_names(pattern: str) -> set[str]:
    return set(re.findall(r"\(\?P<(\w+)>", pattern))
