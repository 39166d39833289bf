"""A handoff is recognized by its content: renamed, repacked in another member order, tar
dialect or compression, it is still verified before anything else. Intact, it re-diagnoses
as packed (and says it was repacked); with a member changed it exits 2 naming the member,
from `culprit analyze` as from `culprit handoff verify`."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzer import api
from analyzer.provenance.archive import is_handoff
from analyzer.provenance.layout import EVIDENCE, MANIFEST
from fixtures.truth import BUNDLE_DIR
from tests.conftest import Generated
from tests.handoff import helpers
from tests.handoff.conftest import Packed

#: name -> (file name, how to lay the members out, keyword arguments of helpers.write).
LAYOUTS: dict[str, tuple[str, Callable[[dict[str, bytes]], dict[str, bytes]], dict[str, Any]]] = {
    "manifest-last": ("h.tar.zst", helpers.manifest_last, {}),
    "posix-dot-prefix": ("h.tar.zst", helpers.manifest_last, {"prefix": "./"}),
    "gnu-uncompressed": ("h.tar", lambda m: m, {"how": "none", "dialect": "gnu"}),
    "ustar-gzip": ("h.tar.gz", helpers.manifest_last, {"how": "gzip", "dialect": "ustar"}),
    "renamed-tzst": ("h.tzst", lambda m: m, {}),
    "no-extension": ("incident", helpers.manifest_last, {}),
    "uncompressed-as-log": ("incident.log", helpers.manifest_last, {"how": "none"}),
}


def _flip(data: bytes) -> bytes:
    changed = bytearray(data)
    changed[len(changed) // 2] ^= 0x01
    return bytes(changed)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_intact_repacked_handoff_is_verified_and_reanalyzed(
    packed: Packed, tmp_path: Path, layout: str
) -> None:
    name, order, how = LAYOUTS[layout]
    archive = helpers.write(tmp_path / name, order(helpers.members(packed.archive)), **how)
    assert is_handoff(archive)
    result = api.analyze([archive], tmp_path / "out")
    assert result.handoff is not None
    assert api.verdict_key(result.findings) == api.verdict_key(packed.result.findings)
    assert not result.handoff.differences
    assert any("repacked" in note for note in result.handoff.notes)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_tampered_repacked_handoff_exits_2_naming_the_member(
    packed: Packed, tmp_path: Path, layout: str
) -> None:
    name, order, how = LAYOUTS[layout]
    members = helpers.members(packed.archive)
    members[EVIDENCE] = _flip(members[EVIDENCE])
    archive = helpers.write(tmp_path / name, order(members), **how)
    helpers.refused(helpers.cli("analyze", archive, "-o", tmp_path / "out"), f"member {EVIDENCE}")
    helpers.refused(helpers.cli("handoff", "verify", archive), f"member {EVIDENCE}")
    assert not (tmp_path / "out" / "report.md").exists()


@pytest.mark.skipif(shutil.which("tar") is None, reason="no tar command")
def test_gnu_tar_format_posix_repack_is_recognized(packed: Packed, tmp_path: Path) -> None:
    """What a person does: unpack with tar, edit a row file, pack again with
    `tar --format=posix` (./ names, directory entries, pax times), uncompressed."""
    unpacked = tmp_path / "x"
    unpacked.mkdir()
    for name, data in helpers.members(packed.archive).items():
        (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
        (unpacked / name).write_bytes(data)
    repacked = tmp_path / "repacked.tar"
    command = ["tar", "--format=posix", "-C", str(unpacked), "-cf", str(repacked), "."]
    subprocess.run(command, check=True)
    assert api.analyze([repacked], tmp_path / "ok").handoff is not None
    evidence = unpacked / EVIDENCE
    evidence.write_bytes(_flip(evidence.read_bytes()))
    subprocess.run(command, check=True)
    helpers.refused(helpers.cli("analyze", repacked, "-o", tmp_path / "out"), f"member {EVIDENCE}")


def test_an_unpacked_handoff_directory_is_verified(packed: Packed, tmp_path: Path) -> None:
    unpacked = tmp_path / "incident"
    for name, data in helpers.members(packed.archive).items():
        (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
        (unpacked / name).write_bytes(data)
    assert is_handoff(unpacked)
    result = api.analyze([unpacked], tmp_path / "out")
    assert result.handoff is not None and result.handoff.verification.compression == "directory"
    (unpacked / EVIDENCE).write_bytes(_flip((unpacked / EVIDENCE).read_bytes()))
    helpers.refused(helpers.cli("analyze", unpacked, "-o", tmp_path / "o2"), f"member {EVIDENCE}")


def test_a_handoff_is_analyzed_alone(
    packed: Packed, generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    other = generated("host-crash-heartbeat", 8).out / BUNDLE_DIR
    renamed = shutil.copy(packed.archive, tmp_path / "notes.bin")
    helpers.refused(
        helpers.cli("analyze", other, renamed, "-o", tmp_path / "out"), "analyzed alone"
    )


def test_culprits_manifest_below_the_root_is_a_handoff_and_refused(
    packed: Packed, tmp_path: Path
) -> None:
    archive = helpers.write(
        tmp_path / "wrapped.tar.gz",
        helpers.members(packed.archive),
        how="gzip",
        prefix="incident/",
    )
    assert is_handoff(archive)
    helpers.refused(helpers.cli("handoff", "verify", archive), MANIFEST, "root")
    helpers.refused(helpers.cli("analyze", archive, "-o", tmp_path / "out"), MANIFEST, "root")


def test_a_zip_holding_a_manifest_is_refused(packed: Packed, tmp_path: Path) -> None:
    archive = tmp_path / "incident.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name, data in helpers.members(packed.archive).items():
            out.writestr(name, data)
    assert is_handoff(archive)
    helpers.refused(helpers.cli("analyze", archive, "-o", tmp_path / "out"), "not zip")


def test_bundles_are_not_handoffs(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    """A raw bundle (a directory, or an archive of it) is not one, nor is one carrying some
    other tool's MANIFEST.json below its root; one with a MANIFEST.json at its root is a
    handoff by definition, and is refused when that is not culprit's manifest."""
    bundle = generated("host-crash-heartbeat", 8).out / BUNDLE_DIR
    logs = {
        path.relative_to(bundle).as_posix(): path.read_bytes()
        for path in sorted(bundle.rglob("*"))
        if path.is_file()
    }
    foreign = json.dumps({"files": ["worker-0.log"]}).encode()
    assert not is_handoff(bundle)
    assert not is_handoff(helpers.write(tmp_path / "b.tar.gz", logs, how="gzip"))
    nested = helpers.write(tmp_path / "n.tar", {**logs, "ckpt/MANIFEST.json": foreign}, how="none")
    assert not is_handoff(nested)
    rooted = helpers.write(tmp_path / "r.tar.zst", {**logs, MANIFEST: foreign})
    assert is_handoff(rooted)
    helpers.refused(helpers.cli("analyze", rooted, "-o", tmp_path / "out"), f"member {MANIFEST}")


def test_trust_options_need_a_handoff(
    packed: Packed, generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    bundle = generated("host-crash-heartbeat", 8).out / BUNDLE_DIR
    helpers.refused(
        helpers.cli("analyze", bundle, "-o", tmp_path, "--trusted-key", packed.packer.public),
        "--trusted-key",
    )
    helpers.refused(
        helpers.cli("analyze", bundle, "-o", tmp_path, "--sha256", "0" * 64), "--sha256"
    )


def test_a_zip_appended_as_the_last_member_does_not_hide_a_handoff(
    packed: Packed, tmp_path: Path
) -> None:
    """An end-of-zip record near the end of a tar must not make it a zip (and so, with no
    MANIFEST.json among the zip's names, a raw bundle)."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as out:
        out.writestr("worker-0.log", "E1129 18:00:01 fatal\n")
    members = {**helpers.members(packed.archive), "z.zip": inner.getvalue()}
    archive = helpers.write(tmp_path / "h.tar", members, how="none")
    assert zipfile.is_zipfile(archive)
    assert is_handoff(archive)
    helpers.refused(helpers.cli("analyze", archive, "-o", tmp_path / "out"), "member z.zip")
