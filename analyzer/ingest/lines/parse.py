"""Parse the prefix of every line of a column with the grammars, vectorized.

:func:`parse_lines` takes a column of single lines and returns, per line, the grammar that
matched, the level, logger, timestamp and the message with the prefix removed. Wrappers that
other tools put in front of a line are peeled off first and kept as fields. Every grammar is
one anchored regex run over the whole column by polars; no Python code runs per line.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final

import polars as pl

from analyzer.ingest.columns import timestamps as tsp
from analyzer.ingest.columns.extra import compact_json
from analyzer.ingest.lines.grammars import (
    ANY_WRAPPER,
    GRAMMARS,
    KUBECTL_PREFIX,
    PROCESS_PREFIX,
    RANK_PREFIX,
    TIMESTAMP_PREFIX,
    Grammar,
)

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
        rest = remaining["rest"]
        groups = None
        if _mostly_unmatched(rest, grammar.prefix):
            # Whether it matches first (no captures: about half the cost), the groups only of
            # the lines it matches.
            hit = rest.str.contains(grammar.prefix)
        else:
            groups = rest.str.extract_groups(grammar.prefix)
            hit = groups.struct.field("all").is_not_null()
        if grammar.after_timestamp:
            hit = hit & remaining["wrap_ts"].is_not_null()
        if hit.any():
            matched = remaining.filter(hit)
            found = (
                matched["rest"].str.extract_groups(grammar.prefix)
                if groups is None
                else groups.filter(hit)
            )
            # Group values get a prefix so a group named like a column (rank) cannot clobber it.
            found = found.struct.rename_fields([f"g_{name}" for name in found.struct.fields])
            matched = matched.with_columns(found.struct.unnest())
            matched = matched.with_columns(
                pl.col("rest").str.slice(pl.col("g_all").str.len_chars()).alias("g_msg")
            )
            parts.append(_finish(matched, grammar, tz))
            remaining = remaining.filter(~hit)
    parts.append(_finish(remaining, None, tz))
    return pl.concat(parts, how="vertical").sort("_row").drop("_row")


#: Lines of an even sample that tell whether a grammar matches most lines of a chunk.
_SAMPLE: Final = 256


def _mostly_unmatched(rest: pl.Series, prefix: str) -> bool:
    """Whether fewer than half of an even sample of ``rest`` match ``prefix``: then the lines
    it matches are found without captures first (the choice only changes the cost)."""
    if rest.len() < 4 * _SAMPLE:
        return False
    sample = rest.gather_every(rest.len() // _SAMPLE)
    return bool(sample.str.contains(prefix).mean() < 0.5)  # type: ignore[operator]


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
    if not frame.select(pl.col("rest").str.contains(ANY_WRAPPER).any()).item():
        return frame.with_columns(
            *[pl.lit(None, dtype=pl.String).alias(name) for name in _WRAPPED if name != "rank"],
            pl.lit(None, dtype=pl.Int32).alias("rank"),
        )
    for pattern, fields in (
        (KUBECTL_PREFIX, {"pod": "pod", "container": "container"}),
        (TIMESTAMP_PREFIX, {"rfc": "wrap_ts", "stream": "stream", "tag": "cri_tag"}),
        (PROCESS_PREFIX, {"ip": "wrap_host"}),
        (RANK_PREFIX, {"rank": "rank"}),
    ):
        if not frame["rest"].str.contains(pattern).any():
            # A wrapper no line has costs one match per line instead of a capture and a copy.
            frame = frame.with_columns(
                pl.lit(None, dtype=pl.String).alias(column) for column in fields.values()
            )
            continue
        frame = frame.with_columns(pl.col("rest").str.extract_groups(pattern).alias("_w"))
        frame = frame.with_columns(
            *[pl.col("_w").struct.field(group).alias(column) for group, column in fields.items()],
            pl.col("rest")
            .str.slice(pl.col("_w").struct.field("all").str.len_chars().fill_null(0))
            .alias("rest"),
        ).drop("_w")
    return frame.with_columns(pl.col("rank").cast(pl.Int32, strict=False))


def _finish(part: pl.DataFrame, grammar: Grammar | None, tz: str) -> pl.DataFrame:
    """The :data:`OUTPUT` columns (plus ``_row``) for the lines one grammar matched."""

    def group(name: str) -> pl.Expr:
        if grammar is not None and name in grammar.groups:
            return pl.col(f"g_{name}")
        return pl.lit(None, dtype=pl.String)

    kind = grammar.stamp if grammar is not None else "none"
    own_ts = _own_timestamp(part, grammar, tz) if kind != "none" and part.height else None
    # Parsed once into a column (the select below uses it three times); most files have no
    # timestamp wrappers at all.
    if part["wrap_ts"].null_count() == part.height:
        wrap_ts = pl.lit(None, dtype=pl.Datetime("ns", "UTC"))
    else:
        part = part.with_columns(tsp.rfc3339(pl.col("wrap_ts")).alias("_wrap_ts"))
        wrap_ts = pl.col("_wrap_ts")
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


#: Fractions of a fixed length, tried before chrono's ``%.f`` (a fraction of any length or
#: none): polars parses a fixed format several times faster, and where it parses a stamp at
#: all it reads it as ``%.f`` does (the fraction is exactly that long). The last, empty one is
#: a stamp without a fraction.
_FIXED_FRACTIONS: Final = (".%6f", ".%3f", ".%9f", "")


def _local(text: pl.Series, fmt: str, tz: str) -> pl.Series:
    """Local stamps parsed with ``fmt``: first with fixed-length fractions, then the stamps
    none of them read with ``fmt`` itself, so the result is what ``fmt`` alone gives."""
    if not fmt.endswith("%.f"):
        return _parse_local(text, fmt, tz)
    stem = fmt.removesuffix("%.f")
    # The fraction of the first stamp goes first: a file's stamps are usually all alike.
    first = text.drop_nulls().head(1).to_list()
    seconds = first[0].rsplit(":", 1)[-1] if first else ""
    fraction = f".%{len(seconds.split('.', 1)[1])}f" if "." in seconds else ""
    fractions = sorted(_FIXED_FRACTIONS, key=lambda known: known != fraction)
    parsed: pl.Series | None = None
    for variant in (*(stem + known for known in fractions), fmt):
        if parsed is None:
            parsed = _parse_local(text, variant, tz)
            continue
        left = (parsed.is_null() & text.is_not_null()).arg_true()
        if left.is_empty():
            break
        parsed = parsed.scatter(left, _parse_local(text.gather(left), variant, tz))
    assert parsed is not None
    return parsed


def _parse_local(text: pl.Series, fmt: str, tz: str) -> pl.Series:
    return pl.select(tsp.local_time(pl.lit(text), fmt, tz)).to_series()
