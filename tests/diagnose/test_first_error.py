"""The first-error ranking: earliest root, clock-skew tolerance, one host's own order,
precedence, and the signature that names the winning row."""

from __future__ import annotations

import datetime as dt

import polars as pl

from analyzer.diagnose.first_error import pick, yield_to_specific

T0 = dt.datetime(2026, 11, 29, 18, 0, 0, tzinfo=dt.UTC)
SECOND = 1_000_000_000


def _evidence(rows: list[tuple[int, str, str, float, int, str]]) -> pl.DataFrame:
    """(row_id, host, signature, seconds after T0, precedence, role) per match."""
    return pl.DataFrame(
        [
            {
                "row_id": row_id,
                "host": host,
                "signature": signature,
                "ts": T0 + dt.timedelta(seconds=seconds),
                "precedence": precedence,
                "role": role,
            }
            for row_id, host, signature, seconds, precedence, role in rows
        ],
        schema_overrides={"ts": pl.Datetime("ns", "UTC"), "precedence": pl.Int32},
    )


def test_the_earliest_root_wins_over_an_earlier_secondary() -> None:
    evidence = _evidence(
        [
            (1, "a", "HB", 0.0, 0, "secondary"),
            (2, "b", "HW", 5.0, 10, "root"),
            (3, "c", "TB", 9.0, -55, "root"),
        ]
    )
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None
    assert winner.row["row_id"] == 2
    assert winner.candidates == 2


def test_simultaneous_roots_of_two_hosts_are_decided_by_precedence() -> None:
    evidence = _evidence(
        [(1, "a", "GENERIC", 0.0, -55, "root"), (2, "b", "SPECIFIC", 1.5, 20, "root")]
    )
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None and winner.row["signature"] == "SPECIFIC"
    assert winner.rivals["row_id"].to_list() == [1]


def test_beyond_the_tolerance_time_decides() -> None:
    evidence = _evidence(
        [(1, "a", "GENERIC", 0.0, -55, "root"), (2, "b", "SPECIFIC", 2.5, 20, "root")]
    )
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None and winner.row["signature"] == "GENERIC"


def test_one_host_orders_its_own_rows_by_time_not_precedence() -> None:
    """A host's clock is consistent with itself: its later, more specific line does not
    overtake its own earlier line."""
    evidence = _evidence(
        [(1, "a", "DRIVER", 0.0, 10, "root"), (2, "a", "RUNTIME", 0.002, 30, "root")]
    )
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None and winner.row["row_id"] == 1


def test_the_most_precise_signature_names_a_row_matched_twice() -> None:
    evidence = _evidence(
        [(7, "a", "PY-TB", 0.0, -55, "root"), (7, "a", "XLA-HBM", 0.0, 40, "root")]
    )
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None and winner.row["signature"] == "XLA-HBM"


def _untimed(rows: list[tuple[int, int, str, int, str]]) -> pl.DataFrame:
    """(row_id, file_id, signature, precedence, role) per match, none of them with a time."""
    return pl.DataFrame(
        [
            {
                "row_id": row_id,
                "file_id": file_id,
                "host": None,
                "signature": signature,
                "ts": None,
                "precedence": precedence,
                "role": role,
            }
            for row_id, file_id, signature, precedence, role in rows
        ],
        schema_overrides={
            "ts": pl.Datetime("ns", "UTC"),
            "precedence": pl.Int32,
            "host": pl.String,
            "file_id": pl.Int32,
        },
    )


def test_rows_without_a_time_are_ordered_by_their_position_in_the_file() -> None:
    # A pasted log: a generic traceback at row 3 comes before a specific error at row 7 of
    # the same file; position is that file's clock, so the earlier row wins.
    evidence = _untimed([(7, 1, "HBM", 10, "root"), (3, 1, "TB", -50, "root")])
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None
    assert winner.row["row_id"] == 3
    assert winner.candidates == 2


def test_untimed_files_are_not_ordered_against_each_other_precedence_decides() -> None:
    evidence = _untimed(
        [(1, 1, "TB", -50, "root"), (9, 1, "TB", -50, "root"), (5, 2, "HBM", 10, "root")]
    )
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None
    assert winner.row["row_id"] == 5
    assert winner.rivals["row_id"].to_list() == [1]


def test_a_timed_candidate_goes_before_untimed_ones() -> None:
    timed = _evidence([(20, "a", "HW", 0.0, 0, "root")]).with_columns(
        pl.lit(2, dtype=pl.Int32).alias("file_id")
    )
    evidence = pl.concat([_untimed([(1, 1, "HBM", 10, "root")]), timed], how="diagonal_relaxed")
    winner = pick(evidence, "root", 2 * SECOND)
    assert winner is not None
    assert winner.row["row_id"] == 20


def test_untimed_rows_of_another_role_are_not_candidates() -> None:
    assert pick(_untimed([(1, 1, "HB", 0, "secondary")]), "root", 2 * SECOND) is None


def test_a_generic_root_yields_to_a_specific_reading_of_its_row() -> None:
    evidence = _evidence(
        [
            (1, "a", "PY-EXC", 0.0, -50, "root"),
            (1, "a", "SYNC-TIMEOUT", 0.0, 0, "secondary"),
            (2, "a", "PY-EXC", 1.0, -50, "root"),
            (4, "c", "OOMKILLED", 30.0, -10, "root"),
            (4, "c", "EXIT-137", 30.0, 0, "context"),
            (3, "b", "HW", 10.0, 10, "root"),
            (3, "b", "INFO", 10.0, 5, "context"),
        ]
    )
    roles = yield_to_specific(evidence).sort("row_id", "signature")["role"].to_list()
    # Row 1's catch-all is explained by a specific consequence signature; row 2 has no other
    # reading; row 3's root is itself specific, and so is row 4's, whose low precedence only
    # ranks it among simultaneous roots (it is not a catch-all).
    assert roles == ["context", "secondary", "root", "root", "context", "context", "root"]
    winner = pick(yield_to_specific(evidence), "root", 2 * SECOND)
    assert winner is not None and winner.row["row_id"] == 2
