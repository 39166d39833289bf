"""Clock offsets measured from a broadcast every host logs, and first errors compared on
corrected times."""

from __future__ import annotations

import datetime as dt

import polars as pl

from analyzer.diagnose import skew
from analyzer.diagnose.first_error import pick

T0 = dt.datetime(2026, 11, 29, 18, 0, 0, tzinfo=dt.UTC)


def _frame(rows: list[tuple[int, str, str, float, str]]) -> pl.DataFrame:
    """(row_id, host, signature, seconds after T0, role); precedence 0 for all."""
    return pl.DataFrame(
        [
            {
                "row_id": row_id,
                "host": host,
                "signature": signature,
                "ts": T0 + dt.timedelta(seconds=seconds),
                "precedence": 0,
                "role": role,
            }
            for row_id, host, signature, seconds, role in rows
        ],
        schema_overrides={"ts": pl.Datetime("ns", "UTC"), "precedence": pl.Int32},
    )


BROADCAST = skew.BROADCAST_SIGNATURES[0]


def test_offsets_are_each_hosts_distance_from_the_median_broadcast_stamp() -> None:
    # Host a's clock runs 4 s ahead: it stamps the broadcast at 14 s, the others at ~10 s.
    evidence = _frame(
        [
            (1, "a", BROADCAST, 14.0, "secondary"),
            (2, "b", BROADCAST, 10.0, "secondary"),
            (3, "c", BROADCAST, 10.2, "secondary"),
            (4, "d", BROADCAST, 9.9, "secondary"),
        ]
    )
    offsets = skew.estimate(evidence)
    table = dict(offsets.table.iter_rows())
    assert offsets.signature == BROADCAST and offsets.hosts == 4
    assert abs(table["a"] - 3_900_000_000) < 1_000
    assert abs(table["c"] - 100_000_000) < 1_000
    assert offsets.largest_ns == table["a"]


def test_too_few_hosts_give_no_estimate() -> None:
    evidence = _frame(
        [(1, "a", BROADCAST, 14.0, "secondary"), (2, "b", BROADCAST, 10.0, "secondary")]
    )
    assert skew.estimate(evidence).hosts == 0


def test_a_fast_clock_no_longer_hides_the_real_first_error() -> None:
    """Host a's root is stamped 4.5 s (really 0.6 s: its clock is 3.9 s ahead), host b's at
    3.0 s. On raw times b is first (more than the tolerance earlier); corrected, a is."""
    evidence = _frame(
        [
            (1, "a", "ROOT", 4.5, "root"),
            (2, "b", "ROOT", 3.0, "root"),
            (3, "a", BROADCAST, 14.0, "secondary"),
            (4, "b", BROADCAST, 10.0, "secondary"),
            (5, "c", BROADCAST, 10.1, "secondary"),
            (6, "d", BROADCAST, 9.9, "secondary"),
        ]
    )
    raw = pick(evidence, "root", 500_000_000)
    assert raw is not None and raw.row["host"] == "b"
    corrected = pick(skew.corrected(evidence, skew.estimate(evidence)), "root", 500_000_000)
    assert corrected is not None and corrected.row["host"] == "a"
    assert corrected.row["ts"] == T0 + dt.timedelta(seconds=4.5)  # reported as logged
