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


def _log_entries(count: int) -> list[dict[str, object]]:
    return [
        {
            "insertId": f"id-{i:02d}",
            "resource": {"labels": {"pod": f"p{i}"}, "list": [{"x": i}, {"y": [i]}]},
            "textPayload": f"entry {i}",
        }
        for i in range(count)
    ]


def _damaged(indent: int | None, how: str) -> bytes:
    """Twelve log entries with entry 4 broken as a damaged export breaks one."""
    text = json.dumps(_log_entries(12), indent=indent)
    at = text.index('"entry 4"') + len('"entry 4"')
    close = text.index("}", at)
    if how == "missing-brace":
        text = text[:close] + text[close + 1 :]
    elif how == "unterminated-string":
        text = text[: at - 1] + text[at:]
    elif how == "extra-open":
        text = text[:at] + ", {" + text[at:]
    elif how == "mismatched-close":
        text = text[:close] + "]" + text[close + 1 :]
    return text.encode()


@pytest.mark.parametrize("chunk", [5, 61, 1 << 20])
@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "compact"])
@pytest.mark.parametrize(
    "how", ["missing-brace", "unterminated-string", "extra-open", "mismatched-close"]
)
def test_a_malformed_element_is_quarantined_and_the_array_read_on(
    chunk: int, indent: int | None, how: str
) -> None:
    data = _damaged(indent, how)
    out, ctx = _elements(data, chunk)
    assert [json.loads(t)["textPayload"] for _, _, t in out] == [
        f"entry {i}" for i in range(12) if i != 4
    ]
    for line, offset, text in out:
        assert data[offset:].startswith(text.encode())
        assert data[:offset].count(b"\n") + 1 == line
    (issue,) = ctx.issues
    assert issue.kind == "dropped"
    assert issue.reason.startswith("malformed JSON element")
    assert issue.offset == data.index(
        b'{"insertId": "id-04"' if indent is None else b'{\n    "insertId": "id-04"'
    )
    assert issue.line == data[: issue.offset].count(b"\n") + 1
    assert ctx.counts.records == 12 and ctx.counts.dropped == 1


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_stray_closes_between_elements_are_quarantined_alone(chunk: int) -> None:
    data = b'[{"a": 1}},\n {"b": {"c": 2}}]\n],\n{"d": 3}\n'
    out, ctx = _elements(data, chunk)
    # The "]" at the end of line 2 closes the array early; the object after it is read on.
    assert [json.loads(t) for _, _, t in out] == [{"a": 1}, {"b": {"c": 2}}, {"d": 3}]
    assert [(i.kind, i.line, i.raw) for i in ctx.issues] == [
        ("dropped", 1, b"}"),
        ("dropped", 3, b"]"),
    ]
    assert ctx.counts.records == 5


def test_a_malformed_last_element_is_quarantined_to_the_end_of_the_file() -> None:
    entries = _log_entries(3)
    entries[2]["textPayload"] = "x" * 5000
    text = json.dumps(entries, indent=2)
    data = text.replace('"insertId": "id-02"', '"insertId": "id-02', 1).encode()
    out, ctx = _elements(data, chunk=512)
    assert [json.loads(t)["insertId"] for _, _, t in out] == ["id-00", "id-01"]
    (issue,) = ctx.issues
    assert "malformed JSON element" in issue.reason
    assert "the file ends before another element starts" in issue.reason
    assert issue.offset == data.index(b'{\n    "insertId": "id-02')
    assert ctx.counts.records == 3


def test_the_next_element_is_found_beyond_the_block_of_the_fault() -> None:
    entries = _log_entries(4)
    entries[1]["textPayload"] = "y" * 20_000
    data = json.dumps(entries, indent=2).replace('"id-01"', '"id-01', 1).encode()
    out, ctx = _elements(data, chunk=1024)
    assert [json.loads(t)["insertId"] for _, _, t in out] == ["id-00", "id-02", "id-03"]
    (issue,) = ctx.issues
    second = data.index(b'{\n    "insertId": "id-01')
    third = data.index(b'{\n    "insertId": "id-02')
    assert (issue.offset, issue.line) == (second, data[:second].count(b"\n") + 1)
    next_line = data[:third].count(b"\n") + 1
    assert f"read again from the next element, line {next_line}" in issue.reason
    assert ctx.counts.records == 4
