"""Restart attempts from labels, pod generations and global silences."""

from __future__ import annotations

import datetime as dt

import polars as pl

from analyzer.diagnose.attempts import assign_labelled, split

T0 = dt.datetime(2026, 11, 29, 18, 0, 0, tzinfo=dt.UTC)


def _activity(rows: list[dict[str, object]]) -> pl.LazyFrame:
    base = {
        "row_id": 0,
        "host": "h",
        "pod": None,
        "workload": None,
        "attempt": None,
        "source": "cloud_logging",
        "severity": "INFO",
    }
    frame = pl.DataFrame(
        [{**base, "row_id": i, **row} for i, row in enumerate(rows)],
        schema={
            "row_id": pl.Int64,
            "ts": pl.Datetime("ns", "UTC"),
            "host": pl.String,
            "pod": pl.String,
            "workload": pl.String,
            "attempt": pl.Int32,
            "source": pl.String,
            "severity": pl.String,
        },
    )
    return frame.lazy()


def _at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_restart_labels_decide_and_unlabelled_rows_follow_time() -> None:
    activity = _activity(
        [
            {"ts": _at(0), "attempt": 0},
            {"ts": _at(50), "attempt": 0},
            {"ts": _at(100), "attempt": 1},
            {"ts": _at(160), "attempt": 1},
            {"ts": _at(60), "source": "kubelet"},  # between the attempts: ends attempt 0
            {"ts": _at(120), "source": "kubelet"},
        ]
    )
    attempts = split(activity)
    assert [(a.index, a.label) for a in attempts] == [(0, 0), (1, 1)]
    assert attempts[0].boundary == "restart label 0"
    placed = assign_labelled(activity, attempts).collect()
    assert placed["attempt_index"].to_list() == [0, 0, 1, 1, 0, 1]


def test_a_late_labelled_line_stays_in_its_attempt() -> None:
    activity = _activity(
        [
            {"ts": _at(0), "attempt": 0},
            {"ts": _at(100), "attempt": 1},
            {"ts": _at(101), "attempt": 0},
        ]
    )
    attempts = split(activity)
    placed = assign_labelled(activity, attempts).collect()
    assert placed["attempt_index"].to_list() == [0, 1, 0]


def test_pod_generations_split_a_job_without_labels() -> None:
    rows = []
    for generation, offset in enumerate((0, 300)):
        for worker in range(3):
            pod = f"job-0-{worker}-gen{generation}"
            rows += [
                {"ts": _at(offset + worker), "pod": pod, "workload": "job"},
                {"ts": _at(offset + 200), "pod": pod, "workload": "job"},
            ]
    attempts = split(_activity(rows))
    assert len(attempts) == 2
    assert attempts[1].boundary == "pod generation"
    assert attempts[1].start == int(_at(300).timestamp() * 1e9)


def test_overlapping_pods_are_one_generation() -> None:
    rows = [
        {"ts": _at(0), "pod": "a", "workload": "job"},
        {"ts": _at(100), "pod": "a", "workload": "job"},
        {"ts": _at(50), "pod": "b", "workload": "job"},
        {"ts": _at(150), "pod": "b", "workload": "job"},
    ]
    assert len(split(_activity(rows))) == 1


def test_a_long_silence_separates_attempts() -> None:
    rows: list[dict[str, object]] = [{"ts": _at(s)} for s in (0, 10, 20, 2000, 2010)]
    attempts = split(_activity(rows), silence_s=600)
    assert len(attempts) == 2
    assert attempts[0].rows == 3 and attempts[1].rows == 2
    assert len(split(_activity(rows), silence_s=5000)) == 1
