"""Per-host activity over the case's time range, and its drawing as an inline SVG sparkline.

The buckets of every host on a page come from one DuckDB group-by: a case can have thousands
of hosts, and a query per host would cost a scan of the rows each.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import duckdb
import numpy as np
import numpy.typing as npt
from markupsafe import Markup

#: Time buckets of a sparkline.
BUCKETS: Final = 60
#: The table of error rows (``row_id``) a connection must have for :func:`activity`: the
#: rows the diagnosis reads as errors (:class:`analyzer.api.HostErrors`), none for a case
#: not analyzed.
ERROR_ROWS_TABLE: Final = "_error_rows"

_ROWS_FILL: Final = "#8a9bb0"
_ERRORS_FILL: Final = "#c62828"

_BUCKETS_SQL: Final = f"""
WITH wanted AS (SELECT unnest($hosts) AS host, unnest(range(len($hosts))) AS i)
SELECT w.i,
       greatest(0, least($n - 1, (epoch_us(r.ts::TIMESTAMPTZ) - $start) * $n // $width))
           AS bucket,
       count(*) AS rows,
       count(e.row_id) AS errors
FROM rows r JOIN wanted w USING (host) LEFT JOIN {ERROR_ROWS_TABLE} e USING (row_id)
WHERE r.ts IS NOT NULL
GROUP BY ALL
"""


@dataclass(frozen=True)
class Span:
    """The case's time range in microseconds since the epoch (``width`` > 0)."""

    start: int
    width: int

    @classmethod
    def of(cls, first: dt.datetime | None, last: dt.datetime | None) -> Span | None:
        """The span from ``case.json``'s first and last timestamps; None without timestamps."""
        if first is None or last is None:
            return None
        start = _micros(first)
        # +1 so the last row falls in the last bucket rather than one past it.
        return cls(start, max(1, _micros(last) - start + 1))


def _micros(moment: dt.datetime) -> int:
    return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)


@dataclass(frozen=True)
class Activity:
    """Rows and error rows of each host per bucket: ``rows[i]`` is the i-th host's counts."""

    rows: npt.NDArray[np.int64]
    errors: npt.NDArray[np.int64]


def activity(
    connection: duckdb.DuckDBPyConnection,
    hosts: Sequence[str],
    span: Span,
    buckets: int = BUCKETS,
) -> Activity:
    """Count the rows and error rows (:data:`ERROR_ROWS_TABLE`) of ``hosts`` per time
    bucket, in one group-by over the case's rows."""
    rows = np.zeros((len(hosts), buckets), dtype=np.int64)
    errors = np.zeros_like(rows)
    if not hosts:
        return Activity(rows, errors)
    found = connection.execute(
        _BUCKETS_SQL,
        {"hosts": list(hosts), "n": buckets, "start": span.start, "width": span.width},
    ).fetchnumpy()
    where = (found["i"].astype(np.intp), found["bucket"].astype(np.intp))
    rows[where] = found["rows"]
    errors[where] = found["errors"]
    return Activity(rows, errors)


def sparkline(
    rows: npt.NDArray[np.int64],
    errors: npt.NDArray[np.int64],
    *,
    width: int = 180,
    height: int = 24,
) -> Markup:
    """An inline SVG of one host's buckets: grey bars for rows, red for error rows, both on
    the host's own scale (the shape matters for triage: when it went quiet, when it erred).

    The markup is built from numbers only, so it is safe to emit unescaped.
    """
    top = max(int(rows.max(initial=0)), 1)
    bar = width / len(rows) if len(rows) else float(width)
    total, failed = int(rows.sum()), int(errors.sum())
    label = f"{total} rows, {failed} errors"
    return Markup(
        f'<svg class="spark" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{label}">'
        f"<title>{label}</title>"
        f'<path fill="{_ROWS_FILL}" d="{_bars(rows, top, bar, height)}"/>'
        f'<path fill="{_ERRORS_FILL}" d="{_bars(errors, top, bar, height)}"/>'
        "</svg>"
    )


def _bars(counts: npt.NDArray[np.int64], top: int, bar: float, height: int) -> str:
    """SVG path data of one bar per non-empty bucket; a bucket with any rows is at least one
    pixel high, so a single line is not lost to rounding."""
    heights = np.where(counts > 0, np.maximum(counts / top * height, 1.0), 0.0)
    return "".join(
        f"M{i * bar:.1f} {height}v-{h:.1f}h{bar:.1f}v{h:.1f}z"
        for i, h in enumerate(heights.tolist())
        if h > 0
    )
