"""Cloud Logging entries as they are pasted in tickets and issue threads: pretty-printed, one
after another (commas between them or not), not wrapped in an array."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.readers.cloud_logging import CloudLoggingReader
from analyzer.ingest.registry import choose_reader
from analyzer.streams import Content, ExpansionBudget

SAMPLE = Path(__file__).parents[2] / "samples" / "cloud_logging" / "pasted_entries.json"


def _read(data: bytes, tmp_path: Path) -> tuple[list[dict[str, object]], ReadContext]:
    path = tmp_path / "entries.json"
    path.write_bytes(data)
    ctx = ReadContext("entries.json", ReadOptions(), mtime=0.0)
    with path.open("rb") as raw:
        frames = list(CloudLoggingReader().read(Content(raw, ExpansionBudget(), ctx.path), ctx))
    return [row for frame in frames for row in frame.to_dicts()], ctx


def test_pasted_entries_are_claimed_and_read_one_row_each(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    choice = choose_reader(data, "entries.json")
    assert choice is not None and choice.reader.name == "cloud_logging"
    rows, ctx = _read(data, tmp_path)
    assert [(r["line"], r["severity"]) for r in rows] == [(1, "ERROR"), (19, "WARNING")]
    assert "ModuleNotFoundError: No module named 'xgboost'" in str(rows[0]["message"])
    assert (ctx.counts.records, ctx.counts.rows, ctx.counts.dropped) == (2, 2, 0)


@pytest.mark.parametrize("separator", [b"\n", b"\n\n", b",\n"])
def test_entries_follow_each_other_with_or_without_commas(tmp_path: Path, separator: bytes) -> None:
    first, second = SAMPLE.read_bytes().split(b"},\n\n", 1)
    rows, ctx = _read(first + b"}" + separator + second, tmp_path)
    assert len(rows) == 2
    assert ctx.counts.dropped == 0


def test_an_entry_cut_off_by_the_end_of_the_file_is_quarantined(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    rows, ctx = _read(data[: data.rindex(b'"severity"')], tmp_path)
    assert len(rows) == 1
    assert ctx.counts.records == 2 and ctx.counts.dropped == 1
    dropped = [issue for issue in ctx.issues if issue.kind == "dropped"]
    assert dropped[0].line == 19
    assert "not closed" in dropped[0].reason


def test_one_entry_per_line_is_still_read_as_json_lines(tmp_path: Path) -> None:
    compact = (
        b'{"insertId":"a","textPayload":"one","timestamp":"2026-11-29T18:00:00Z",'
        b'"logName":"projects/p/logs/x","resource":{"type":"global"}}\n'
        b'{"insertId":"b","textPayload":"two","timestamp":"2026-11-29T18:00:01Z",'
        b'"logName":"projects/p/logs/x","resource":{"type":"global"}}\n'
    )
    rows, _ = _read(compact, tmp_path)
    assert [(r["line"], r["message"]) for r in rows] == [(1, "one"), (2, "two")]
