"""Small files read together give each file exactly the rows it gets when read alone."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from analyzer import api
from analyzer.case.inputs import Issue, ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.framing import iter_line_chunks
from analyzer.ingest.lines.hints import FileHints
from analyzer.ingest.pipeline import files, run
from analyzer.ingest.pipeline.progress import NullProgress
from analyzer.ingest.readers.text import TextReader
from analyzer.streams import CorruptStreamError, ExpansionBudget
from tests.conftest import SAMPLES

#: Columns that name a file's place in the case rather than its content.
_PLACE = ("row_id", "file_id")


def _rows_by_path(case: Path) -> dict[str, pl.DataFrame]:
    if not any((case / "rows").glob("*.parquet")):
        return {}  # a file without rows (empty) writes no part
    rows = pl.read_parquet(case / "rows" / "*.parquet")
    inventory = pl.read_parquet(case / "files.parquet").select("file_id", "path")
    joined = rows.join(inventory, on="file_id", how="left", maintain_order="left")
    return {
        str(path): frame.drop(*_PLACE, "path")
        for (path,), frame in joined.partition_by("path", as_dict=True).items()
    }


def _write_bundle(root: Path) -> Path:
    """Files whose edges would show any leak between neighbours in a batch."""
    bundle = root / "bundle"
    for node in ("gke-tpu-pool-1-aaaa-0001", "gke-tpu-pool-1-aaaa-0002"):
        (bundle / "nodes" / node).mkdir(parents=True)
        (bundle / "nodes" / node / "journal.log").write_bytes(
            (SAMPLES / "kubelet" / "journal-short.txt").read_bytes()
        )
    text = bundle / "pods"
    text.mkdir()
    # Ends inside a traceback: the next file must not continue it.
    (text / "a.log").write_text(
        "I1129 18:00:00.000000    1 main.py:1] starting\n"
        "E1129 18:00:01.000000    1 main.py:2] failed:\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
    )
    # Starts with lines without a stamp: they must not inherit a.log's time.
    (text / "b.log").write_text(
        '  File "other.py", line 9, in f\n'
        "ValueError: not part of a.log\n"
        "\n"
        "I1129 19:00:00.000000    7 other.py:9] later\r\n"
    )
    (text / "c.log").write_bytes(b"\xef\xbb\xbfE1129 18:30:00.000000    2 x.go:1] caf\xe9 broke\n")
    (text / "d.log").write_text("")
    (text / "e.log").write_text("no newline at the end, no stamp")
    return bundle


def test_each_file_of_a_batch_reads_as_if_alone(tmp_path: Path) -> None:
    bundle = _write_bundle(tmp_path)
    together = api.ingest([bundle], tmp_path / "together", jobs=1)
    alone: dict[str, pl.DataFrame] = {}
    for index, file in enumerate(sorted(p for p in bundle.rglob("*") if p.is_file())):
        relative = file.relative_to(bundle)
        single = tmp_path / f"single{index}"
        (single / relative.parent).mkdir(parents=True)
        (single / relative).write_bytes(file.read_bytes())
        case = api.ingest([single], tmp_path / f"alone{index}", jobs=1).case
        alone.update(_rows_by_path(case))
    batched = _rows_by_path(together.case)
    assert sorted(batched) == sorted(alone)
    for path, frame in alone.items():
        assert batched[path].equals(frame), path
    b_rows = batched["pods/b.log"]
    assert b_rows["ts"][0] is None  # nothing carried over from a.log
    assert b_rows["message"][0].startswith('  File "other.py"')


def test_batches_are_cut_at_the_configured_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = _write_bundle(tmp_path)
    whole = api.ingest([bundle], tmp_path / "whole", jobs=1)
    # Both places that cut at the limit: groups of files (the run) and batches (the reading).
    monkeypatch.setattr(run, "BATCH_FILES", 2)
    monkeypatch.setattr(files, "BATCH_FILES", 2)
    cut = api.ingest([bundle], tmp_path / "cut", jobs=1)
    assert pl.read_parquet(whole.case / "rows" / "*.parquet").equals(
        pl.read_parquet(cut.case / "rows" / "*.parquet")
    )
    assert whole.meta.counts == cut.meta.counts


def test_files_with_their_own_zone_are_read_one_by_one() -> None:
    """A zone (or extra fields) is a literal of the whole pass: files that differ in it must
    not share one, or one file's local stamps would be read in the other's zone."""

    class Zoned(TextReader):
        def hints(self, head: bytes, ctx: ReadContext) -> FileHints:
            base = super().hints(head, ctx)
            return dataclasses.replace(base, tz="+08:00" if "east" in ctx.path else "UTC")

    line = b"2026-11-29 18:00:00,000 INFO train: step 1\n"
    items = []
    for name in ("east.log", "west.log"):
        ctx = ReadContext(name, ReadOptions())
        chunk = next(iter_line_chunks(io.BytesIO(line), ctx))
        items.append((line, chunk, ctx))
    reader = Zoned()
    together = reader.read_batch(items)
    alone = [reader.read_batch([item])[0] for item in items]
    assert [frame["ts"].to_list() for frame in together] == [f["ts"].to_list() for f in alone]
    assert together[0]["ts"][0] != together[1]["ts"][0]


class _BreaksOff(io.RawIOBase):
    """A plain stream that fails after its first read, as a damaged disk or archive would."""

    def __init__(self, data: bytes) -> None:
        self._data: bytes | None = data

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._data is None:
            raise CorruptStreamError("stream broke off", decoded_bytes=0, path="x")
        data, self._data = self._data, None
        return data


def test_a_small_file_that_breaks_off_keeps_the_lines_read() -> None:
    lines = b"".join(
        f"I1129 18:00:0{i}.000000    1 main.go:1] line {i}\n".encode() for i in range(5)
    )
    sink = _Collect()
    record: dict[str, object] = {"file_id": 0, "bytes": len(lines), "status": "read"}
    job = files.FileJob("node/kubelet.log", None, ReadOptions(), None)
    files.read_files(
        [(job, lambda: _BreaksOff(lines), record)],
        ExpansionBudget(),
        sink,
        NullProgress(),
    )
    assert record["status"] == "partial"
    assert record["rows"] == 5
    assert sum(table.num_rows for table in sink.tables) == 5
    assert any("broke off" in issue.reason for issue in sink.issues)


class _Collect:
    def __init__(self) -> None:
        self.tables: list[pa.Table] = []
        self.issues: list[Issue] = []

    def add_rows(self, table: pa.Table, dedup_keys: pl.DataFrame | None = None) -> None:
        self.tables.append(table)

    def add_aliases(self, found: pl.DataFrame) -> None:
        return None

    def add_issues(self, file_id: int, path: str, issues: Iterable[Issue]) -> None:
        self.issues.extend(issues)
