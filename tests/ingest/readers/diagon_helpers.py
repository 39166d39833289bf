"""Samples of ML Diagnostics dumps (tests/samples/diagon) and how the Diagon tests read them."""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path
from typing import Any

import polars as pl

from analyzer.case.inputs import FileCounts, Issue, ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.readers.diagon_api import DiagonApiReader
from analyzer.ingest.readers.diagon_daemon import DiagonDaemonReader
from analyzer.schema import conform
from analyzer.streams import Content, ExpansionBudget
from tests.helpers import ns

SAMPLES = Path(__file__).parents[2] / "samples"


DIAGON = SAMPLES / "diagon"


DAEMON = DiagonDaemonReader()


API = DiagonApiReader()


LINE_NAMES = (
    "daemon_prefix.log",
    "diagon-daemon-q7m4x.log",
    "operator_console.log",
    "mldiagnostics-connection-operator-6c9f8d7b5-q2w4x.log",
)


DOC_NAMES = ("ml_runs.json", "monitored_events.json")


OPERATOR_JSON = "mldiagnostics-connection-operator-6c9f8d7b5-q2w4x.log"


#: When the samples were "copied off the cluster" (mtime): the day after the incident.
MTIME = "2026-11-30T09:00:00Z"


# -- helpers ---------------------------------------------------------------------------------


def run_reader(
    reader: DiagonDaemonReader | DiagonApiReader,
    data: bytes,
    path: str,
    options: ReadOptions | None = None,
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    """Read ``data`` as the pipeline does (sniff-sized head first), without the pipeline."""
    ctx = ReadContext(path, options or ReadOptions(), mtime=ns(MTIME) / 1e9)
    content = Content(io.BytesIO(data), ExpansionBudget(), path)
    content.head(64 << 10)
    frames = list(reader.read(content, ctx))
    frame = pl.concat(frames, how="vertical") if frames else pl.DataFrame()
    return frame, ctx.counts, ctx.issues


@functools.cache
def read_sample(
    name: str, chunk_bytes: int | None = None
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    reader = API if name.endswith(".json") else DAEMON
    options = ReadOptions() if chunk_bytes is None else ReadOptions(chunk_bytes=chunk_bytes)
    return run_reader(reader, (DIAGON / name).read_bytes(), f"diagon/{name}", options)


def read(name: str, chunk_bytes: int | None = None) -> pl.DataFrame:
    return read_sample(name, chunk_bytes)[0]


def row_list(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Canonical rows (schema applied) in order, ``extra`` parsed, ``ts`` as ns."""
    if frame.height == 0:
        return []
    numbered = frame.with_columns(
        row_id=pl.int_range(pl.len(), dtype=pl.Int64), file_id=pl.lit(0, dtype=pl.Int32)
    )
    canonical = pl.from_arrow(conform(numbered))
    assert isinstance(canonical, pl.DataFrame)
    out = []
    for row in canonical.with_columns(ts_ns=pl.col("ts").dt.epoch("ns")).iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        out.append(row)
    return out


def rows_of(frame: pl.DataFrame) -> dict[int, dict[str, Any]]:
    """:func:`row_list` keyed by line (one row per line in these inputs)."""
    out: dict[int, dict[str, Any]] = {}
    for row in row_list(frame):
        assert row["line"] not in out
        out[row["line"]] = row
    return out


def rows(name: str) -> dict[int, dict[str, Any]]:
    return rows_of(read(name))


def lines_of(name: str) -> list[str]:
    return (DIAGON / name).read_text().split("\n")[:-1]


def doc_rows(data: bytes | str, path: str = "diagon/doc.json") -> list[dict[str, Any]]:
    """Rows of an inline gcloud document, in order, with ``extra`` parsed."""
    raw = data.encode() if isinstance(data, str) else data
    frame, tally, _ = run_reader(API, raw, path)
    assert tally.records == tally.rows + tally.dropped
    return row_list(frame)


def independent_count(name: str) -> int:
    """Records of a gcloud document counted without culprit's code: every run, every event
    and every analyzer report is one."""
    document = json.loads((DIAGON / name).read_bytes())
    items = document if isinstance(document, list) else [document]
    return sum(1 + len(item.get("analyzerReports", [])) for item in items)


# -- sniffing and reader choice ------------------------------------------------------------


def other_samples() -> list[Path]:
    return sorted(
        path
        for folder in ("text", "cloud_logging", "kubelet")
        if (SAMPLES / folder).is_dir()
        for path in (SAMPLES / folder).iterdir()
        if path.is_file()
    )
