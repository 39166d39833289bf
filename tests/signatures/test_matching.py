"""``culprit match`` over a generated case: the same matches.parquet from every backend, its
metadata, and the ``matches`` view of ``culprit query``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.case.layout import MATCHES_FILE
from analyzer.cli import app
from analyzer.signatures import catalog
from analyzer.signatures.matching import catalogue_digest, matches_meta
from tests.conftest import Generated
from tests.signatures.conftest import signature_text

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def matched(
    generated: Callable[[str, int], Generated], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, pl.DataFrame], dict[str, dict[str, object]]]:
    """A copy of the generated host-crash-heartbeat case (8 hosts, seed 1, 10 minutes at 12
    lines per host and minute) matched by each backend through the CLI: the case, each
    backend's matches.parquet and its metadata."""
    case = tmp_path_factory.mktemp("match") / "case"
    shutil.copytree(generated("host-crash-heartbeat", 8).case, case)
    tables, metas = {}, {}
    for backend in ("polars", "duckdb", "python"):
        result = runner.invoke(app, ["match", str(case), "--backend", backend])
        assert result.exit_code == 0, result.output
        assert f"; {backend} " in result.stdout and " rows (" in result.stdout
        tables[backend] = pl.read_parquet(case / MATCHES_FILE)
        metas[backend] = matches_meta(case / MATCHES_FILE)
    return case, tables, metas


def test_every_backend_writes_the_same_matches(
    matched: tuple[Path, dict[str, pl.DataFrame], dict[str, dict[str, object]]],
) -> None:
    _, tables, _ = matched
    reference = tables["python"]
    assert reference.height > 0
    assert reference.columns == ["row_id", "signature", "role", "captures"]
    assert reference.equals(reference.sort("row_id", "signature"))
    for name, table in tables.items():
        assert table.equals(reference), name


def test_polars_in_small_slices_gives_the_same_table(
    matched: tuple[Path, dict[str, pl.DataFrame], dict[str, dict[str, object]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from analyzer.signatures.backends import polars as polars_backend

    case = tmp_path / "case"
    shutil.copytree(matched[0], case)
    monkeypatch.setattr(polars_backend, "SLICE_ROWS", 100)
    result = api.match(case)
    assert result.rows_scanned > 300  # several slices
    assert pl.read_parquet(result.path).equals(matched[1]["python"])


def test_the_file_says_how_it_was_made(
    matched: tuple[Path, dict[str, pl.DataFrame], dict[str, dict[str, object]]],
) -> None:
    case, tables, metas = matched
    rows = api.case_info(case).meta.counts.rows
    loaded = catalog.load()
    for backend, meta in metas.items():
        assert meta["backend"] == backend
        assert meta["rows_scanned"] == rows
        assert meta["matches"] == tables[backend].height
        assert meta["signatures"] == len(loaded)
        assert meta["catalogue_digest"] == catalogue_digest(loaded)


def test_the_matches_view_joins_the_rows(
    matched: tuple[Path, dict[str, pl.DataFrame], dict[str, dict[str, object]]],
) -> None:
    case, tables, _ = matched
    sql = (
        "SELECT row_id, signature, role, captures, ts, host, source, path, line, message "
        "FROM matches ORDER BY row_id, signature"
    )
    result = runner.invoke(app, ["query", str(case), sql, "--format", "json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["row_id"], r["signature"]) for r in records] == tables["python"].select(
        "row_id", "signature"
    ).rows()
    rows = api.query(case, "SELECT row_id, line, message FROM rows").to_pylist()
    by_id = {row["row_id"]: row for row in rows}
    for record in records:
        assert record["message"] == by_id[record["row_id"]]["message"]
        assert record["line"] == by_id[record["row_id"]]["line"]
        assert record["path"] and record["source"] and record["ts"]
    heartbeat = [r for r in records if r["signature"] == "COORD-HB-001"]
    assert heartbeat and all(json.loads(r["captures"])["task"] for r in heartbeat)


def test_extra_signature_folders(
    matched: tuple[Path, dict[str, pl.DataFrame], dict[str, dict[str, object]]],
    folder: Callable[..., Path],
    tmp_path: Path,
) -> None:
    case = tmp_path / "case"
    shutil.copytree(matched[0], case)
    text = (
        signature_text(regex=r"Task (?P<chip>\S+) heartbeat timeout")
        .replace('anchors = ["widget failed"]', 'anchors = ["heartbeat timeout"]')
        .replace("the widget failed on chip 7", "Task t7 heartbeat timeout")
        .replace('chip = "7"', 'chip = "t7"')
    )
    extra = folder({"coordination/test-widget-failed.toml": text})
    result = api.match(case, backend="duckdb", signatures=[extra])
    assert result.signatures == len(catalog.load()) + 1
    assert result.catalogue_digest != matches_meta(matched[0] / MATCHES_FILE)["catalogue_digest"]
    table = pl.read_parquet(result.path)
    mine = table.filter(pl.col("signature") == "COORD-T-001")
    theirs = table.filter(pl.col("signature") == "COORD-HB-001")
    assert mine.height > 0
    assert mine["row_id"].to_list() == theirs["row_id"].to_list()


def test_errors_are_one_line(tmp_path: Path) -> None:
    unknown = runner.invoke(app, ["match", str(tmp_path), "--backend", "spark"])
    assert unknown.exit_code == 2
    assert "unknown matching backend 'spark'; known: polars, duckdb, python" in unknown.stderr
    missing = runner.invoke(app, ["match", str(tmp_path / "nope")])
    assert missing.exit_code == 2
    assert "no such case directory" in missing.stderr
