from __future__ import annotations

import io

import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.framing import LineChunk, iter_line_chunks, merge_chunks, take_lines
from analyzer.streams import Content, ExpansionBudget


def _chunks(data: bytes, **options: int) -> tuple[list[LineChunk], ReadContext]:
    ctx = ReadContext("f.log", ReadOptions(**options))  # type: ignore[arg-type]
    return list(iter_line_chunks(io.BytesIO(data), ctx)), ctx


def _lines(chunks: list[LineChunk]) -> list[tuple[int, int, str]]:
    out = []
    for chunk in chunks:
        text, _ = chunk.text()
        out += list(
            zip(chunk.line_numbers.tolist(), chunk.offsets.tolist(), text.to_list(), strict=True)
        )
    return out


def test_lines_offsets_and_terminators() -> None:
    data = b"first\r\nsecond\n\nbar\rbaz\nno newline at end"
    rows = _lines(_chunks(data)[0])
    assert rows == [
        (1, 0, "first"),
        (2, 7, "second"),
        (3, 14, ""),
        (4, 15, "bar\rbaz"),
        (5, 23, "no newline at end"),
    ]
    for _line, offset, text in rows:
        assert data[offset:].startswith(text.encode())


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 5, 8, 64, 1 << 20])
def test_chunk_size_does_not_change_lines(chunk_bytes: int) -> None:
    data = "".join(f"line {i} {'é' * (i % 4)}\n" for i in range(50)).encode()
    rows = _lines(_chunks(data, chunk_bytes=chunk_bytes)[0])
    assert [text for _, _, text in rows] == data.decode().splitlines()
    assert [line for line, _, _ in rows] == list(range(1, 51))
    for _line, offset, text in rows:
        assert data[offset : offset + len(text.encode())] == text.encode()


def test_bom_is_skipped_but_offsets_stay_true() -> None:
    data = b"\xef\xbb\xbfhello\nworld\n"
    rows = _lines(_chunks(data)[0])
    assert rows == [(1, 3, "hello"), (2, 9, "world")]


def test_empty_stream_has_no_lines() -> None:
    chunks, ctx = _chunks(b"")
    assert chunks == []
    assert ctx.issues == []


def test_giant_line_is_cut_and_memory_stays_bounded() -> None:
    giant = b"x" * 5_000_000
    data = b"before\n" + giant + b"\nafter\n"
    chunks, _ = _chunks(data, chunk_bytes=65536, max_line_bytes=4096)
    rows = _lines(chunks)
    assert [(line, offset) for line, offset, _ in rows] == [(1, 0), (2, 7), (3, 7 + 5_000_001)]
    assert rows[1][2] == "x" * 4096
    cut = [c.oversize for c in chunks if c.oversize]
    assert cut == [{0: 5_000_000}]
    assert max(len(c.data) for c in chunks) < 200_000


def test_long_line_inside_a_chunk_is_cut_too() -> None:
    data = b"a\n" + b"y" * 3000 + b"\nb\n"
    chunks, _ = _chunks(data, max_line_bytes=1024)
    rows = _lines(chunks)
    assert [len(text) for _, _, text in rows] == [1, 1024, 1]
    assert chunks[0].oversize == {1: 3000}


def test_invalid_utf8_lines_are_repaired_and_flagged() -> None:
    data = b"ok\n" + b"bad \xff\xfe byte\n" + "中文 fine\n".encode() + b"cut \xe4\xb8\n"
    (chunk,), _ = _chunks(data)
    text, repaired = chunk.text()
    assert repaired.tolist() == [False, True, False, True]
    assert text.to_list() == ["ok", "bad \ufffd\ufffd byte", "中文 fine", "cut \ufffd"]


def test_truncated_gzip_keeps_lines_and_notes_where_it_stopped() -> None:
    import gzip

    original = b"".join(b"line %d\n" % i for i in range(20000))
    packed = gzip.compress(original)
    content = Content(io.BytesIO(packed[: len(packed) // 2]), ExpansionBudget(), "x.gz")
    ctx = ReadContext("x.gz", ReadOptions(chunk_bytes=4096))
    rows = _lines(list(iter_line_chunks(content, ctx)))
    assert rows, "lines before the damage must be kept"
    decoded = b"\n".join(text.encode() for _, _, text in rows)
    assert original.startswith(decoded)
    issue, cut = ctx.issues
    assert issue.kind == "file"
    assert "truncated" in issue.reason
    # The damage is inside the line after the last row, right after the last decoded byte;
    # what it left of that line is quarantined with its bytes, not taken for a whole line.
    assert issue.line == rows[-1][0] + 1
    assert cut.kind == "dropped"
    assert cut.line == issue.line
    assert cut.raw is not None
    assert original.startswith(decoded + b"\n" + cut.raw)
    assert issue.offset == content.decoder.decoded_bytes == len(decoded) + 1 + len(cut.raw)
    # The framing counts the record it quarantines (readers count the chunks' lines).
    assert (ctx.counts.records, ctx.counts.dropped) == (1, 1)


def test_take_and_merge_round_trip() -> None:
    data = b"one\ntwo\nthree\nfour\n"
    (chunk,), _ = _chunks(data)
    head, tail = take_lines(chunk, 0, 2), take_lines(chunk, 2)
    merged = merge_chunks(head, tail)
    assert merged.text()[0].to_list() == chunk.text()[0].to_list()
    assert merged.offsets.tolist() == chunk.offsets.tolist() == [0, 4, 8, 14]
    assert merged.line_numbers.tolist() == [1, 2, 3, 4]
