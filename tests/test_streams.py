"""Tests of analyzer.streams: decoding, hashing, peeking, truncation and expansion caps."""

from __future__ import annotations

import gzip
import hashlib
import io
import random
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from analyzer.errors import BundleError, ExpansionLimitError
from analyzer.streams import READ_BLOCK, Content, CorruptStreamError, ExpansionBudget

ZSTD_BLOCK = 128 << 10  # zstd's maximum block content size (what pyarrow's encoder emits)


# -- helpers ---------------------------------------------------------------------------------


def text_data(lines: int, seed: int = 0) -> bytes:
    """Deterministic, log-like and compressible (but not trivially so) bytes."""
    rnd = random.Random(seed)
    return b"".join(
        b"2024-05-01T12:%02d:%02d.%06dZ host-%03d worker step=%d loss=%.5f\n"
        % (i // 60 % 60, i % 60, rnd.randrange(10**6), rnd.randrange(512), i, rnd.random())
        for i in range(lines)
    )


def zstd_bytes(data: bytes, path: Path) -> bytes:
    """``data`` as one zstd frame written by pyarrow (the zstandard package is not a dep)."""
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write(data)
    return path.read_bytes()


def zstd_block_ends(frame: bytes) -> list[tuple[int, int]]:
    """(end offset, block type) of every block of a single zstd frame without checksum."""
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    descriptor = frame[4]
    fcs_flag, single_segment = descriptor >> 6, (descriptor >> 5) & 1
    assert descriptor & 0b100 == 0, "content checksum not expected from pyarrow"
    pos = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3]
    pos += ((1 if single_segment else 0), 2, 4, 8)[fcs_flag]
    ends = []
    while True:
        header = int.from_bytes(frame[pos : pos + 3], "little")
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        pos += 3 + (1 if kind == 1 else size)
        ends.append((pos, kind))
        if last:
            return ends


def gzip_decodable(stored: bytes) -> bytes:
    """Every byte zlib itself can decode from a (possibly truncated) single-member gzip."""
    inflater = zlib.decompressobj(wbits=31)
    return inflater.decompress(stored) + inflater.flush()


def gzip_member_of_length(payload: bytes, total: int) -> bytes:
    """A valid gzip member of exactly ``total`` bytes (padded through the FNAME header field)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflater.compress(payload) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(payload), len(payload))
    name = b"n" * (total - 10 - 1 - len(body) - len(trailer))
    member = b"\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\xff" + name + b"\x00" + body + trailer
    assert len(member) == total
    assert gzip.decompress(member) == payload
    return member


def read_all(content: Content, block: int = 4096) -> tuple[bytes, CorruptStreamError | None]:
    """Read ``content`` to the end in ``block``-sized reads; return the bytes and the
    CorruptStreamError that ended it (``None`` on a clean end)."""
    out = bytearray()
    while True:
        try:
            chunk = content.read(block)
        except CorruptStreamError as exc:
            return bytes(out), exc
        if not chunk:
            return bytes(out), None
        out += chunk


def open_content(stored: bytes, budget: ExpansionBudget | None = None, path: str = "m") -> Content:
    return Content(io.BytesIO(stored), budget or ExpansionBudget(), path)


# -- well-formed streams ---------------------------------------------------------------------

DATA = text_data(3000)  # ~190 KB: several READ_BLOCKs of decoded output
GZ_DATA = gzip.compress(DATA, mtime=0)


def _plain(data: bytes, tmp: Path) -> bytes:
    return data


def _gzip(data: bytes, tmp: Path) -> bytes:
    return gzip.compress(data, mtime=0)


def _gzip_multi(data: bytes, tmp: Path) -> bytes:
    third = len(data) // 3
    parts = (data[:third], data[third : 2 * third], data[2 * third :])
    return b"".join(gzip.compress(p, mtime=0) for p in parts)


def _gzip_padded(data: bytes, tmp: Path) -> bytes:
    return gzip.compress(data, mtime=0) + b"\0" * 1024


def _gzip_padded_long(data: bytes, tmp: Path) -> bytes:
    # Padding longer than a read block: the zeros arrive in several chunks.
    return gzip.compress(data, mtime=0) + b"\0" * (READ_BLOCK * 2 + 7)


def _zstd(data: bytes, tmp: Path) -> bytes:
    return zstd_bytes(data, tmp / "data.zst")


def _zstd_multi_frame(data: bytes, tmp: Path) -> bytes:
    half = len(data) // 2
    return zstd_bytes(data[:half], tmp / "a.zst") + zstd_bytes(data[half:], tmp / "b.zst")


ENCODINGS: list[tuple[str, Callable[[bytes, Path], bytes], str]] = [
    ("plain", _plain, "none"),
    ("gzip", _gzip, "gzip"),
    ("gzip-multi-member", _gzip_multi, "gzip"),
    ("gzip-zero-padding", _gzip_padded, "gzip"),
    ("gzip-long-zero-padding", _gzip_padded_long, "gzip"),
    ("zstd", _zstd, "zstd"),
    ("zstd-multi-frame", _zstd_multi_frame, "zstd"),
]


@pytest.mark.parametrize(
    ("encode", "compression"), [e[1:] for e in ENCODINGS], ids=[e[0] for e in ENCODINGS]
)
def test_decodes_to_the_original(
    tmp_path: Path, encode: Callable[[bytes, Path], bytes], compression: str
) -> None:
    stored = encode(DATA, tmp_path)
    content = open_content(stored)
    assert content.compression == compression
    assert content.read() == DATA
    assert content.read() == b""
    assert content.decoder.decoded_bytes == len(DATA)
    assert content.finish() == hashlib.sha256(stored).hexdigest()


@pytest.mark.parametrize(
    ("encode", "compression"), [e[1:] for e in ENCODINGS], ids=[e[0] for e in ENCODINGS]
)
def test_decodes_in_small_reads(
    tmp_path: Path, encode: Callable[[bytes, Path], bytes], compression: str
) -> None:
    content = open_content(encode(DATA, tmp_path))
    got, failure = read_all(content, block=1000)
    assert failure is None
    assert got == DATA


@pytest.mark.parametrize(
    ("encode", "compression"), [e[1:] for e in ENCODINGS], ids=[e[0] for e in ENCODINGS]
)
def test_head_does_not_consume(
    tmp_path: Path, encode: Callable[[bytes, Path], bytes], compression: str
) -> None:
    content = open_content(encode(DATA, tmp_path))
    assert content.head(100) == DATA[:100]
    assert content.head(10) == DATA[:10]
    assert content.head(70_000) == DATA[:70_000]
    # Reading afterwards starts at byte 0 and crosses the head boundary seamlessly.
    assert content.read(50) == DATA[:50]
    got, failure = read_all(content, block=999)
    assert failure is None
    assert got == DATA[50:]


@pytest.mark.parametrize(
    ("encode", "compression"), [e[1:] for e in ENCODINGS], ids=[e[0] for e in ENCODINGS]
)
def test_finish_hashes_stored_bytes_after_partial_read(
    tmp_path: Path, encode: Callable[[bytes, Path], bytes], compression: str
) -> None:
    stored = encode(DATA, tmp_path)
    content = open_content(stored)
    content.head(64)
    assert content.read(10) == DATA[:10]
    assert content.finish() == hashlib.sha256(stored).hexdigest()
    assert content.stored.bytes_read == len(stored)


def test_head_larger_than_content_returns_everything() -> None:
    content = open_content(gzip.compress(b"short\n"))
    assert content.head(1 << 16) == b"short\n"
    assert content.read() == b"short\n"
    assert content.read() == b""


def test_read_all_after_head_returns_head_and_rest() -> None:
    content = open_content(GZ_DATA)
    assert content.head(5) == DATA[:5]
    assert content.read() == DATA


def test_empty_input_is_plain() -> None:
    content = open_content(b"")
    assert content.compression == "none"
    assert content.head(10) == b""
    assert content.read() == b""
    assert content.finish() == hashlib.sha256(b"").hexdigest()


def test_empty_gzip_member_decodes_to_nothing() -> None:
    stored = gzip.compress(b"")
    content = open_content(stored)
    assert content.compression == "gzip"
    assert read_all(content) == (b"", None)
    assert content.finish() == hashlib.sha256(stored).hexdigest()


@pytest.mark.parametrize("stored", [b"\x1f", b"\x28\xb5\x2f", b"ab"])
def test_input_shorter_than_a_magic_is_plain(stored: bytes) -> None:
    content = open_content(stored)
    assert content.compression == "none"
    assert content.read() == stored


def test_gzip_members_crossing_read_blocks(tmp_path: Path) -> None:
    # Incompressible members larger than a read block: member boundaries fall inside chunks.
    rnd = random.Random(5)
    parts = [rnd.randbytes(READ_BLOCK + 12_345), rnd.randbytes(3 * READ_BLOCK), rnd.randbytes(17)]
    stored = b"".join(gzip.compress(p, mtime=0) for p in parts)
    got, failure = read_all(open_content(stored), block=READ_BLOCK)
    assert failure is None
    assert got == b"".join(parts)


def test_gzip_member_ending_exactly_on_a_read_block() -> None:
    # The 4 magic bytes are replayed first, then the stream is read in READ_BLOCK chunks: a
    # first member of 4 + READ_BLOCK bytes ends exactly where a chunk ends.
    first = random.Random(9).randbytes(1000)
    second = b"second member\n" * 100
    stored = gzip_member_of_length(first, 4 + READ_BLOCK) + gzip.compress(second)
    got, failure = read_all(open_content(stored))
    assert failure is None
    assert got == first + second


def test_gzip_padding_starting_exactly_on_a_read_block() -> None:
    first = random.Random(9).randbytes(1000)
    stored = gzip_member_of_length(first, 4 + READ_BLOCK) + b"\0" * 100
    assert read_all(open_content(stored)) == (first, None)


# -- truncated and corrupt streams -----------------------------------------------------------


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_truncated_gzip_returns_decodable_prefix_then_raises(fraction: float) -> None:
    stored = GZ_DATA
    cut = stored[: int(len(stored) * fraction)]
    expected = gzip_decodable(cut)
    assert 0 < len(expected) < len(DATA)

    got, failure = read_all(open_content(cut, path="logs/app.log.gz"))

    assert got == expected
    assert got == DATA[: len(got)]
    assert failure is not None
    assert failure.decoded_bytes == len(got)
    assert failure.path == "logs/app.log.gz"
    assert str(failure).startswith("logs/app.log.gz: ")
    assert "truncated" in failure.message


def test_truncated_gzip_missing_only_the_trailer() -> None:
    stored = GZ_DATA
    got, failure = read_all(open_content(stored[:-4]))
    assert got == DATA  # every byte decodes; the end-of-stream is still missing
    assert failure is not None
    assert failure.decoded_bytes == len(DATA)


def test_truncated_gzip_read_all_at_once() -> None:
    stored = GZ_DATA
    cut = stored[: len(stored) // 2]
    content = open_content(cut)
    first = content.read()
    assert first == gzip_decodable(cut)
    with pytest.raises(CorruptStreamError) as info:
        content.read()
    assert info.value.decoded_bytes == len(first)
    # The failure is reported once; afterwards the stream is simply at its end.
    assert content.read() == b""


def test_truncated_gzip_header_only() -> None:
    got, failure = read_all(open_content(GZ_DATA[:6]))
    assert got == b""
    assert failure is not None
    assert failure.decoded_bytes == 0


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.6, 0.99])
def test_truncated_zstd_returns_complete_blocks_then_raises(
    tmp_path: Path, fraction: float
) -> None:
    data = text_data(8000, seed=1)  # ~530 KB: five blocks
    stored = zstd_bytes(data, tmp_path / "data.zst")
    blocks = zstd_block_ends(stored)
    # Compressed blocks (type 2) decode all or nothing, each to 128 KiB but the last.
    assert all(kind == 2 for _end, kind in blocks)
    assert len(blocks) == -(-len(data) // ZSTD_BLOCK)
    cut = int(len(stored) * fraction)
    complete = sum(1 for end, _kind in blocks if end <= cut)
    expected_len = min(complete * ZSTD_BLOCK, len(data))
    assert expected_len < len(data)

    got, failure = read_all(open_content(stored[:cut], path="x.zst"))

    assert got == data[:expected_len]
    assert failure is not None
    assert failure.decoded_bytes == len(got)
    assert failure.path == "x.zst"
    assert "zstd" in failure.message


def test_truncated_zstd_multi_frame_returns_complete_frames(tmp_path: Path) -> None:
    # Four small frames (as written by a tool that flushes a frame per batch): a cut inside
    # the third leaves exactly the first two decodable.
    frames = [zstd_bytes(DATA[i * 8192 : (i + 1) * 8192], tmp_path / f"f{i}.zst") for i in range(4)]
    cut = len(frames[0]) + len(frames[1]) + len(frames[2]) // 2
    got, failure = read_all(open_content(b"".join(frames)[:cut]))
    assert got == DATA[: 2 * 8192]
    assert failure is not None
    assert failure.decoded_bytes == 2 * 8192


def test_corrupt_gzip_raises_corrupt_stream_error_not_zlib_error() -> None:
    stored = bytearray(GZ_DATA)
    for i in range(20, 60):  # the start of the deflate data, right after the 10-byte header
        stored[i] ^= 0xFF
    content = open_content(bytes(stored), path="bad.gz")
    got, failure = read_all(content)
    assert failure is not None
    assert isinstance(failure, CorruptStreamError)
    assert not isinstance(failure, zlib.error)
    assert "corrupt" in failure.message
    assert failure.decoded_bytes == len(got)
    assert got == DATA[: len(got)]
    assert failure.path == "bad.gz"


def test_gzip_with_bad_crc_raises_corrupt_stream_error() -> None:
    stored = bytearray(gzip.compress(b"short payload\n"))
    stored[-8] ^= 0xFF  # CRC32 of the trailer
    got, failure = read_all(open_content(bytes(stored)))
    assert failure is not None
    assert failure.decoded_bytes == len(got)


def test_corrupt_gzip_via_head_then_read() -> None:
    stored = bytearray(GZ_DATA)
    for i in range(20, 60):
        stored[i] ^= 0xFF
    content = open_content(bytes(stored))
    head = content.head(1 << 16)  # never raises zlib.error nor CorruptStreamError
    got, failure = read_all(content)
    assert got == head
    assert failure is not None
    assert failure.decoded_bytes == len(head)


@pytest.mark.parametrize(
    "tail",
    [b"trailing garbage", b"\0\0\0not only zeros"],
    ids=["garbage", "zeros-then-garbage"],
)
def test_garbage_after_gzip_keeps_the_decoded_member(tail: bytes) -> None:
    # Everything before the damage must still be handed out (module contract).
    data = b"a complete first member\n" * 50
    got, failure = read_all(open_content(gzip.compress(data) + tail))
    assert got == data
    assert failure is not None
    assert failure.decoded_bytes == len(data)


def test_corrupt_second_gzip_member_keeps_the_first() -> None:
    first = b"first member\n" * 50
    second = bytearray(gzip.compress(b"second member\n" * 50))
    second[12] ^= 0xFF
    got, failure = read_all(open_content(gzip.compress(first) + bytes(second)))
    assert got[: len(first)] == first
    assert failure is not None
    assert failure.decoded_bytes == len(got)


def test_truncation_inside_head_is_raised_by_the_following_read() -> None:
    data = DATA[:30_000]
    stored = gzip.compress(data)
    cut = stored[: len(stored) // 2]
    expected = gzip_decodable(cut)
    assert 0 < len(expected) < len(data)

    content = open_content(cut, path="early.gz")
    head = content.head(64 << 10)
    assert head == expected
    assert content.head(64 << 10) == expected  # still not consumed, still no exception

    assert content.read(100) == expected[:100]
    assert content.read() == expected[100:]
    with pytest.raises(CorruptStreamError) as info:
        content.read()
    assert info.value.decoded_bytes == len(expected)
    assert info.value.path == "early.gz"


def test_truncation_inside_head_read_in_small_chunks() -> None:
    data = DATA[:30_000]
    stored = gzip.compress(data)
    cut = stored[: len(stored) // 3]
    content = open_content(cut)
    head = content.head(64 << 10)
    got, failure = read_all(content, block=777)
    assert got == head == gzip_decodable(cut)
    assert failure is not None
    assert failure.decoded_bytes == len(head)


def test_zstd_truncation_inside_head(tmp_path: Path) -> None:
    stored = zstd_bytes(DATA, tmp_path / "data.zst")
    first_block_end = zstd_block_ends(stored)[0][0]
    content = open_content(stored[: first_block_end // 2])  # nothing decodable
    assert content.head(64 << 10) == b""
    with pytest.raises(CorruptStreamError) as info:
        content.read()
    assert info.value.decoded_bytes == 0


def test_corrupt_stream_error_is_a_bundle_error() -> None:
    exc = CorruptStreamError("x", decoded_bytes=3, path="p")
    assert isinstance(exc, BundleError)
    assert (exc.decoded_bytes, exc.path, str(exc)) == (3, "p", "p: x")


# -- expansion caps --------------------------------------------------------------------------

ZEROS = bytes(1 << 20)  # 1 MiB of zeros gzips to ~1 KiB: ratio ~1000


def test_gzip_bomb_exceeding_ratio_raises_stream_scope() -> None:
    stored = gzip.compress(ZEROS)
    budget = ExpansionBudget(max_ratio=200, floor_bytes=64 << 10)
    content = open_content(stored, budget, path="dir/bomb.log.gz")
    with pytest.raises(ExpansionLimitError) as info:
        content.read()
    exc = info.value
    assert exc.scope == "stream"
    assert exc.path == "dir/bomb.log.gz"
    assert str(exc).startswith("dir/bomb.log.gz: ")
    assert "decompression bomb" in exc.message
    # Refused as soon as the ratio is crossed: it names the compressed bytes read so far.
    read_so_far = int(re.search(r"from ([\d,]+)\)", exc.message).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert 0 < read_so_far <= len(stored)


def test_gzip_bomb_detected_by_head() -> None:
    budget = ExpansionBudget(max_ratio=200, floor_bytes=64 << 10)
    content = open_content(gzip.compress(ZEROS), budget, path="bomb.gz")
    with pytest.raises(ExpansionLimitError) as info:
        content.head(1 << 16)
    assert info.value.scope == "stream"


def test_zstd_bomb_exceeding_ratio_raises_stream_scope(tmp_path: Path) -> None:
    expanded = 64 << 20
    stored = zstd_bytes(b"\0" * expanded, tmp_path / "bomb.zst")
    budget = ExpansionBudget(max_ratio=200, floor_bytes=64 << 10)
    content = open_content(stored, budget, path="bomb.zst")
    with pytest.raises(ExpansionLimitError) as info:
        read_all(content, block=1 << 16)
    assert info.value.scope == "stream"
    assert info.value.path == "bomb.zst"
    # Stopped near the cap (plus at most one decode call's worth of output: input is fed in
    # small pieces when it expands a lot), not after decoding everything.
    cap = max(64 << 10, len(stored) * 200)
    assert content.decoder.decoded_bytes <= cap + (8 << 20)
    assert content.decoder.decoded_bytes < expanded // 4


def test_high_ratio_below_the_floor_is_allowed() -> None:
    budget = ExpansionBudget(max_ratio=200, floor_bytes=2 << 20)
    content = open_content(gzip.compress(ZEROS), budget)
    assert content.read() == ZEROS
    assert budget.total_decoded == len(ZEROS)


def test_total_cap_raises_bundle_scope() -> None:
    budget = ExpansionBudget(max_ratio=1e9, floor_bytes=0, max_total_bytes=100_000)
    data = DATA[:60_000]
    first = open_content(gzip.compress(data), budget, path="one.gz")
    assert first.read() == data
    assert budget.total_decoded == 60_000
    second = open_content(gzip.compress(data), budget, path="two.gz")
    with pytest.raises(ExpansionLimitError) as info:
        second.read()
    assert info.value.scope == "bundle"
    assert info.value.path == "two.gz"
    assert "100,000 bytes in total" in info.value.message


def test_total_cap_single_stream() -> None:
    budget = ExpansionBudget(max_ratio=1e9, floor_bytes=0, max_total_bytes=50_000)
    content = open_content(GZ_DATA, budget, path="big.gz")
    with pytest.raises(ExpansionLimitError) as info:
        read_all(content)
    assert info.value.scope == "bundle"


def test_plain_content_is_not_charged() -> None:
    budget = ExpansionBudget(max_ratio=1, floor_bytes=0, max_total_bytes=10)
    content = open_content(ZEROS, budget)
    assert content.read() == ZEROS
    assert budget.total_decoded == 0


@pytest.mark.parametrize(
    ("compressed", "decoded", "raises"),
    [
        (1000, 200_000, False),  # exactly max_ratio (above the floor)
        (1000, 200_001, True),
        (10, 5000, False),  # far above the ratio, but within the floor
        (10, 5001, True),
    ],
)
def test_charge_boundaries(compressed: int, decoded: int, raises: bool) -> None:
    budget = ExpansionBudget(max_ratio=200, floor_bytes=5000)
    if raises:
        with pytest.raises(ExpansionLimitError) as info:
            budget.charge(compressed=compressed, decoded=decoded, added=decoded, path="p")
        assert info.value.scope == "stream"
    else:
        budget.charge(compressed=compressed, decoded=decoded, added=decoded, path="p")
    assert budget.total_decoded == decoded


def test_charge_total_boundary() -> None:
    budget = ExpansionBudget(max_ratio=1e9, floor_bytes=0, max_total_bytes=100)
    budget.charge(compressed=1, decoded=60, added=60, path=None)
    budget.charge(compressed=1, decoded=40, added=40, path=None)  # exactly at the cap
    with pytest.raises(ExpansionLimitError) as info:
        budget.charge(compressed=1, decoded=1, added=1, path=None)
    assert info.value.scope == "bundle"
    assert info.value.path is None
