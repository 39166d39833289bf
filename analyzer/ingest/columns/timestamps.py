"""Timestamp parsing as polars expressions: exact instants, local times, year-less stamps.

Nothing here goes through Python ``datetime`` per value (it would lose nanoseconds and be slow).
Local times are interpreted in a zone (``--tz``, default UTC) and converted to UTC; stamps
without a year get the year that puts them closest to an anchor date (so a December line in a
log written in January lands in the previous year).

Stamps are parsed with an explicit range. Nanoseconds since 1970 in an int64 only reach from
1677 to 2262, and polars wraps a stamp beyond them around without a word (9999-12-31 became
1816-03-30 and sorted before every real row). Every parser here checks the year the text writes
(or the number, against what an int64 holds) and gives :data:`UNREPRESENTABLE` for a stamp
that does not fit: a time outside the years a case accepts, so the case writer marks its row
``out_of_range`` (:mod:`analyzer.case.stamps`).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from typing import Final

import polars as pl

from analyzer.errors import UsageError
from analyzer.schema import TS_EARLIEST

NS: Final = pl.Datetime("ns", "UTC")
_NAIVE: Final = pl.Datetime("ns")
_HALF_YEAR: Final = dt.timedelta(days=183)
#: What a parser gives for a stamp nanoseconds since 1970 cannot hold: a time before the years
#: a case accepts, so the row is marked ``out_of_range``, and far enough from both ends of the
#: int64 range that a zone offset or a year added to it on the way cannot wrap it again.
UNREPRESENTABLE: Final = TS_EARLIEST.replace(year=1900)
#: Years whose every instant nanoseconds since 1970 in an int64 hold (1677-09-21 to 2262-04-11).
_SAFE_YEARS: Final = (1678, 2261)
#: The largest whole seconds / microseconds since 1970 that nanoseconds in an int64 hold.
_MAX_SECONDS: Final = (2**63 - 1) // 1_000_000_000
_MAX_MICROS: Final = (2**63 - 1) // 1000


def _guarded(parsed: pl.Expr, raw: pl.Expr, fmt: str) -> pl.Expr:
    """``parsed``, or :data:`UNREPRESENTABLE` where the year ``raw`` writes (under a ``fmt``
    that starts with ``%Y``) lies outside the years nanoseconds since 1970 hold: polars would
    wrap it around. Two-digit years cannot leave them.

    Decided from the text alone so that ``parsed`` (the costly parse) is used once: an
    expression used twice is computed twice in an eager ``select``.
    """
    if not fmt.startswith("%Y"):
        return parsed
    # A signed year (+10000-01-01, -0001-01-01) reads as a number below 1678 here.
    head = raw.str.strip_chars_start()
    year = head.str.slice(0, 4).cast(pl.Int64, strict=False)
    unsafe = (
        year.is_not_null()
        & ~year.is_between(_SAFE_YEARS[0], _SAFE_YEARS[1])
        & (head.str.len_bytes() > 4)
    )
    return pl.when(unsafe).then(pl.lit(UNREPRESENTABLE, dtype=NS)).otherwise(parsed)


def check_tz(tz: str | None) -> str:
    """Validate a ``--tz`` value (IANA name or ``+HH:MM``) and return it; ``None`` means UTC."""
    if tz is None:
        return "UTC"
    if re.fullmatch(r"[+-]\d{2}:\d{2}", tz):
        return tz
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown time zone {tz!r} (use an IANA name or +HH:MM)") from None
    return tz


def rfc3339(raw: pl.Expr) -> pl.Expr:
    """Parse RFC 3339 / ISO 8601 instants with an explicit zone to UTC nanoseconds.

    Accepts 0-9 fractional digits, ``Z`` or ``±HH:MM`` / ``±HHMM``, a ``T`` or a space between
    date and time, and BigQuery's trailing `` UTC``. Anything else gives null.
    """
    text = (
        raw.str.strip_chars()
        .str.replace(r" UTC$", "Z")
        .str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T")
        .str.replace(r"([+-]\d{2})(\d{2})$", "${1}:${2}")
    )
    fmt = "%Y-%m-%dT%H:%M:%S%.f%#z"
    parsed = text.str.to_datetime(fmt, time_unit="ns", time_zone="UTC", strict=False)
    return _guarded(parsed, raw, fmt)


def fixed_offset(tz: str) -> dt.timedelta | None:
    """The offset of a ``±HH:MM`` zone, or ``None`` for a named zone."""
    match = re.fullmatch(r"([+-])(\d{2}):(\d{2})", tz)
    if match is None:
        return None
    sign = -1 if match.group(1) == "-" else 1
    return sign * dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))


def local_time(raw: pl.Expr, fmt: str, tz: str) -> pl.Expr:
    """Parse a zone-less local time with ``fmt`` and convert it from ``tz`` to UTC.

    Fixed offsets are applied as arithmetic: polars only knows whole-hour ones by name, and a
    ``+05:30`` host exists.
    """
    if tz == "UTC":
        utc = raw.str.to_datetime(fmt, time_unit="ns", time_zone="UTC", strict=False)
        return _guarded(utc, raw, fmt)
    offset = fixed_offset(tz)
    if offset is not None:
        utc = raw.str.to_datetime(fmt, time_unit="ns", time_zone="UTC", strict=False)
        shifted = utc - pl.duration(seconds=int(offset.total_seconds()), time_unit="ns")
        return _guarded(shifted, raw, fmt)
    naive = raw.str.to_datetime(fmt, time_unit="ns", strict=False)
    local = naive.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
    return _guarded(local.dt.convert_time_zone("UTC"), raw, fmt)


def epoch_seconds(raw: pl.Expr) -> pl.Expr:
    """Parse ``1731424090.226654`` (seconds since the epoch, any fraction) to UTC exactly."""
    seconds = raw.str.extract(r"^(\d{1,12})", 1).cast(pl.Int64, strict=False)
    fraction = (
        raw.str.extract(r"\.(\d+)$", 1)
        .fill_null("0")
        .str.pad_end(9, "0")
        .str.head(9)
        .cast(pl.Int64)
    )
    # Checked before multiplying: the int64 product wraps silently.
    return (
        pl.when(seconds >= _MAX_SECONDS)
        .then(pl.lit(UNREPRESENTABLE, dtype=NS))
        .otherwise((seconds * 1_000_000_000 + fraction).cast(NS))
    )


def epoch_micros(raw: pl.Expr) -> pl.Expr:
    """Parse journald's ``__REALTIME_TIMESTAMP`` (microseconds since the epoch) to UTC."""
    micros = raw.cast(pl.Int64, strict=False)
    return (
        pl.when((micros > _MAX_MICROS) | (micros < -_MAX_MICROS))
        .then(pl.lit(UNREPRESENTABLE, dtype=NS))
        .otherwise((micros * 1000).cast(NS))
    )


def yearless(month_day_time: pl.Expr, fmt: str, anchor: pl.Expr, tz: str) -> pl.Expr:
    """Resolve ``MM-DD HH:MM:SS…`` stamps with the year nearest to ``anchor`` (a Date).

    ``fmt`` parses the text after ``YYYY-`` has been prepended, e.g. ``%Y-%m-%d %H:%M:%S%.f``.
    The anchor's year is tried first; a result more than half a year away moves one year
    towards the anchor, which handles December/January around a year boundary.
    """
    year = anchor.dt.year().cast(pl.String)
    first = local_time(pl.concat_str([year, pl.lit("-"), month_day_time]), fmt, tz)
    anchor_ts = anchor.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    gap = first - anchor_ts
    return (
        pl.when(gap > pl.lit(_HALF_YEAR))
        .then(first.dt.offset_by("-1y"))
        .when(gap < -pl.lit(_HALF_YEAR))
        .then(first.dt.offset_by("1y"))
        .otherwise(first)
    )
