"""Damaged archives give every byte they still hold, and say exactly what was lost (issue #24).

- A ``.tar.gz`` / ``.tar.zst`` (or plain ``.tar``) cut at 60 % of its bytes: every complete line
  that ``gzip -dc | tar -xO`` would still give becomes a row, the line the cut falls in is
  quarantined with its bytes, and the inventory names the member and the bytes lost. (Before:
  992 rows of ~180,000 in the issue; 1,282 of 30,017 here.)
- A zip cut anywhere (its central directory, at the end, is gone): every member whose local
  header and data are intact is read, the one the cut falls in gives what it holds, and the
  rest is reported lost. (Before: the whole zip was refused.)
- A zip bomb nested in an archive refuses that archive only; the run goes on. (Before: it
  filled the bundle's total cap and stopped the run.)

The expected numbers come from zlib, zstandard and the byte layout of the archives, never from
culprit's own readers.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import zstandard

from analyzer import api
from tests.helpers import check_accounting, read_table

LINES = 50_000
MEMBER = "logs/train.log"


def log_text(lines: int, host: str = "node-1") -> bytes:
    """A log whose lines differ in length, so a cut rarely falls on a line end."""
    return b"".join(
        b"2024-05-01T00:%02d:%02dZ %s step %d loss=%.*f\n"
        % (i // 60 % 60, i % 60, host.encode(), i, i % 7, i / 997)
        for i in range(lines)
    )


def tar_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_714_521_600
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _gunzip(data: bytes) -> bytes:
    return zlib.decompressobj(wbits=31).decompress(data)


def _unzstd(data: bytes) -> bytes:
    out = io.BytesIO()
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data))
    try:
        while block := reader.read(1 << 16):
            out.write(block)
    except zstandard.ZstdError:
        pass  # decoded until the error, as `zstd -dc` prints what it could
    return out.getvalue()


#: suffix -> (compress, decompress until the damage)
CODECS: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "tar.gz": (lambda raw: gzip.compress(raw, compresslevel=6, mtime=0), _gunzip),
    "tar.zst": (lambda raw: zstandard.ZstdCompressor().compress(raw), _unzstd),
    "tar": (lambda raw: raw, lambda cut: cut),
}


def rows_of(case: Path, path: str) -> pl.DataFrame:
    files = read_table(case, "files").filter(pl.col("path") == path)
    assert files.height == 1, files
    return read_table(case, "rows").filter(pl.col("file_id") == files["file_id"][0])


def record_of(case: Path, path: str) -> dict[str, object]:
    files = read_table(case, "files").filter(pl.col("path") == path)
    assert files.height == 1, (path, read_table(case, "files"))
    row: dict[str, object] = files.row(0, named=True)
    return row


def issues_of(case: Path, path: str, kind: str) -> list[dict[str, object]]:
    quarantine = read_table(case, "quarantine")
    return quarantine.filter((pl.col("path") == path) & (pl.col("kind") == kind)).to_dicts()


# -- item 2: a truncated compressed tar --------------------------------------------------------


@pytest.mark.parametrize("suffix", list(CODECS))
def test_a_tar_cut_at_60_percent_keeps_every_complete_line_and_says_what_was_lost(
    tmp_path: Path, suffix: str
) -> None:
    text = log_text(LINES)
    raw = tar_of({MEMBER: text, "logs/after.log": log_text(100, "node-2")})
    compress, decompress = CODECS[suffix]
    packed = compress(raw)
    cut = packed[: len(packed) * 6 // 10]
    bundle = tmp_path / f"incident.{suffix}"
    bundle.write_bytes(cut)

    decoded = decompress(cut)  # what `gzip -dc` / `zstd -dc` still gives
    have = decoded[512 : 512 + len(text)]  # the member's bytes after its header
    assert 0 < len(have) < len(text)
    complete = have.count(b"\n")
    partial = have[have.rfind(b"\n") + 1 :]
    assert complete > LINES // 3 and partial, "the cut should fall inside a line"

    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)  # lines in = rows + quarantined, per file and in case.json

    rows = rows_of(case, MEMBER)
    assert rows.height == complete
    # Each row is its line, at its byte offset in the member (computed here from the bytes).
    ends = np.flatnonzero(np.frombuffer(have, dtype=np.uint8) == 10)
    starts = [0, *(ends[:-1] + 1).tolist()]
    assert rows["line"].to_list() == list(range(1, complete + 1))
    assert rows["offset"].to_list() == starts
    last = text.splitlines()[complete - 1].decode()
    assert rows["message"][-1] == last.split(" ", 1)[1]

    # The line the cut falls in: quarantined with the bytes it has.
    (dropped,) = issues_of(case, MEMBER, "dropped")
    assert dropped["line"] == complete + 1
    assert dropped["raw"] == partial
    assert f"after its first {len(partial):,} bytes" in str(dropped["reason"])

    # The member names the bytes lost; the archive says where it broke and that nothing
    # after that point is known.
    lost = len(text) - len(have)
    record = record_of(case, MEMBER)
    assert record["status"] == "partial"
    (member_issue,) = issues_of(case, MEMBER, "file")
    expected = f"after {len(have):,} of its {len(text):,} bytes ({lost:,} bytes lost"
    assert expected in str(member_issue["reason"])
    assert record["detail"] == member_issue["reason"]
    archive = record_of(case, bundle.name)
    assert archive["status"] == "damaged"
    detail = str(archive["detail"])
    assert f"cut off inside {MEMBER} after {len(have):,} of its {len(text):,} bytes" in detail
    assert f"beyond decoded byte {len(decoded):,}" in detail
    assert "logs/after.log" not in read_table(case, "files")["path"].to_list()


def test_a_tar_cut_between_members_says_so(tmp_path: Path) -> None:
    first = log_text(200)
    raw = tar_of({"a.log": first, "b.log": log_text(200, "node-2")})
    header_b = 512 + (len(first) + 511) // 512 * 512  # where b.log's header starts
    # A gzip stream cut 100 bytes into b.log's header: every byte before the cut decodes (a
    # sync flush), and the stream has no end.
    deflate = zlib.compressobj(wbits=31)
    packed = deflate.compress(raw[: header_b + 100]) + deflate.flush(zlib.Z_SYNC_FLUSH)
    assert _gunzip(packed) == raw[: header_b + 100]
    bundle = tmp_path / "cut.tar.gz"
    bundle.write_bytes(packed)
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    assert rows_of(case, "a.log").height == 200
    assert record_of(case, "a.log")["status"] == "read"
    detail = str(record_of(case, bundle.name)["detail"])
    assert "cut off after a.log" in detail
    assert "gzip stream is truncated" in detail


def test_a_plain_tar_without_its_end_marker_is_reported(tmp_path: Path) -> None:
    text = log_text(50)
    raw = tar_of({"a.log": text})
    end = 512 + (len(text) + 511) // 512 * 512  # the members end here; zero blocks follow
    bundle = tmp_path / "cut.tar"
    bundle.write_bytes(raw[:end])
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    assert rows_of(case, "a.log").height == 50
    detail = str(record_of(case, bundle.name)["detail"])
    assert "cut off after a.log" in detail


# -- a truncated zip ---------------------------------------------------------------------------


class _Unseekable(io.RawIOBase):
    """A write-only stream zipfile cannot seek: it writes sizes after each member's data."""

    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.data += b
        return len(b)


def zip_of(members: dict[str, tuple[bytes, int]], *, streamed: bool = False) -> bytes:
    out: io.BytesIO | _Unseekable = _Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, (data, method) in members.items():
            archive.writestr(zipfile.ZipInfo(name, (2024, 5, 1, 0, 0, 0)), data, method)
    return bytes(out.data) if isinstance(out, _Unseekable) else out.getvalue()


def local_data(blob: bytes, name: str) -> tuple[int, int, int, int]:
    """(data offset, compressed size, method, flags) of a member, from its local header."""
    header = blob.find(b"PK\x03\x04" + blob[4:6])  # same version as the first member
    while header >= 0:
        _, _, flags, method, _, _, _, csize, _, nlen, xlen = struct.unpack_from(
            "<4sHHHHHIIIHH", blob, header
        )
        if blob[header + 30 : header + 30 + nlen] == name.encode():
            return header + 30 + nlen + xlen, csize, method, flags
        header = blob.find(b"PK\x03\x04", header + 4)
    raise AssertionError(name)


@pytest.mark.parametrize("streamed", [False, True], ids=["sizes-in-headers", "data-descriptors"])
def test_a_cut_zip_gives_its_intact_members_and_reports_the_rest(
    tmp_path: Path, streamed: bool
) -> None:
    members = {
        "a.log": (log_text(3000, "node-a"), zipfile.ZIP_DEFLATED),
        "b.log": (log_text(2000, "node-b"), zipfile.ZIP_STORED),
        "c.log": (log_text(4000, "node-c"), zipfile.ZIP_DEFLATED),
        "d.log": (log_text(1000, "node-d"), zipfile.ZIP_DEFLATED),
    }
    blob = zip_of(members, streamed=streamed)
    start, _, _, flags = local_data(blob, "c.log")
    assert bool(flags & 0x8) == streamed  # streamed: sizes only after the data
    with zipfile.ZipFile(io.BytesIO(blob)) as whole:  # the intact zip's directory
        csize = whole.getinfo("c.log").compress_size
    keep = csize * 6 // 10
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(blob[: start + keep])

    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    for name in ("a.log", "b.log"):
        assert rows_of(case, name).height == members[name][0].count(b"\n"), name
        assert record_of(case, name)["status"] == "read"
    # c.log gives every complete line its present compressed bytes decode to.
    have = zlib.decompressobj(wbits=-15).decompress(blob[start : start + keep])
    assert rows_of(case, "c.log").height == have.count(b"\n") > 0
    c_issue = str(record_of(case, "c.log")["detail"])
    assert f"breaks off inside this member after {keep:,} of its" in c_issue
    if not streamed:
        assert f"of its {csize:,} compressed bytes ({csize - keep:,} lost)" in c_issue
    assert "d.log" not in read_table(case, "files")["path"].to_list()
    archive = record_of(case, "bundle.zip")
    assert archive["status"] == "damaged"
    detail = str(archive["detail"])
    assert "3 members read from their local headers" in detail
    assert f"cut off inside c.log after {keep:,}" in detail
    assert f"beyond byte {start + keep:,}" in detail


def test_a_zip_cut_in_its_central_directory_loses_no_member(tmp_path: Path) -> None:
    members = {f"m{i}.log": (log_text(100, f"node-{i}"), zipfile.ZIP_DEFLATED) for i in range(3)}
    blob = zip_of(members)
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(blob[: blob.find(b"PK\x01\x02") + 30])
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    for name in members:
        assert rows_of(case, name).height == 100
    assert "all of them intact" in str(record_of(case, "bundle.zip")["detail"])


def test_a_damaged_salvaged_member_is_reported_not_trusted(tmp_path: Path) -> None:
    members = {"a.log": (log_text(50), zipfile.ZIP_STORED), "b.log": (b"x\n", 0)}
    blob = bytearray(zip_of(members))
    start, *_ = local_data(bytes(blob), "a.log")
    blob[start + 10] ^= 0x20  # one flipped bit: the CRC no longer matches
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(bytes(blob[: blob.find(b"PK\x01\x02")]))
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    assert record_of(case, "a.log")["status"] == "partial"
    assert "does not match its CRC" in str(record_of(case, "a.log")["detail"])
    assert rows_of(case, "b.log").height == 1


def test_a_zip_inside_a_cut_tar_gives_what_it_holds(tmp_path: Path) -> None:
    first, second = log_text(5000, "node-1"), log_text(5000, "node-2")
    inner = zip_of({"z1.log": (first, 8), "z2.log": (second, 8)})
    outer = tar_of({"b.zip": inner})
    start, *_ = local_data(inner, "z2.log")
    bundle = tmp_path / "outer.tar.gz"
    # Cut 1,000 bytes into z2.log's data: z1.log is whole.
    bundle.write_bytes(gzip.compress(outer[: 512 + start + 1000]))
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    assert rows_of(case, "b.zip/z1.log").height == 5000
    have = zlib.decompressobj(wbits=-15).decompress(inner[start : start + 1000])
    assert rows_of(case, "b.zip/z2.log").height == have.count(b"\n")
    assert record_of(case, "b.zip/z2.log")["status"] == "partial"
    assert "cut off inside b.zip after" in str(record_of(case, bundle.name)["detail"])
    assert "cut off inside z2.log after 1,000" in str(record_of(case, "b.zip")["detail"])


# -- a nested bomb -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zeros_zip() -> bytes:
    """A zip of two 40 MB members of zeros (about 80 KB): each member within the ratio and
    the floor, together more than the 64 MiB total a small bundle may decode."""
    zeros = b"x\n" * (20 << 20)
    return zip_of({"z0.log": (zeros, zipfile.ZIP_DEFLATED), "z1.log": (zeros, 8)})


def test_a_nested_zip_bomb_refuses_that_archive_and_the_run_goes_on(
    tmp_path: Path, zeros_zip: bytes
) -> None:
    ok = log_text(20, "node-ok")
    zeros_tgz = gzip.compress(tar_of({"zeros.log": b"x\n" * (20 << 20)}), mtime=0)
    outer = zip_of(
        {
            "in0.zip": (zeros_zip, zipfile.ZIP_DEFLATED),
            "in1.zip": (zeros_zip, zipfile.ZIP_DEFLATED),
            "in2.tar.gz": (zeros_tgz, zipfile.ZIP_STORED),
            "app.log": (ok, zipfile.ZIP_DEFLATED),
        }
    )
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a-outer.zip").write_bytes(outer)
    # Decoded after the bombs: with the bundle's total used up, this stopped the run.
    (bundle / "b-after.log.gz").write_bytes(gzip.compress(log_text(30, "node-gz")))
    (bundle / "c-plain.log").write_bytes(log_text(10, "node-plain"))

    case = tmp_path / "case"
    api.ingest([bundle], case)  # no ExpansionLimitError
    check_accounting(case)
    assert rows_of(case, "a-outer.zip/app.log").height == 20
    assert rows_of(case, "b-after.log.gz").height == 30
    assert rows_of(case, "c-plain.log").height == 10
    files = read_table(case, "files")
    status = dict(zip(files["path"], files["status"], strict=True))
    detail = dict(zip(files["path"], files["detail"], strict=True))
    for inner in ("in0.zip", "in1.zip"):
        for member in ("z0.log", "z1.log"):
            path = f"a-outer.zip/{inner}/{member}"
            assert status[path] == "refused", path
            assert f"what the archive a-outer.zip/{inner} may expand to" in detail[path]
            assert "nested archive bomb" in detail[path]
    nested_tar = "a-outer.zip/in2.tar.gz"
    assert status[nested_tar] == "damaged"
    assert "refusing a likely nested archive bomb" in detail[nested_tar]
    assert status[f"{nested_tar}/zeros.log"] == "partial"
    # Bounded work: the bombs together decoded a few MiB, not their 200 MB.
    decoded = files.filter(pl.col("path").str.starts_with("a-outer.zip/"))["decoded_bytes"]
    assert (decoded.fill_null(0).sum()) < 20 << 20


def test_a_nested_archive_within_its_ratio_is_read_whole(tmp_path: Path) -> None:
    text = log_text(20_000)  # 1 MB, deflates ~5x: far inside the ratio
    inner = zip_of({"deep.log": (text, zipfile.ZIP_DEFLATED)})
    outer = tar_of({"nested/inner.zip": inner})
    bundle = tmp_path / "outer.tar.gz"
    bundle.write_bytes(gzip.compress(outer))
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    assert rows_of(case, "nested/inner.zip/deep.log").height == 20_000
