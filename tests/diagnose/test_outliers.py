"""Spatial outliers and the leads they order, on small per-attempt template tables (one row
per template × host, as :meth:`analyzer.diagnose.patterns.Patterns.within` gives them)."""

from __future__ import annotations

import datetime as dt

import polars as pl

from analyzer.diagnose.leads import by_frequency, rank_leads
from analyzer.diagnose.outliers import rank_hosts

T0 = dt.datetime(2026, 11, 29, 18, 0, tzinfo=dt.UTC)
HOSTS = [f"host-{i}" for i in range(8)]


def _table(cells: list[tuple[str, str, int, int, float, bool]]) -> pl.DataFrame:
    """(template, host, rows, first_row, first second, error) -> a template × host table."""
    ids = {t: i for i, t in enumerate(dict.fromkeys(c[0] for c in cells))}
    return pl.DataFrame(
        {
            "template_id": [ids[c[0]] for c in cells],
            "host": [c[1] for c in cells],
            "rows": [c[2] for c in cells],
            "first_row": [c[3] for c in cells],
            "last_row": [c[3] + c[2] - 1 for c in cells],
            "first_ts": [T0 + dt.timedelta(seconds=c[4]) for c in cells],
            "last_ts": [T0 + dt.timedelta(seconds=c[4] + c[2]) for c in cells],
            "template": [c[0] for c in cells],
            "error": [c[5] for c in cells],
            "error_rank": [0 if c[5] else None for c in cells],
            "routine": [False] * len(cells),
        },
        schema_overrides={"template_id": pl.UInt64, "error_rank": pl.Int8},
    )


def _incident() -> pl.DataFrame:
    """Eight hosts train; host-5 logs a hardware error and stops; 10 s later every other host
    logs the heartbeat-timeout cascade, many times."""
    cells: list[tuple[str, str, int, int, float, bool]] = []
    for index, host in enumerate(HOSTS):
        base = index * 1000
        cells.append(("completed step <*>", host, 40, base, 0.0, False))
        if host == "host-5":
            cells.append(("!!!! FATAL ERROR !!!! for [<*>]", host, 1, base + 500, 300.0, True))
        else:
            cells.append(
                ("heartbeat timeout for task <*>", host, 30, base + 600, 310.0 + index, True)
            )
    return _table(cells)


def test_the_host_that_broke_ranks_first_and_its_rows_are_cited() -> None:
    ranked = rank_hosts(_incident())
    assert ranked[0].host == "host-5" and ranked[0].rank == 1
    assert ranked[0].score > ranked[1].score if len(ranked) > 1 else True
    assert 5500 in ranked[0].row_ids  # its fatal error row
    assert any("lacks" in reason for reason in ranked[0].reasons)


def test_too_few_hosts_have_no_peers() -> None:
    two = _incident().filter(pl.col("host").is_in(["host-0", "host-5"]))
    assert rank_hosts(two) == []


def test_first_by_a_margin_names_the_host_that_logged_a_shared_error_first() -> None:
    cells = [("completed step <*>", h, 40, i * 1000, 0.0, False) for i, h in enumerate(HOSTS)]
    cells += [
        (
            "checkpoint commit failed",
            h,
            1,
            i * 1000 + 900,
            500.0 if h == "host-3" else 740.0 + i,
            True,
        )
        for i, h in enumerate(HOSTS)
    ]
    ranked = rank_hosts(_table(cells), margin_ns=2_000_000_000)
    assert ranked[0].host == "host-3"


def test_leads_put_the_rare_early_line_before_the_frequent_cascade() -> None:
    table = _incident()
    leads = rank_leads(table, rank_hosts(table))
    assert leads[0] == 5500
    known = rank_leads(table, rank_hosts(table), known={"!!!! FATAL ERROR !!!! for [<*>]"})
    assert 5500 not in known


def test_the_frequency_order_ranked_the_cascade_first() -> None:
    """What the leads were before: the most frequent error shapes first (the cascade)."""
    messages = ["E heartbeat timeout for task 5"] * 30 + ["E !!!! FATAL ERROR !!!! for [3]"]
    rows = pl.LazyFrame(
        {
            "row_id": list(range(31, 0, -1)),
            "ts": [T0] * 31,
            "severity": ["ERROR"] * 31,
            "message": messages,
        }
    )
    assert by_frequency(rows, None, None)[0] != 1
