"""Timestamp parsing as polars expressions: exact instants, local times, year-less stamps.

Nothing here goes through Python ``datetime`` per value (it would lose nanoseconds and be slow).
Local times are interpreted in a zone (``--tz``, default UTC) and converted to UTC; stamps
without a year get the year that puts them closest to an anchor date (so a December line in a
log written in January lands in the previous year).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from typing import Final

import polars as pl

from analyzer.errors import UsageError

NS: Final = pl.Datetime("ns", "UTC")
_NAIVE: Final = pl.Datetime("ns")
_HALF_YEAR: Final = dt.timedelta(days=183)


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
    return text.str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%#z", time_unit="ns", time_zone="UTC", strict=False
    )


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
        return raw.str.to_datetime(fmt, time_unit="ns", time_zone="UTC", strict=False)
    offset = fixed_offset(tz)
    if offset is not None:
        utc = raw.str.to_datetime(fmt, time_unit="ns", time_zone="UTC", strict=False)
        return utc - pl.duration(seconds=int(offset.total_seconds()), time_unit="ns")
    naive = raw.str.to_datetime(fmt, time_unit="ns", strict=False)
    return naive.dt.replace_time_zone(
        tz, ambiguous="earliest", non_existent="null"
    ).dt.convert_time_zone("UTC")


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
    return (seconds * 1_000_000_000 + fraction).cast(NS)


def epoch_micros(raw: pl.Expr) -> pl.Expr:
    """Parse journald's ``__REALTIME_TIMESTAMP`` (microseconds since the epoch) to UTC."""
    return (raw.cast(pl.Int64, strict=False) * 1000).cast(NS)


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
