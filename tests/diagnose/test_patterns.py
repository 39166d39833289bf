"""The template × host spans of an attempt, summed from the time-bucket cells the span holds
whole and the rows of the buckets it cuts, equal those of the rows themselves."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from analyzer.case.layout import TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE, TEMPLATES_FILE
from analyzer.diagnose import patterns as patterns_mod
from analyzer.diagnose.patterns import _read
from analyzer.errors import CaseError
from analyzer.signatures.templates import BUCKET_S, span_columns, write_templates

_WIDTH = BUCKET_S * 1_000_000_000
_START = 1_795_974_598_122_708_000


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows of four templates on three hosts over ten minutes, some without a time."""
    root = tmp_path_factory.mktemp("patterns")
    (root / "rows").mkdir()
    draw = random.Random(7)
    count = 3_000
    stamps = sorted(_START + draw.randrange(10 * _WIDTH) for _ in range(count))
    pl.DataFrame(
        {
            "row_id": list(range(count)),
            "ts": [None if k % 97 == 0 else t for k, t in enumerate(stamps)],
            "host": [draw.choice(["h-1", "h-2", None]) for _ in range(count)],
            "severity": ["INFO"] * count,
            "message": [
                draw.choice(["step 1 done", "loss 0.5", "disk failed", "rank 3 lost"])
                for _ in range(count)
            ],
        },
        schema_overrides={"ts": pl.Datetime("ns", "UTC")},
    ).write_parquet(root / "rows" / "part-000000-0000.parquet")
    write_templates(sorted((root / "rows").glob("*.parquet")), root)
    return root


def _spans_of_rows(rows: pl.LazyFrame, start: int | None, end: int | None) -> pl.DataFrame:
    if start is not None and end is not None:
        rows = rows.filter(pl.col("ts").dt.epoch("ns").is_between(start, end))
    return rows.group_by("template_id", "host").agg(*span_columns()).collect()


def _spans() -> list[tuple[int | None, int | None]]:
    aligned = _START // _WIDTH * _WIDTH
    draw = random.Random(11)
    spans: list[tuple[int | None, int | None]] = [(None, None), (_START, _START + 10 * _WIDTH)]
    spans += [
        (aligned + a * _WIDTH + da, aligned + b * _WIDTH + db)
        for a, b in [(1, 3), (2, 2)]
        for da in (-1, 0, 1)
        for db in (-1, 0, 1)
    ]
    for _ in range(20):
        start = _START + draw.randrange(10 * _WIDTH)
        spans.append((start, start + draw.randrange(4 * _WIDTH)))
    return spans


@pytest.mark.parametrize("span", _spans())
def test_spans_from_cells_equal_those_of_the_rows(
    tables: Path, span: tuple[int | None, int | None]
) -> None:
    patterns = _read(tables)
    got = patterns._spans(*span).sort("template_id", "host")
    want = _spans_of_rows(patterns.rows, *span).sort("template_id", "host")
    assert got.equals(want)
    assert want.height or span[0] is not None


def test_make_patterns_writes_the_tables_once_and_leaves_an_unwritable_case_alone(
    ingest_case: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i} done\n" for i in range(20)) + "disk failed\n")
    case = ingest_case(log)
    opened = api.load_case(case)
    tables = [case / name for name in (TEMPLATES_FILE, TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE)]
    assert not any(path.exists() for path in tables)

    def refuse(files: list[Path], directory: Path) -> int:
        raise CaseError("cannot write templates.parquet", path=str(directory))

    monkeypatch.setattr(patterns_mod, "write_templates", refuse)
    patterns_mod.make_patterns(opened)  # the diagnosis makes them in a scratch directory
    assert not any(path.exists() for path in tables)
    monkeypatch.undo()
    patterns_mod.make_patterns(opened)
    assert all(path.is_file() for path in tables)
    assert pl.read_parquet(tables[0])["rows"].sum() == opened.meta.counts.rows
