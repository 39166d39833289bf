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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import polars as pl

from analyzer.ingest import timestamps as tsp
from analyzer.ingest.extra import compact_json

StampKind = Literal["epoch", "yearless", "local", "zoned", "none"]


@dataclass(frozen=True)
class Grammar:
    """One line grammar.

    ``pattern`` is anchored, matches the line's prefix (the message is what follows it) and
    uses the named group ``lvl`` and optionally ``stamp``, ``zone``, ``logger``, ``tid`` and
    ``host``. ``family`` becomes the
    row's reader suffix (``text.absl``). ``stamp`` says how the stamp is read: ``epoch``
    seconds (exact), ``yearless`` (``fmt`` applied to the anchor's year followed by the
    stamp), ``local`` (``fmt`` applied to the stamp, a local time), ``zoned`` (an RFC 3339
    instant with its offset) or ``none``. ``normalize`` rewrites the stamp first (regex,
    replacement). A ``rank`` group fills the rank column; groups named in ``attrs`` are kept
    in the ``attrs`` JSON column. A grammar with ``after_timestamp`` only applies to lines
    whose timestamp was already peeled off as a wrapper (``journalctl -o short-iso`` puts
    the host after an RFC 3339 stamp).
    """

    name: str
    family: str
    pattern: str
    stamp: StampKind
    fmt: str = ""
    normalize: tuple[tuple[str, str], ...] = ()
    attrs: tuple[str, ...] = ()
    after_timestamp: bool = False

    @functools.cached_property
    def groups(self) -> frozenset[str]:
        """Named groups of the pattern."""
        return frozenset(re.findall(r"\(\?P<(\w+)>", self.pattern))

    @functools.cached_property
    def prefix(self) -> str:
        """The pattern with the whole prefix captured as ``all``.

        Only the prefix is captured: running the capture engine over the (long) message would
        cost three times as much.
        """
        return f"^(?P<all>{self.pattern.removeprefix('^')})"


_LOGGER_FILE: Final = r"(?P<logger>[^ :\]]+:\d+)"
_HMS: Final = r"\d{2}:\d{2}:\d{2}"
_ISO_LOCAL: Final = rf"\d{{4}}-\d{{2}}-\d{{2}}[ T]{_HMS}(?:[,.]\d{{1,9}})?"
_PY_LEVEL: Final = "DEBUG|INFO|WARNING|ERROR|CRITICAL"
_JAVA_LEVEL: Final = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE"
# asctime/log4j stamps vary (',' or '.' before the fraction, 'T' or ' '): normalized first.
ISO_FORMAT: Final = "%Y-%m-%d %H:%M:%S%.f"
ISO_NORMALIZE: Final = ((",", "."), ("T", " "))

#: An event's age in a kubectl table: ``5m2s``, ``<unknown>``, ``9h (x108 over 18h)``.
_EVENT_AGE: Final = r"(?:<\w+>|\S+)(?: \(x\d+ \w+ \S+\))?"
#: Who reported an event: ``default-scheduler``, ``kubelet``, ``kubelet, node-7`` (older
#: kubectl names the node after the component).
_EVENT_SOURCE: Final = r"(?P<source>[a-z][\w.-]*)(?:, (?P<host>[\w.-]+))?"

#: Event tables as kubectl prints them (formats.md §7): ``describe``'s ``Type Reason Age From
#: Message``, ``get events``' ``LAST SEEN TYPE REASON OBJECT MESSAGE`` and the tab-separated
#: ``FirstSeen LastSeen Count From SubObjectPath Type Reason Message`` of old releases. The
#: reason is the logger, the type the level (Warning, Normal); ages are relative, so no time.
KUBECTL_EVENTS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "kubectl_describe_event",
        "kubectl",
        rf"^\s+(?P<lvl>Normal|Warning)\s+(?P<logger>[A-Z]\w+)\s+{_EVENT_AGE}\s+{_EVENT_SOURCE}\s+",
        "none",
        attrs=("source",),
    ),
    Grammar(
        "kubectl_get_event",
        "kubectl",
        r"^\S+\s+(?P<lvl>Normal|Warning)\s+(?P<logger>[A-Z]\w+)\s+"
        r"(?:pod/(?P<pod>\S+)|node/(?P<host>\S+)|[\w.-]+/\S+)\s+",
        "none",
    ),
    Grammar(
        "kubectl_old_event",
        "kubectl",
        r"^\s*\S+\t+\S+\t+\d+\t+(?P<source>[a-z][\w.-]*)(?:, (?P<host>[^\t]+))?\t+[^\t]*\t+"
        r"(?P<lvl>Normal|Warning)\t+(?P<logger>\w+)\t+",
        "none",
        attrs=("source",),
    ),
)

#: RFC 5424 syslog (rsyslog's RSYSLOG_SyslogProtocol23Format, journald forwarders): after
#: the stamp (peeled off as a wrapper) come host, app, procid and msgid, then structured data
#: (``-`` when none): ``NodeA kubelet 24578 - -  E0207 02:49:40.738973 …``.
SYSLOG_5424: Final = Grammar(
    "syslog_5424",
    "syslog",
    r"^(?P<host>[^\s\[\]]+) (?P<logger>[^\s\[\]]+) (?P<tid>\d+|-) \S+ (?:-|\[[^\]]*\])+ *"
    r"(?P<lvl>)",
    "none",
    after_timestamp=True,
)

#: Tried in this order; the first match wins. Order matters where grammars overlap: the
#: pre-``InitializeLog`` epoch form of absl must come before the ``MMDD`` form.
GRAMMARS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "absl_epoch",
        "absl",
        rf"^(?P<lvl>[IWEF])0000 00:00:(?P<stamp>\d+\.\d+) +(?P<tid>\d+) "
        rf"{_LOGGER_FILE}\] ?",
        "epoch",
    ),
    Grammar(
        "absl",
        "absl",
        rf"^(?P<lvl>[IWEF])(?P<stamp>\d{{4}} {_HMS}\.\d{{6}}) +(?P<tid>\d+) "
        rf"{_LOGGER_FILE}\] ?",
        "yearless",
        "%Y%m%d %H:%M:%S%.f",
    ),
    Grammar(
        "tsl",
        "absl",
        rf"^(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} {_HMS}\.\d{{6}}): (?P<lvl>[IWEF])(?: +(?P<tid>\d+))? "
        rf"(?P<logger>[^:\]]+:\d+)\] ?",
        "local",
        "%Y-%m-%d %H:%M:%S%.f",
    ),
    Grammar(
        "jax_debug",
        "python",
        rf"^(?P<lvl>{_PY_LEVEL}):(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} {_HMS},\d{{3}}):"
        rf"(?P<logger>[^:]+:\d+): ?",
        "local",
        "%Y-%m-%d %H:%M:%S,%3f",
    ),
    Grammar(
        "python_basic",
        "python",
        rf"^(?P<lvl>{_PY_LEVEL}):(?P<logger>[^:\s]*):",
        "none",
    ),
    Grammar(
        "asctime",
        "python",
        rf"^(?P<stamp>{_ISO_LOCAL}) - (?:(?P<logger>\S+) - )?(?P<lvl>[A-Z]+) - ",
        "local",
        ISO_FORMAT,
        ISO_NORMALIZE,
    ),
    Grammar(
        "vllm",
        "vllm",
        rf"^(?:\([^)]*\) )?(?P<lvl>{_PY_LEVEL}) (?P<stamp>\d{{2}}-\d{{2}} {_HMS}) "
        rf"\[(?P<logger>[^\]:]+:\d+)\] ",
        "yearless",
        "%Y%m-%d %H:%M:%S",
    ),
    Grammar(
        "log4j",
        "log4j",
        rf"^(?P<stamp>{_ISO_LOCAL})(?P<zone>Z|[+-]\d{{2}}:?\d{{2}})?\s+(?:(?P<tid>\d+)\s+)?"
        rf"\[?(?P<lvl>{_JAVA_LEVEL})\]?\s+",
        "local",
        ISO_FORMAT,
        ISO_NORMALIZE,
    ),
    Grammar(
        "spark",
        "log4j",
        rf"^(?P<stamp>\d{{2}}/\d{{2}}/\d{{2}} {_HMS})\s+(?P<lvl>{_JAVA_LEVEL})"
        rf"\s+(?:(?P<logger>[\w.$]+):\s)?",
        "local",
        "%y/%m/%d %H:%M:%S",
    ),
    Grammar(
        "hdfs",
        "log4j",
        rf"^(?P<stamp>\d{{6}} \d{{6}}) (?P<tid>\d+) (?P<lvl>{_JAVA_LEVEL}) "
        rf"(?P<logger>[\w.$]+): ",
        "local",
        "%y%m%d %H%M%S",
    ),
    # Blue Gene/L RAS events (as the loghub BGL dataset has them, its label column removed):
    # ``1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872
    # R02-M1-N0-C:J12-U11 RAS KERNEL INFO …`` (``NULL DISCOVERY …`` for service events). The
    # leading epoch seconds are exact UTC; the second stamp is the machine's local time (whole
    # seconds agree), so it is not used.
    Grammar(
        "bgl_ras",
        "bgl",
        r"^(?P<stamp>\d{9,11}) \d{4}\.\d{2}\.\d{2} (?P<host>\S+) "
        r"\d{4}-\d{2}-\d{2}-\d{2}\.\d{2}\.\d{2}\.\d{6} \S+ (?P<logger>\S+ \S+) "
        r"(?P<lvl>[A-Z]+) ",
        "epoch",
    ),
    Grammar(
        "syslog",
        "syslog",
        rf"^(?P<stamp>[A-Z][a-z]{{2}} +\d{{1,2}} {_HMS}(?:\.\d{{1,6}})?) (?P<host>[^\s\[\]:]+) +"
        rf"(?P<logger>[^\[:\s](?:[^\[:]*[^\[:\s])?)(?:\[(?P<tid>\d+)\])?: ?(?P<lvl>)",
        "yearless",
        "%Y%b %d %H:%M:%S%.f",
        ((r" +", " "),),
    ),
    SYSLOG_5424,
    *KUBECTL_EVENTS,
)

# Wrappers other tools add in front of a line; peeled off in this order.
_KUBECTL_PREFIX: Final = r"^(?P<all>\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] )"
_TIMESTAMP_PREFIX: Final = (
    r"^(?P<all>(?P<rfc>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) "
    r"(?:(?P<stream>stdout|stderr) (?P<tag>[PF]) )?)"
)
_RANK_PREFIX: Final = r"^(?P<all>\[rank(?P<rank>\d+)\]: ?)"
#: Ray (and vLLM's multiprocess executor) name the process a line came from:
#: ``(TaskRunner pid=467613) ``, ``(pid=6093, ip=10.128.0.47) ``; the IP is the node's.
_PROCESS_PREFIX: Final = (
    r"^(?P<all>\((?:[A-Za-z_][\w.:-]*(?: |, ))?pid=\d+"
    r"(?:, ip=(?P<ip>\d{1,3}(?:\.\d{1,3}){3}))?\) ?)"
)
_ANY_WRAPPER: Final = (
    r"^(?:\[pod/|\[rank\d|\d{4}-\d{2}-\d{2}T|\((?:[A-Za-z_][\w.:-]*(?: |, ))?pid=\d)"
)
ANSI_ESCAPE: Final = r"\x1b\[[0-9;?]*[A-Za-z]"
LOG_FILE_HEADER: Final = r"^Log file created at: (\d{4})/(\d{2})/(\d{2}) "
_HALF_YEAR: Final = dt.timedelta(days=183)

#: Columns of :func:`parse_lines`' result, with their types.
OUTPUT: Final[dict[str, pl.DataType]] = {
    "grammar": pl.String(),
    "family": pl.String(),
    "level": pl.String(),
    "logger": pl.String(),
    "tid": pl.String(),
    "host": pl.String(),
    "message": pl.String(),
    "ts": pl.Datetime("ns", "UTC"),
    "ts_quality": pl.String(),
    "payload_ts": pl.Datetime("ns", "UTC"),
    "pod": pl.String(),
    "container": pl.String(),
    "rank": pl.Int32(),
    "stream": pl.String(),
    "cri_tag": pl.String(),
    "attrs": pl.String(),
}
_WRAPPED: Final = {
    "pod": "pod",
    "container": "container",
    "wrap_ts": "rfc",
    "stream": "stream",
    "cri_tag": "tag",
    "wrap_host": "ip",
    "rank": "rank",
}


def parse_lines(
    text: pl.Series,
    *,
    anchor: pl.Series | dt.date,
    tz: str = "UTC",
    grammars: Sequence[Grammar] = GRAMMARS,
) -> pl.DataFrame:
    """Parse the prefix of every line in ``text``.

    Args:
        text: one line per value (no line terminators).
        anchor: a date near the logs (one per line as a Date Series, or one for all), used
            to give year-less timestamps their year.
        tz: zone of local timestamps without an offset.
        grammars: the grammars to try, in order (a reader's own set; the common ones by
            default).

    Returns:
        A frame aligned with ``text`` with the columns of :data:`OUTPUT`: ``grammar`` (null
        when no grammar matched), ``family`` (``plain`` when none matched), ``level``,
        ``logger``, ``tid``, ``host``, ``message`` (the line without its prefixes), ``ts``,
        ``ts_quality``, ``payload_ts`` (the line's own stamp when a wrapper also had one),
        ``pod``, ``container``, ``rank``, ``stream``, ``cri_tag`` (``P`` for a CRI partial
        line, ``F`` for a full one) and ``attrs`` (JSON of the grammar's extra fields).

    Each grammar's regex runs only on the lines no earlier grammar matched, and each
    timestamp rule only on the lines of its grammar, so the cost is about one regex match
    and one timestamp parse per line.
    """
    frame = pl.DataFrame({"rest": text}).with_row_index("_row")
    if isinstance(anchor, dt.date):
        frame = frame.with_columns(pl.lit(anchor, dtype=pl.Date).alias("_anchor"))
    else:
        frame = frame.with_columns(anchor.cast(pl.Date).alias("_anchor"))
    frame = _peel_wrappers(frame)
    parts: list[pl.DataFrame] = []
    remaining = frame
    for grammar in _present(frame, grammars):
        if remaining.height == 0:
            break
        groups = remaining["rest"].str.extract_groups(grammar.prefix)
        hit = groups.struct.field("all").is_not_null()
        if grammar.after_timestamp:
            hit = hit & remaining["wrap_ts"].is_not_null()
        if hit.any():
            # Group values get a prefix so a group named like a column (rank) cannot clobber it.
            found = groups.filter(hit)
            found = found.struct.rename_fields([f"g_{name}" for name in found.struct.fields])
            matched = remaining.filter(hit).with_columns(found.struct.unnest())
            matched = matched.with_columns(
                pl.col("rest").str.slice(pl.col("g_all").str.len_chars()).alias("g_msg")
            )
            parts.append(_finish(matched, grammar, tz))
            remaining = remaining.filter(~hit)
    parts.append(_finish(remaining, None, tz))
    return pl.concat(parts, how="vertical").sort("_row").drop("_row")


#: Below this many lines, the grammars no line matches are found in one query first: a small
#: file's cost is the fixed cost of each query, not the regex work.
_FEW_LINES: Final = 5000


def _present(frame: pl.DataFrame, grammars: Sequence[Grammar]) -> Sequence[Grammar]:
    """``grammars`` without those that match no line of a small ``frame`` (order kept, so the
    first matching grammar of every line is unchanged); all of them for a large one."""
    if frame.height >= _FEW_LINES or len(grammars) <= 1:
        return grammars
    found = frame.select(
        pl.col("rest").str.contains(g.prefix).any().alias(str(i)) for i, g in enumerate(grammars)
    ).row(0)
    return [g for g, hit in zip(grammars, found, strict=True) if hit]


def parse_lines_lazy(
    text: pl.Series,
    *,
    anchor: pl.Series | dt.date,
    tz: str = "UTC",
    grammars: Sequence[Grammar] = GRAMMARS,
) -> pl.LazyFrame:
    """:func:`parse_lines` as a LazyFrame, for callers that chain more work."""
    return parse_lines(text, anchor=anchor, tz=tz, grammars=grammars).lazy()


def _peel_wrappers(frame: pl.DataFrame) -> pl.DataFrame:
    """Peel kubectl/CRI/Ray/torchrun wrappers off ``rest`` (skipped when no line has one)."""
    if not frame.select(pl.col("rest").str.contains(_ANY_WRAPPER).any()).item():
        return frame.with_columns(
            *[pl.lit(None, dtype=pl.String).alias(name) for name in _WRAPPED if name != "rank"],
            pl.lit(None, dtype=pl.Int32).alias("rank"),
        )
    query = frame.lazy()
    for pattern, fields in (
        (_KUBECTL_PREFIX, {"pod": "pod", "container": "container"}),
        (_TIMESTAMP_PREFIX, {"rfc": "wrap_ts", "stream": "stream", "tag": "cri_tag"}),
        (_PROCESS_PREFIX, {"ip": "wrap_host"}),
        (_RANK_PREFIX, {"rank": "rank"}),
    ):
        query = query.with_columns(pl.col("rest").str.extract_groups(pattern).alias("_w"))
        query = query.with_columns(
            *[pl.col("_w").struct.field(group).alias(column) for group, column in fields.items()],
            pl.col("rest")
            .str.slice(pl.col("_w").struct.field("all").str.len_chars().fill_null(0))
            .alias("rest"),
        ).drop("_w")
    return query.with_columns(pl.col("rank").cast(pl.Int32, strict=False)).collect()


def _finish(part: pl.DataFrame, grammar: Grammar | None, tz: str) -> pl.DataFrame:
    """The :data:`OUTPUT` columns (plus ``_row``) for the lines one grammar matched."""

    def group(name: str) -> pl.Expr:
        if grammar is not None and name in grammar.groups:
            return pl.col(f"g_{name}")
        return pl.lit(None, dtype=pl.String)

    kind = grammar.stamp if grammar is not None else "none"
    own_ts = _own_timestamp(part, grammar, tz) if kind != "none" and part.height else None
    wrap_ts = tsp.rfc3339(pl.col("wrap_ts"))
    if own_ts is None:
        own = pl.lit(None, dtype=pl.Datetime("ns", "UTC"))
        own_quality = pl.lit(None, dtype=pl.String)
    else:
        part = part.with_columns(own_ts.alias("_own_ts"))
        own = pl.col("_own_ts")
        exact = kind in ("epoch", "zoned")
        quality = "exact" if exact else "inferred_year" if kind == "yearless" else "inferred_tz"
        own_quality = pl.when(own.is_null()).then(None).otherwise(pl.lit(quality))
        if "zone" in (grammar.groups if grammar else ()):
            own_quality = (
                pl.when(pl.col("g_zone").is_not_null()).then(pl.lit("exact")).otherwise(own_quality)
            )
    level = group("lvl")
    return part.select(
        pl.col("_row"),
        pl.lit(grammar.name if grammar else None, dtype=pl.String).alias("grammar"),
        pl.lit(grammar.family if grammar else "plain", dtype=pl.String).alias("family"),
        pl.when(level.str.len_bytes() > 0).then(level).alias("level"),
        group("logger").alias("logger"),
        group("tid").alias("tid"),
        pl.coalesce(group("host"), pl.col("wrap_host")).alias("host"),
        (pl.col("g_msg") if grammar else pl.col("rest")).alias("message"),
        pl.coalesce(wrap_ts, own).alias("ts"),
        pl.when(wrap_ts.is_not_null())
        .then(pl.lit("exact"))
        .otherwise(own_quality)
        .alias("ts_quality"),
        pl.when(wrap_ts.is_not_null()).then(own).alias("payload_ts"),
        pl.coalesce(group("pod"), pl.col("pod")).alias("pod"),
        pl.col("container"),
        pl.coalesce(group("rank").cast(pl.Int32, strict=False), pl.col("rank")).alias("rank"),
        pl.col("stream"),
        pl.col("cri_tag"),
        _attrs(grammar).alias("attrs"),
    )


def _attrs(grammar: Grammar | None) -> pl.Expr:
    if grammar is None or not grammar.attrs:
        return pl.lit(None, dtype=pl.String)
    return compact_json([(name, pl.col(f"g_{name}"), "text") for name in grammar.attrs])


def _own_timestamp(part: pl.DataFrame, grammar: Grammar | None, tz: str) -> pl.Series | None:
    """The line's own stamp, parsed the way its grammar says (UTC, nanoseconds)."""
    assert grammar is not None
    stamp = part["g_stamp"]
    for pattern, replacement in grammar.normalize:
        stamp = stamp.str.replace_all(pattern, replacement)
    if grammar.stamp == "epoch":
        return part.select(tsp.epoch_seconds(pl.col("g_stamp"))).to_series()
    if grammar.stamp == "zoned":
        return pl.select(tsp.rfc3339(pl.lit(stamp))).to_series()
    if grammar.stamp == "local":
        if "zone" in grammar.groups:
            zoned = part.select(
                tsp.rfc3339(
                    pl.concat_str([stamp.str.replace(" ", "T", literal=True), pl.col("g_zone")])
                )
            ).to_series()
        else:
            zoned = None
        local = _local(stamp, grammar.fmt, tz)
        return local if zoned is None else zoned.fill_null(local)
    # yearless: the anchor's year first, then one year towards the anchor where that lands
    # more than half a year away (December lines in a January file).
    anchors = part["_anchor"]
    years = anchors.dt.year()
    first = _local(
        years.cast(pl.String) + stamp,
        grammar.fmt,
        tz,
    )
    gap = first - anchors.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    late, early = gap > _HALF_YEAR, gap < -_HALF_YEAR
    if not (late.any() or early.any()):
        return first
    shift = pl.Series(late.cast(pl.Int32) * -1 + early.cast(pl.Int32))
    moved = _local((years + shift).cast(pl.String) + stamp, grammar.fmt, tz)
    return pl.select(pl.when(late | early).then(moved).otherwise(first)).to_series()


def _local(text: pl.Series, fmt: str, tz: str) -> pl.Series:
    return pl.select(tsp.local_time(pl.lit(text), fmt, tz)).to_series()


_ANSI: Final = re.compile(ANSI_ESCAPE)


_WRAPPERS: Final = tuple(
    re.compile(p) for p in (_KUBECTL_PREFIX, _TIMESTAMP_PREFIX, _PROCESS_PREFIX, _RANK_PREFIX)
)


@functools.lru_cache(maxsize=32)
def _python_patterns(grammars: tuple[Grammar, ...]) -> list[re.Pattern[str]]:
    return [re.compile(g.prefix) for g in grammars]


def _unwrapped(line: str) -> tuple[str, bool]:
    """A line without ANSI colours and wrappers, and whether a wrapper carried a timestamp."""
    rest = _ANSI.sub("", line)
    stamped = False
    for wrapper in _WRAPPERS:
        match = wrapper.match(rest)
        if match:
            stamped = stamped or bool(match.groupdict().get("rfc"))
            rest = rest[match.end("all") :]
    return rest, stamped


def any_dated(lines: list[str], grammars: Sequence[Grammar] = GRAMMARS) -> bool:
    """Whether any line could get a stamp with its year from :func:`parse_lines`: a timestamp
    wrapper, or a first matching grammar whose stamp carries the date (epoch, zoned, local).
    False means parsing these lines cannot date any of them (journal and klog heads)."""
    patterns = _python_patterns(tuple(grammars))
    for line in lines:
        rest, stamped = _unwrapped(line)
        if stamped:
            return True
        for pattern, grammar in zip(patterns, grammars, strict=True):
            if grammar.after_timestamp or not pattern.match(rest):
                continue
            if grammar.stamp in ("epoch", "zoned", "local"):
                return True
            break
    return False


def any_yearless(lines: list[str], grammars: Sequence[Grammar] = GRAMMARS) -> bool:
    """Whether any line starts with a stamp that has no year (absl ``MMDD``, syslog, vLLM)."""
    patterns = _python_patterns(tuple(grammars))
    yearless = [p for p, g in zip(patterns, grammars, strict=True) if g.stamp == "yearless"]
    for line in lines:
        rest, _ = _unwrapped(line)
        if any(pattern.match(rest) for pattern in yearless):
            return True
    return False


def share_recognized(lines: list[str], grammars: Sequence[Grammar] = GRAMMARS) -> float:
    """Share of ``lines`` that a grammar or a timestamp wrapper recognizes.

    For sniffing a file head: Python's ``re`` on at most a few hundred lines is cheaper than a
    polars query, and close enough to the real grammars for a score.
    """
    if not lines:
        return 0.0
    patterns = _python_patterns(tuple(grammars))
    known = 0
    for line in lines:
        rest, stamped = _unwrapped(line)
        if stamped or any(pattern.match(rest) for pattern in patterns):
            known += 1
    return known / len(lines)
