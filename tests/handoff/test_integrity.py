"""A damaged handoff is refused with exit 2, never analyzed and never an internal error: the
compression's own checks (zstd checksum, gzip CRC), truncation anywhere, members added,
removed, repeated or unsafe, and every field of the manifest checked against the members."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import polars as pl
import pytest
import zstandard

from analyzer.provenance.layout import (
    ATTEMPTS,
    CASE_META,
    EVIDENCE,
    FINDINGS,
    MANIFEST,
    MATCHES,
    REPORT,
    TIMELINE,
)
from tests.handoff import helpers
from tests.handoff.conftest import Packed


def _both_refuse(archive: Path, out: Path, *said: str) -> None:
    """`handoff verify` and `analyze` both exit 2 saying ``said``; no report is written."""
    helpers.refused(helpers.cli("handoff", "verify", archive), *said)
    helpers.refused(helpers.cli("analyze", archive, "-o", out), *said)
    assert not (out / "report.md").exists()


def test_a_handoff_without_its_zstd_checksum_is_refused(packed: Packed, tmp_path: Path) -> None:
    blob = packed.archive.read_bytes()
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(blob[:-4])
    _both_refuse(cut, tmp_path / "out", "cut short")
    wrong = tmp_path / "wrong.tar.zst"
    wrong.write_bytes(blob[:-1] + bytes([blob[-1] ^ 0xFF]))
    _both_refuse(wrong, tmp_path / "out", "checksum")


def test_a_zstd_stream_written_without_a_checksum_is_refused(
    packed: Packed, tmp_path: Path
) -> None:
    tar = helpers.tar_of(helpers.members(packed.archive))
    bare = tmp_path / "bare.tar.zst"
    bare.write_bytes(zstandard.ZstdCompressor(write_checksum=False).compress(tar))
    _both_refuse(bare, tmp_path / "out", "no checksum")


@pytest.mark.parametrize("keep", [5, 20, 30, 0.25, 0.5, 0.9, -5])
def test_a_truncated_handoff_is_refused(packed: Packed, tmp_path: Path, keep: float) -> None:
    blob = packed.archive.read_bytes()
    size = int(keep) if isinstance(keep, int) else int(len(blob) * keep)
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(blob[:size])
    _both_refuse(cut, tmp_path / "out", "cut short")


@pytest.mark.parametrize(
    ("how", "keep"),
    [("gzip", 0.5), ("gzip", -1), ("gzip", -4), ("gzip", -9), ("none", 0.5), ("none", "end")],
)
def test_a_truncated_gzip_or_plain_handoff_is_refused(
    packed: Packed, tmp_path: Path, how: str, keep: float | str
) -> None:
    """gzip has a CRC-32 and a length; a plain tar has no checksum, so it is refused when cut
    in its data or in the two zero blocks that end it (after those, only padding follows)."""
    tar = helpers.tar_of(helpers.members(packed.archive))
    blob = helpers.compress(tar, how)
    if keep == "end":
        size = -(-len(tar.rstrip(b"\0")) // 512) * 512 + 512
    else:
        assert not isinstance(keep, str)
        size = int(keep) if isinstance(keep, int) else int(len(blob) * keep)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(blob[:size])
    _both_refuse(cut, tmp_path / "out", "cut short")


def test_a_gzip_handoff_with_a_wrong_crc_is_refused(packed: Packed, tmp_path: Path) -> None:
    blob = bytearray(gzip.compress(helpers.tar_of(helpers.members(packed.archive))))
    blob[-6] ^= 0xFF  # the CRC-32 of the gzip trailer
    archive = tmp_path / "crc.tar.gz"
    archive.write_bytes(bytes(blob))
    _both_refuse(archive, tmp_path / "out", "gzip")


def test_bytes_after_the_archive_are_refused(packed: Packed, tmp_path: Path) -> None:
    extended = tmp_path / "extended.tar.zst"
    extended.write_bytes(packed.archive.read_bytes() + b"appended")
    _both_refuse(extended, tmp_path / "out", "after the last zstd frame")


def test_members_added_removed_repeated_or_unsafe_are_refused(
    packed: Packed, tmp_path: Path
) -> None:
    original = helpers.members(packed.archive)
    out = tmp_path / "out"
    added = helpers.write(tmp_path / "added.tar.zst", {**original, "notes.txt": b"unlisted"})
    _both_refuse(added, out, "member notes.txt is not in the manifest")
    removed = helpers.write(
        tmp_path / "removed.tar.zst", {k: v for k, v in original.items() if k != REPORT}
    )
    _both_refuse(removed, out, f"member {REPORT} is missing")
    listed = helpers.write(
        tmp_path / "listed.tar.zst", helpers.recompute({**original, "run.sh": b"#!/bin/sh\n"})
    )
    _both_refuse(listed, out, "member run.sh is not part of a handoff")
    twice = io.BytesIO()
    with tarfile.open(fileobj=twice, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for member, data in [*original.items(), (REPORT, b"# the other report\n")]:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (tmp_path / "repeated.tar").write_bytes(twice.getvalue())
    _both_refuse(tmp_path / "repeated.tar", out, f"member {REPORT} appears twice")
    for kind, name in ((tarfile.SYMTYPE, REPORT), (tarfile.REGTYPE, "../escape")):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for member, data in original.items():
                if member != REPORT:
                    info = tarfile.TarInfo(member)
                    info.size = len(data)
                    archive.addfile(info, io.BytesIO(data))
            odd = tarfile.TarInfo(name)
            odd.type, odd.linkname = kind, "/etc/passwd"
            archive.addfile(odd, io.BytesIO(b""))
        unsafe = tmp_path / "unsafe.tar"
        unsafe.write_bytes(buffer.getvalue())
        _both_refuse(unsafe, out, "member")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"case_id": "INC-FORGED"}, f"member {CASE_META}: options.handoff"),
        ({"tool_version": "9.9.9"}, f"member {FINDINGS}: tool_version"),
        ({"bundle_id": "f" * 64}, f"member {FINDINGS}: bundle.id"),
        ({"catalogue_digest": "e" * 64}, f"member {FINDINGS}: catalogue_digest"),
        ({"signature_folders": ["signatures/1"]}, "signature_folders"),
        ({"format": "culprit-handoff/0"}, "handoff format"),
        ({"members": "all of them"}, f"member {MANIFEST}: members"),
        ({"extra": "field"}, f"member {MANIFEST}: extra"),
        ({"case_id": ""}, f"member {MANIFEST}: case_id"),
    ],
)
def test_every_manifest_field_is_checked(
    packed: Packed, tmp_path: Path, change: dict[str, object], said: str
) -> None:
    forged = helpers.edit_json(helpers.members(packed.archive), MANIFEST, change)
    archive = helpers.write(tmp_path / "forged.tar.zst", forged)
    _both_refuse(archive, tmp_path / "out", said)


def test_the_bytes_field_and_the_signature_folders_are_checked(
    packed: Packed, tmp_path: Path
) -> None:
    original = helpers.members(packed.archive)
    manifest = json.loads(original[MANIFEST])
    manifest["members"][REPORT]["bytes"] += 1
    wrong_size = {**original, MANIFEST: json.dumps(manifest).encode()}
    archive = helpers.write(tmp_path / "size.tar.zst", wrong_size)
    _both_refuse(archive, tmp_path / "out", f"member {REPORT} is", "not the manifest's")
    stray = helpers.recompute({**original, "signatures/0/x/y.toml": b"[signature]\n"})
    archive = helpers.write(tmp_path / "stray.tar.zst", stray)
    _both_refuse(archive, tmp_path / "out", "signatures/0 is packed but not in signature_folders")


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        (MATCHES, b"PAR1 not really", f"member {MATCHES} is not a Parquet file"),
        (EVIDENCE, helpers.parquet_bytes(pl.DataFrame({"x": [1]})), "has columns"),
        (FINDINGS, b"{}", f"member {FINDINGS} is not valid"),
        (ATTEMPTS, b'[{"index": "first"}]', f"member {ATTEMPTS} is not valid"),
        (CASE_META, b"[]", f"member {CASE_META} is not valid"),
        (TIMELINE, b"<html><body>no</body></html>", f"member {TIMELINE} is not an SVG"),
        (TIMELINE, b"<svg xmlns='http://www.w3.org/2000/svg'", f"member {TIMELINE} is not an SVG"),
        (
            TIMELINE,
            b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
            "holds '<script'",
        ),
        (
            TIMELINE,
            b"<svg xmlns='http://www.w3.org/2000/svg'><a href='https://x.example/'/></svg>",
            f"member {TIMELINE} holds",
        ),
    ],
)
def test_members_are_what_their_names_say(
    packed: Packed, tmp_path: Path, name: str, data: bytes, said: str
) -> None:
    """With the manifest recomputed (unsigned), nothing catches a malformed member but its
    own check, which names it (the re-diagnosis would fail without saying which)."""
    forged = helpers.recompute({**helpers.members(packed.archive), name: data})
    _both_refuse(helpers.write(tmp_path / "bad.tar.zst", forged), tmp_path / "out", said)


def test_no_member_replaced_by_garbage_ends_in_an_internal_error(
    packed: Packed, tmp_path: Path
) -> None:
    original = helpers.members(packed.archive)
    for name in original:
        forged = {**original, name: b"\x00garbage\xff"}
        if name != MANIFEST:
            forged = helpers.recompute(forged)
        archive = helpers.write(tmp_path / "garbage.tar.zst", forged)
        helpers.refused(helpers.cli("analyze", archive, "-o", tmp_path / "out"), "member")


def test_the_picture_is_packed_and_listed(packed: Packed) -> None:
    """report.md links timeline.svg; the handoff carries it, in its manifest."""
    original = helpers.members(packed.archive)
    assert b"](timeline.svg)" in original[REPORT]
    assert original[TIMELINE].startswith(b"<svg ")
    assert TIMELINE in json.loads(original[MANIFEST])["members"]
