"""The simulated clock every input is placed on, and stamp formatting shared by the inputs.

The TPU inputs start at :data:`START_NS`; the kubelet journal and the ModelArts log are placed
relative to it, so that all four describe the same incident timeline.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import polars as pl

START: Final = dt.datetime(2026, 11, 29, 17, 40, tzinfo=dt.UTC)
START_NS: Final = int(START.timestamp()) * 1_000_000_000
#: Training resumes at this step at :data:`START_NS`.
FIRST_STEP: Final = 1000
#: Wall time of one training step.
STEP_NS: Final = 2_400_000_000


def rfc3339(column: pl.Expr) -> pl.Expr:
    """A nanosecond count since the epoch as an RFC 3339 UTC stamp with nanoseconds."""
    return column.cast(pl.Datetime("ns")).dt.to_string("%Y-%m-%dT%H:%M:%S%.9fZ")


def subsecond_digits(column: pl.Expr, digits: int) -> pl.Expr:
    """The sub-second digits of a nanosecond count, truncated to ``digits`` digits."""
    fraction: pl.Expr = column % 1_000_000_000 // 10 ** (9 - digits)
    return fraction.cast(pl.String).str.zfill(digits)


def unit_spacing_ns(target: int, line_bytes: int, hours: int = 20) -> int:
    """Time between units so that ``target`` bytes of about ``line_bytes``-byte lines span about
    ``hours`` whatever the size, so that year-less stamps stay unambiguous. At least 1 ms."""
    return max(1_000_000, hours * 3600 * 1_000_000_000 * line_bytes // max(target, 1))
