"""The commands that read a case: ingest, case info / hosts and query (tests/cli mirrors
analyzer/cli)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from tests.conftest import EXAMPLE

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "case"
    result = runner.invoke(app, ["ingest", str(EXAMPLE), "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "8 files, 132 records -> 125 rows" in result.stdout
    return out


def test_reingest_says_up_to_date(case: Path) -> None:
    result = runner.invoke(app, ["ingest", str(EXAMPLE), "-o", str(case), "--quiet"])
    assert result.exit_code == 0
    assert "up to date" in result.stdout


def test_case_info_table_and_json(case: Path) -> None:
    table = runner.invoke(app, ["case", "info", str(case)])
    assert table.exit_code == 0
    assert "Rows by source and reader" in table.stdout
    assert "cloud_logging.jsonl" in table.stdout
    as_json = runner.invoke(app, ["case", "info", str(case), "--format", "json"])
    info = json.loads(as_json.stdout)
    assert info["meta"]["counts"]["rows"] == 125
    assert info["hosts"] == 4


def test_query_formats(case: Path, tmp_path: Path) -> None:
    sql = "SELECT line, ts, severity FROM rows WHERE severity = 'CRITICAL' ORDER BY ts"
    csv = runner.invoke(app, ["query", str(case), sql, "--format", "csv"])
    assert csv.exit_code == 0
    lines = csv.stdout.strip().splitlines()
    assert lines[0] == '"line","ts","severity"'
    assert len(lines) == 4
    # Nanoseconds survive into text output.
    assert lines[1].split(",")[1].strip('"').endswith("Z")
    assert len(lines[1].split(",")[1].strip('"').split(".")[1]) == 10
    as_json = runner.invoke(app, ["query", str(case), sql, "--format", "json"])
    assert [json.loads(x)["severity"] for x in as_json.stdout.splitlines()] == ["CRITICAL"] * 3
    out = tmp_path / "q.parquet"
    parquet = runner.invoke(app, ["query", str(case), sql, "--format", "parquet", "-o", str(out)])
    assert parquet.exit_code == 0
    assert pq.read_table(out).num_rows == 3
    table = runner.invoke(app, ["query", str(case), "SELECT count(*) AS n FROM rows"])
    assert "125" in table.stdout


def test_bad_sql_is_one_line(case: Path) -> None:
    result = runner.invoke(app, ["query", str(case), "SELECT * FROM nowhere"])
    assert result.exit_code == 2
    assert result.stderr.startswith("culprit: error: ")
    assert result.stderr.count("\n") == 1
    assert "nowhere" in result.stderr


def test_case_hosts(case: Path) -> None:
    table = runner.invoke(app, ["case", "hosts", str(case)])
    assert table.exit_code == 0
    assert "4 hosts" in table.stdout
    as_csv = runner.invoke(app, ["case", "hosts", str(case), "--format", "csv"])
    lines = as_csv.stdout.strip().splitlines()
    assert lines[0] == '"host","kind","alias","evidence","rows","conflict"'
    instance = [line for line in lines if "1437928523886234104" in line]
    assert len(instance) == 1
    assert "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-p4vd" in instance[0]
    assert "gcloud/node-and-system-events.json:" in instance[0]
