from __future__ import annotations

import io
import json

import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.json.array import ScanState, iter_elements, scan

TRICKY = [
    {"textPayload": 'quote \\" and brace } and bracket ] inside', "n": 1},
    {"textPayload": "backslash at end \\", "nested": {"a": [1, {"b": "]}"}]}},
    {"textPayload": "", "list": [[], {}, [[[]]]], "unicode": "中文 ✓"},
]


def _elements(
    data: bytes, chunk: int = 1 << 20, max_line: int = 1 << 20
) -> tuple[list[tuple[int, int, str]], ReadContext]:
    ctx = ReadContext("a.json", ReadOptions(chunk_bytes=chunk, max_line_bytes=max_line))
    out: list[tuple[int, int, str]] = []
    for batch in iter_elements(io.BytesIO(data), ctx):
        out += list(
            zip(batch.lines.tolist(), batch.offsets.tolist(), batch.texts.to_pylist(), strict=True)
        )
    return out, ctx


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_elements_survive_any_chunking(chunk: int, indent: int | None) -> None:
    data = json.dumps(TRICKY, indent=indent, ensure_ascii=False).encode()
    out, ctx = _elements(data, chunk)
    assert [json.loads(text) for _, _, text in out] == TRICKY
    for line, offset, text in out:
        assert data[offset:].startswith(text.encode())
        assert data[:offset].count(b"\n") + 1 == line
    assert ctx.counts.records == 3
    assert ctx.issues == []


def test_array_cut_in_half_keeps_complete_elements() -> None:
    entries = [{"i": i, "textPayload": f"line {i}"} for i in range(10)]
    data = json.dumps(entries, indent=2).encode()
    cut = data[: data.index(b'"i": 6') + 3]
    out, ctx = _elements(cut, chunk=50)
    assert [json.loads(t)["i"] for _, _, t in out] == [0, 1, 2, 3, 4, 5]
    (issue,) = ctx.issues
    assert issue.kind == "dropped"
    assert "not closed" in issue.reason
    assert cut[issue.offset : issue.offset + 1] == b"{"
    assert issue.line == cut[: issue.offset].count(b"\n") + 1
    assert ctx.counts.records == 7
    assert ctx.counts.dropped == 1


def test_junk_between_elements_is_quarantined() -> None:
    out, ctx = _elements(b'[1, {"a": 1}, "text", {"b": 2}]\ngarbage\n')
    assert [json.loads(t) for _, _, t in out] == [{"a": 1}, {"b": 2}]
    reasons = [issue.reason for issue in ctx.issues]
    assert len(reasons) == 3
    assert "after the end" in reasons[-1]
    assert ctx.counts.records == 5 and ctx.counts.dropped == 3


def test_concatenated_arrays_and_empty_arrays() -> None:
    out, ctx = _elements(b'[{"a": 1}]\n[]\n[{"b": 2},\n {"c": 3}]\n', chunk=3)
    assert [json.loads(t) for _, _, t in out] == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert [line for line, _, _ in out] == [1, 3, 4]
    assert ctx.issues == []


def test_unclosed_array_without_open_element_is_a_file_issue() -> None:
    out, ctx = _elements(b'[{"a": 1},\n')
    assert len(out) == 1
    (issue,) = ctx.issues
    assert issue.kind == "file" and "not closed" in issue.reason


def test_oversized_element_is_skipped_and_reading_resumes() -> None:
    big = {"textPayload": "x" * 6_000_000}
    data = json.dumps([{"a": 1}, big, {"b": 2}]).encode()
    out, ctx = _elements(data, chunk=1 << 16, max_line=1 << 20)
    assert [json.loads(t) for _, _, t in out] == [{"a": 1}, {"b": 2}]
    (issue,) = ctx.issues
    assert issue.kind == "dropped" and "cap" in issue.reason
    assert issue.offset == data.index(b'{"textPayload"')
    assert ctx.counts.records == 3


def test_scan_tracks_strings_and_escapes_across_blocks() -> None:
    state = ScanState(depth=1)
    scan(b'{"a": "x\\', state)
    assert state.in_string and state.escaped
    _, chars, _ = scan(b'"}", "b": 1}', state)
    # The escaped quote does not close the string; '}' inside it is not structural.
    assert bytes(chars) == b",}"
    assert state.depth == 1 and not state.in_string
