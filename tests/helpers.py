"""Helpers shared by tests (plain functions; fixtures live in conftest.py)."""

from __future__ import annotations

import calendar
import re
from pathlib import Path

import polars as pl


def read_table(case: Path, name: str) -> pl.DataFrame:
    """One of the case's Parquet tables (``rows`` reads every part)."""
    if name == "rows":
        parts = sorted((case / "rows").glob("*.parquet"))
        if not parts:
            return pl.DataFrame()
        return pl.concat([pl.read_parquet(p) for p in parts])
    return pl.read_parquet(case / f"{name}.parquet")


def ns(stamp: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 time (``Z``, ``±HH:MM`` or `` UTC``),
    computed by hand so the tests do not rely on the parsers they check."""
    match = re.fullmatch(
        r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
        r"(Z| UTC|([+-])(\d{2}):(\d{2}))",
        stamp,
    )
    assert match, stamp
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if match.group(9):
        sign = 1 if match.group(9) == "+" else -1
        seconds -= sign * (int(match.group(10)) * 3600 + int(match.group(11)) * 60)
    return seconds * 1_000_000_000 + int((match.group(7) or "").ljust(9, "0"))
