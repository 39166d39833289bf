"""A member's bytes as UTF-8 text: UTF-16 with a BOM re-encoded, leading NUL bytes skipped."""

from __future__ import annotations

import gzip
import io

import pytest

from analyzer.ingest.decoding import TextContent
from analyzer.streams import CorruptStreamError, ExpansionBudget

TEXT = "2024-05-01T10:00:00Z first\r\n2024-05-01T10:00:01Z température 温度\r\n"


def _content(data: bytes) -> TextContent:
    return TextContent(io.BytesIO(data), ExpansionBudget(), "f.log")


def _read_all(content: TextContent, size: int) -> bytes:
    pieces = []
    while piece := content.read(size):
        pieces.append(piece)
    return b"".join(pieces)


@pytest.mark.parametrize("size", [-1, 1, 7, 1 << 20])
@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        pytest.param(TEXT.encode("utf-16"), "utf-16-le", id="utf-16"),  # BOM + little endian
        pytest.param(b"\xff\xfe" + TEXT.encode("utf-16-le"), "utf-16-le", id="le"),
        pytest.param(b"\xfe\xff" + TEXT.encode("utf-16-be"), "utf-16-be", id="be"),
        pytest.param(TEXT.encode(), "utf-8", id="utf-8"),
    ],
)
def test_text_is_utf8_whatever_the_file(data: bytes, encoding: str, size: int) -> None:
    content = _content(data)
    assert content.head(16) == TEXT.encode()[:16]
    assert _read_all(content, size) == TEXT.encode()
    assert content.encoding == encoding
    assert content.skipped == 0


def test_utf16_damage_reaches_the_framing_as_invalid_utf8() -> None:
    """A lone surrogate and an odd last byte become bytes that are not UTF-8, which the
    framing replaces by U+FFFD and notes, as for any invalid UTF-8."""
    data = b"\xff\xfe" + "ok\n".encode("utf-16-le") + b"\x00\xd8" + "x\n".encode("utf-16-le")
    content = _content(data + b"A")
    assert content.read(-1) == b"ok\n\xed\xa0\x80x\n\xff"


def test_a_utf16_bom_before_plain_utf8_is_left_alone() -> None:
    data = b"\xff\xfehello\nworld\n"
    content = _content(data)
    assert content.read(-1) == data
    assert content.encoding == "utf-8"


@pytest.mark.parametrize("nuls", [1, 4096, 3 << 20])
def test_leading_nul_bytes_are_skipped_and_counted(nuls: int) -> None:
    content = _content(b"\x00" * nuls + b"line\x00one\nline two\n")
    assert content.head(8) == b"line\x00one"
    assert _read_all(content, 5) == b"line\x00one\nline two\n"
    assert content.skipped == nuls


def test_a_file_of_nul_bytes_only_is_empty_text() -> None:
    content = _content(b"\x00" * 70_000)
    assert content.head(10) == b""
    assert content.read(-1) == b""
    assert content.skipped == 70_000


def test_a_broken_stream_hands_out_its_text_then_fails() -> None:
    """A truncated gzip of UTF-16 text: every decodable character comes out (a character cut
    in half as an invalid byte), then the failure."""
    lines = "".join(f"line {i}\n" for i in range(5000))
    packed = gzip.compress(lines.encode("utf-16"))
    content = TextContent(io.BytesIO(packed[: len(packed) // 2]), ExpansionBudget(), "f.log.gz")
    pieces: list[bytes] = []

    def read_on() -> None:
        while piece := content.read(4096):
            pieces.append(piece)

    with pytest.raises(CorruptStreamError):
        read_on()
    text = b"".join(pieces)
    assert len(text) > 1000
    assert lines.encode().startswith(text.removesuffix(b"\xff"))
