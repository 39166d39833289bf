from __future__ import annotations

import io

import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.framing import (
    LineChunk,
    iter_line_chunks,
    line_ends,
    merge_chunks,
    take_lines,
)
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


@pytest.mark.parametrize(
    ("head", "ends"),
    [
        pytest.param(b"one\rtwo\rthree", "cr", id="cr-only"),
        pytest.param(b"one\ntwo\n", "lf", id="lf"),
        pytest.param(b"one\r\ntwo\r\n", "lf", id="crlf"),
        pytest.param(b"", "lf", id="empty"),
        pytest.param(b"no line end at all", "lf", id="one-line"),
        pytest.param(b"one\r" * 20 + b"last\r\n", "cr", id="cr-then-final-crlf"),
        pytest.param(b"one\r" * 5 + b"two\n", "lf", id="not-ten-to-one"),
        # tqdm: every redraw starts with \r, right after a \n (or first in the file).
        pytest.param(b"epoch 1\n" + b"\r 10%|#   |" * 30 + b"\n", "lf", id="tqdm"),
        pytest.param(b"\r 10%|#   |" * 30 + b"\ndone\n", "lf", id="tqdm-first"),
        pytest.param(b"\r 10%|#   |" * 30, "cr", id="tqdm-alone"),
        # Windows text mode writing "\r\n": a lone \r before each CRLF, as many as \n.
        pytest.param(b"one\r\r\ntwo\r\r\n", "lf", id="cr-crlf"),
    ],
)
def test_line_ends_are_decided_per_file(head: bytes, ends: str) -> None:
    assert line_ends(head) == ends


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 7, 64, 1 << 20])
def test_lone_cr_lines_survive_any_chunking(chunk_bytes: int) -> None:
    """A file with lone-CR line ends (one CRLF among them, which a block boundary may split):
    one line per CR, numbered and placed as in the file."""
    lines = [f"line {i} {'é' * (i % 3)}".encode() for i in range(40)]
    ends = [b"\r\n" if i == 17 else b"\r" for i in range(40)]
    data = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    chunks, ctx = _chunks(data, chunk_bytes=chunk_bytes)
    rows = _lines(chunks)
    assert [text.encode() for _, _, text in rows] == lines
    assert [line for line, _, _ in rows] == list(range(1, 41))
    for _line, offset, text in rows:
        assert data[offset:].startswith(text.encode() + b"\r")
    assert ctx.issues == []


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 1 << 20])
def test_doubled_returns_end_a_line_and_a_blank_one(chunk_bytes: int) -> None:
    """Found by the long fuzz run: CRLF turned into CRCR (no LF at all): a block ending in
    two CRs indexed past its end. Each CR ends a line; the second leaves a blank one."""
    data = b"one\r\rtwo\r\r"
    rows = _lines(_chunks(data, chunk_bytes=chunk_bytes)[0])
    assert rows == [(1, 0, "one"), (2, 4, ""), (3, 5, "two"), (4, 9, "")]


def test_lone_cr_file_without_a_final_line_end() -> None:
    data = b"\xef\xbb\xbfone\rtwo\r\rthree"
    rows = _lines(_chunks(data)[0])
    assert rows == [(1, 3, "one"), (2, 7, "two"), (3, 11, ""), (4, 12, "three")]


@pytest.mark.parametrize("ending", [b"\n", b"\r"], ids=["lf", "cr"])
def test_a_small_truncated_gzip_notes_where_it_stopped(ending: bytes) -> None:
    """The line ends are decided on the first 64 KiB, read ahead: a stream that breaks
    within them is still noted at its last line and decoded byte, not at line 1."""
    import gzip

    original = b"".join(b"line %d" % i + ending for i in range(3000))
    packed = gzip.compress(original)
    content = Content(io.BytesIO(packed[: len(packed) // 2]), ExpansionBudget(), "x.gz")
    ctx = ReadContext("x.gz", ReadOptions(chunk_bytes=4096))
    rows = _lines(list(iter_line_chunks(content, ctx)))
    assert len(rows) > 100
    # The note names the line the stream broke off in (the one after the last row), which
    # is quarantined with the bytes it has.
    note, cut = ctx.issues
    assert "truncated" in note.reason
    assert (note.line, note.offset) == (rows[-1][0] + 1, content.decoder.decoded_bytes)
    assert cut.line == rows[-1][0] + 1 and "line cut off by the damage" in cut.reason
