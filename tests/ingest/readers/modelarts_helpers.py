"""Samples of a ModelArts dump (tests/samples/modelarts) and how the ModelArts tests read them.

The samples tell one story: rank 13 (worker-1, device 5, node 172.16.24.52) hits an AI Core
exception at 18:05 local time; 30 minutes later the other ranks time out waiting for it
(EI0002 naming ``remote rank [13]``), the platform reschedules, and the job fails on a chip
fault of worker-1. The containers run at UTC+8, which the logrus lines say.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import polars as pl

from analyzer.case.inputs import FileCounts, Issue, ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.readers.modelarts_api import ModelArtsApiReader
from analyzer.ingest.readers.modelarts_log import ModelArtsLogReader
from analyzer.ingest.readers.text import TextReader
from analyzer.schema import conform
from analyzer.streams import Content, ExpansionBudget
from tests.helpers import ns

SAMPLES = Path(__file__).parents[2] / "samples" / "modelarts"


JOB = "95f661bd-1527-41b8-971c-eca55e513254"


W0 = f"modelarts-job-{JOB}-worker-0.log"


W1 = f"modelarts-job-{JOB}-ma-training-worker-1-172.16.24.52-01909682.log"


LOGS = (W0, W1)


DETAILS = f"job-{JOB}-details.json"


EVENTS = f"job-{JOB}-events.json"


STAGES = f"job-{JOB}-stages.json"


DOCUMENTS = (DETAILS, EVENTS, STAGES)


LOG_READER = ModelArtsLogReader()


API_READER = ModelArtsApiReader()


RANK_WRAPPER = re.compile(r"^\[rank\d+\]: ?")


CODE_PREFIX = re.compile(r"^E[0-9A-Z]\d{4}: ")


# -- helpers ---------------------------------------------------------------------------------


def cst(local: str) -> int:
    """A container-local time of the samples (UTC+8) in nanoseconds."""
    return ns(local + "+08:00")


def run(
    reader: ModelArtsLogReader | ModelArtsApiReader | TextReader,
    data: bytes,
    path: str,
    options: ReadOptions | None = None,
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    ctx = ReadContext(path, options or ReadOptions(), mtime=ns("2026-11-30T09:00:00Z") / 1e9)

    class Raw:
        def __init__(self) -> None:
            self.data = data

        def read(self, size: int = -1, /) -> bytes:
            size = len(self.data) if size < 0 else size
            out, self.data = self.data[:size], self.data[size:]
            return out

    frames = list(reader.read(Content(Raw(), ExpansionBudget(), path), ctx))
    frame = pl.concat(frames, how="vertical") if frames else pl.DataFrame()
    return frame, ctx.counts, ctx.issues


@functools.cache
def read_sample(
    name: str, chunk_bytes: int | None = None, tz: str | None = None
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    options = ReadOptions(tz=tz) if chunk_bytes is None else ReadOptions(chunk_bytes=chunk_bytes)
    reader = API_READER if name.endswith(".json") else LOG_READER
    return run(reader, (SAMPLES / name).read_bytes(), f"dump/{name}", options)


def canonical(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows as the case stores them (schema applied), ``extra`` parsed, ``ts`` as ns."""
    numbered = frame.with_columns(
        row_id=pl.int_range(pl.len(), dtype=pl.Int64), file_id=pl.lit(0, dtype=pl.Int32)
    )
    table = pl.from_arrow(conform(numbered))
    assert isinstance(table, pl.DataFrame)
    out = []
    for row in table.with_columns(ts_ns=pl.col("ts").dt.epoch("ns")).iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        out.append(row)
    return out


def rows(name: str) -> dict[int, dict[str, Any]]:
    """Canonical rows of a sample keyed by line."""
    out: dict[int, dict[str, Any]] = {}
    for row in canonical(read_sample(name)[0]):
        assert row["line"] not in out
        out[row["line"]] = row
    return out


def lines_of(name: str) -> list[str]:
    return (SAMPLES / name).read_text().split("\n")[:-1]


# -- file names, sniffing and reader choice ------------------------------------------------


def other_samples() -> list[Path]:
    root = SAMPLES.parent
    return sorted(p for p in root.rglob("*") if p.is_file() and p.parent.name != "modelarts")
