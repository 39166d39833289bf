"""Handoff bundles: they re-diagnose to the same verdict elsewhere, tampering and truncation
are detected member by member, and no planted secret survives in any member."""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
import zstandard
from typer.testing import CliRunner

from analyzer import api
from analyzer import handoff as handoff_mod
from analyzer.cli import app
from analyzer.errors import HandoffError
from fixtures.scenarios import SCENARIOS
from tests.conftest import Generated

runner = CliRunner(env={"COLUMNS": "200"})


def _members(path: Path) -> dict[str, bytes]:
    with path.open("rb") as raw:
        data = zstandard.ZstdDecompressor().stream_reader(raw).read()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        out = {}
        for info in archive:
            handle = archive.extractfile(info)
            assert handle is not None
            out[info.name] = handle.read()
        return out


def _repack(members: dict[str, bytes], path: Path) -> None:
    """Write ``members`` back in the original order (MANIFEST.json first), untouched otherwise."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(buffer.getvalue()))


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_a_handoff_reanalyzes_to_the_same_verdict(
    generated: Callable[[str, int], Generated], tmp_path: Path, name: str
) -> None:
    made = generated(name, 64)
    copy = tmp_path / "case"
    shutil.copytree(made.case, copy)
    archive = tmp_path / "incident.tar.zst"
    result = api.handoff([copy], archive)
    assert result.reproduces
    # The other machine has only the archive.
    shutil.rmtree(copy)
    again = api.analyze([archive], tmp_path / "elsewhere")
    assert api.verdict_key(again.findings) == api.verdict_key(result.findings)
    assert again.findings.verdict.culprit.support == result.findings.verdict.culprit.support


def test_the_archive_is_deterministic_and_lists_every_member(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    made = generated("restart-loop", 8)
    one = api.handoff([made.case], tmp_path / "one.tar.zst", case_id="INC-1")
    two = api.handoff([made.case], tmp_path / "two.tar.zst", case_id="INC-1")
    assert one.path.read_bytes() == two.path.read_bytes()
    manifest = api.verify_handoff(one.path).manifest
    members = _members(one.path)
    assert next(iter(members)) == handoff_mod.MANIFEST
    assert set(manifest.members) == set(members) - {handoff_mod.MANIFEST}
    assert {"report.md", "findings.json", "attempts.json", "case/rows/evidence.parquet"} <= set(
        members
    )
    assert manifest.case_id == "INC-1"


def test_tampering_with_any_member_is_detected(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    made = generated("host-crash-heartbeat", 8)
    archive = tmp_path / "h.tar.zst"
    api.handoff([made.case], archive)
    original = _members(archive)
    for name in original:
        if name == handoff_mod.MANIFEST:
            continue
        changed = dict(original)
        data = bytearray(changed[name])
        data[len(data) // 2] ^= 0x01
        changed[name] = bytes(data)
        tampered = tmp_path / "tampered.tar.zst"
        _repack(changed, tampered)
        with pytest.raises(HandoffError, match=f"member {name} does not match its sha256"):
            api.verify_handoff(tampered)
    result = runner.invoke(app, ["handoff", "verify", str(tampered)])
    assert result.exit_code == 2
    assert "does not match its sha256" in result.stderr


def test_a_truncated_or_extended_archive_is_a_clear_error(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    made = generated("host-crash-heartbeat", 8)
    archive = tmp_path / "h.tar.zst"
    api.handoff([made.case], archive)
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(HandoffError, match="cut short"):
        api.verify_handoff(cut)
    members = _members(archive)
    members["extra.txt"] = b"not listed"
    extended = tmp_path / "extended.tar.zst"
    _repack(members, extended)
    with pytest.raises(HandoffError, match="member extra.txt is not in the manifest"):
        api.verify_handoff(extended)
    members.pop("extra.txt")
    members.pop("report.md")
    _repack(members, extended)
    with pytest.raises(HandoffError, match="member report.md is missing"):
        api.verify_handoff(extended)


SECRETS = [
    "10.128.7.42",
    "abcdefghijklmnop1234",
    "ya29.a0AfH6SMBxSECRETtoken",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "hunter2pass",
    "alice.smith@example.com",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY",
]


def test_no_planted_secret_survives_in_any_member(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "worker-0.log").write_text(
        "I1129 18:00:00.000000    11 main.py:10] connecting to 10.128.7.42:8476 with "
        "Authorization: Bearer abcdefghijklmnop1234\n"
        "I1129 18:00:00.500000    11 main.py:11] token ya29.a0AfH6SMBxSECRETtoken key "
        "AIzaSyA1234567890abcdefghijklmnopqrstuv\n"
        "E1129 18:00:01.000000    11 synchronous_driver.cc:1064] !!!! FATAL ERROR !!!! for "
        "[/dev/accel0 tpu1114:pe2:3] reported to alice.smith@example.com\n"
        "I1129 18:00:02.000000    11 main.py:12] upload https://bob:hunter2pass@storage.example.com"
        "/ckpt failed; SK=wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY\n",
        encoding="utf-8",
    )
    archive = tmp_path / "h.tar.zst"
    result = api.handoff([bundle], archive)
    assert result.findings.verdict.first_error is not None
    assert result.findings.verdict.first_error.signature == "TPU-HW-001"
    for name, data in _members(archive).items():
        if name.endswith(".parquet"):
            text = pl.read_parquet(io.BytesIO(data)).write_csv()
        else:
            text = data.decode("utf-8")
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} in {name}"
    # The rows are there, only their secrets are not.
    rows = pl.read_parquet(io.BytesIO(_members(archive)["case/rows/evidence.parquet"]))
    assert rows.height == 4
    assert rows["message"].str.contains("REDACTED").sum() == 4
