"""The text reader on real logs nobody here wrote (loghub 2k samples, see SOURCE.md there).

Skipped when ../shared/data/loghub is absent. Where loghub's ground-truth parse
(``*_structured.csv``) has the level, time, host or component, the parsed rows must agree with
it line by line.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from analyzer.schema import normalize_severity
from tests.helpers import read_table

Ingest = Callable[..., Path]
SYSTEMS = ["BGL", "HDFS", "HPC", "Hadoop", "Linux", "OpenStack", "Spark", "Thunderbird"]


def _rows(loghub: Path, system: str, ingest_case: Ingest) -> tuple[pl.DataFrame, pl.DataFrame]:
    case = ingest_case(loghub / system / f"{system}_2k.log")
    rows = read_table(case, "rows").sort("line")
    truth = pl.read_csv(loghub / system / f"{system}_2k.log_structured.csv", infer_schema=False)
    return rows, truth


@pytest.mark.loghub
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_line_is_one_row(loghub: Path, system: str, ingest_case: Ingest) -> None:
    rows, truth = _rows(loghub, system, ingest_case)
    raw = (loghub / system / f"{system}_2k.log").read_text(errors="replace").splitlines()
    assert rows.height == truth.height == len(raw) == 2000
    assert rows["line"].to_list() == list(range(1, 2001))
    # Each row's message is the end of its raw line (prefix stripped, nothing invented).
    assert all(line.endswith(msg) for line, msg in zip(raw, rows["message"], strict=True))


@pytest.mark.loghub
@pytest.mark.parametrize(
    ("system", "year_fmt"), [("Hadoop", "%Y-%m-%d"), ("Spark", "%y/%m/%d"), ("HDFS", "%y%m%d")]
)
def test_levels_and_times_match_ground_truth(
    loghub: Path, system: str, year_fmt: str, ingest_case: Ingest
) -> None:
    rows, truth = _rows(loghub, system, ingest_case)
    expected_levels = [normalize_severity(level) for level in truth["Level"]]
    assert rows["severity"].cast(pl.String).to_list() == expected_levels
    stamps = truth.select(
        pl.concat_str(["Date", pl.lit(" "), pl.col("Time").str.replace(",", ".")]).str.to_datetime(
            f"{year_fmt} %H:%M:%S%.f"
            if system == "Hadoop"
            else f"{year_fmt} %H:%M:%S"
            if system == "Spark"
            else f"{year_fmt} %H%M%S",
            time_unit="ns",
            time_zone="UTC",
        )
    ).to_series()
    assert rows["ts"].to_list() == stamps.to_list()
    assert set(rows["ts_quality"].cast(pl.String)) == {"inferred_tz"}


@pytest.mark.loghub
def test_syslog_host_component_and_pid(loghub: Path, ingest_case: Ingest) -> None:
    rows, truth = _rows(loghub, "Linux", ingest_case)
    # loghub's Linux "Level" column holds the host name.
    assert rows["host"].cast(pl.String).to_list() == truth["Level"].to_list()
    assert rows["logger"].cast(pl.String).to_list() == truth["Component"].to_list()
    # loghub strips blanks around Content; the rows keep the text verbatim.
    assert [m.strip() for m in rows["message"]] == truth["Content"].to_list()
    pids = rows["extra"].str.json_path_match("$.tid").to_list()
    assert pids == [pid or None for pid in truth["PID"].to_list()]
    first = rows["ts"][0]
    assert isinstance(first, dt.datetime)
    assert (first.month, first.day, first.hour, first.minute) == (6, 14, 15, 16)
    assert set(rows["ts_quality"].cast(pl.String)) == {"inferred_year"}
