"""Provenance: a handoff signed with an Ed25519 key verifies against that key and no other;
an unsigned manifest can be rewritten by anyone (accepted without --trusted-key, refused
with it); a stale signature is refused; --sha256 pins the archive itself; keys load from
PEM, OpenSSH and raw files."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from analyzer import api
from analyzer.errors import HandoffError, UsageError
from analyzer.provenance import signing
from analyzer.provenance.layout import EVIDENCE, MANIFEST, SIGNATURE
from tests.handoff import helpers
from tests.handoff.conftest import Packed


def _resigned(packed: Packed, key_file: Path) -> dict[str, bytes]:
    """The signed handoff's members, its manifest signed anew with ``key_file``."""
    members = helpers.members(packed.signed)
    key = signing.load_private_key(key_file)
    return {**members, SIGNATURE: signing.sign(members[MANIFEST], key)}


def _edited(members: dict[str, bytes]) -> dict[str, bytes]:
    """An evidence row file with one byte changed, and the manifest recomputed to match."""
    data = bytearray(members[EVIDENCE])
    data[len(data) // 2] ^= 0x01
    return helpers.recompute({**members, EVIDENCE: bytes(data)})


def test_a_signed_handoff_verifies_with_its_key(packed: Packed, tmp_path: Path) -> None:
    verified = api.verify_handoff(packed.signed, [packed.packer.public])
    assert verified.signer is not None and verified.signer.trusted
    assert verified.signer.fingerprint == packed.packer.fingerprint
    shown = helpers.cli("handoff", "verify", packed.signed, "--trusted-key", packed.packer.public)
    assert shown.exit_code == 0 and f"trusted key {packed.packer.fingerprint}" in shown.stdout
    analyzed = helpers.cli(
        "analyze", packed.signed, "-o", tmp_path / "out", "--trusted-key", packed.packer.public
    )
    assert analyzed.exit_code == 0, analyzed.stderr
    assert packed.packer.fingerprint in (tmp_path / "out" / "report.md").read_text()
    # Without a key the signature is still checked against the manifest, its key named.
    unkeyed = api.verify_handoff(packed.signed)
    assert unkeyed.signer is not None and not unkeyed.signer.trusted


def test_a_handoff_resigned_by_another_key_is_refused(packed: Packed, tmp_path: Path) -> None:
    archive = helpers.write(tmp_path / "r.tar.zst", _resigned(packed, packed.stranger.private))
    said = (f"member {SIGNATURE}", packed.stranger.fingerprint, "not a trusted key")
    helpers.refused(
        helpers.cli("handoff", "verify", archive, "--trusted-key", packed.packer.public), *said
    )
    helpers.refused(
        helpers.cli(
            "analyze", archive, "-o", tmp_path / "o", "--trusted-key", packed.packer.public
        ),
        *said,
    )
    # Trust is in a key: the stranger's key verifies the stranger's signature.
    assert api.verify_handoff(archive, [packed.stranger.public]).signer is not None


def test_an_edited_unsigned_handoff_passes_only_without_a_trusted_key(
    packed: Packed, tmp_path: Path
) -> None:
    """What an unsigned manifest does not prove: anyone can rewrite it."""
    archive = helpers.write(tmp_path / "e.tar.zst", _edited(helpers.members(packed.archive)))
    assert api.verify_handoff(archive).signer is None
    helpers.refused(
        helpers.cli("handoff", "verify", archive, "--trusted-key", packed.packer.public),
        "unsigned",
    )
    helpers.refused(
        helpers.cli(
            "analyze", archive, "-o", tmp_path / "o", "--trusted-key", packed.packer.public
        ),
        "unsigned",
    )


def test_an_edited_signed_handoff_is_refused_even_without_a_key(
    packed: Packed, tmp_path: Path
) -> None:
    archive = helpers.write(tmp_path / "e.tar.zst", _edited(helpers.members(packed.signed)))
    said = (f"member {SIGNATURE}", "does not match")
    helpers.refused(helpers.cli("handoff", "verify", archive), *said)
    helpers.refused(helpers.cli("analyze", archive, "-o", tmp_path / "o"), *said)
    stripped = {k: v for k, v in helpers.members(packed.signed).items() if k != SIGNATURE}
    unsigned = helpers.write(tmp_path / "u.tar.zst", stripped)
    with pytest.raises(HandoffError, match="unsigned"):
        api.verify_handoff(unsigned, [packed.packer.public])


def test_sha256_pins_the_archive(packed: Packed, tmp_path: Path) -> None:
    right = packed.result.sha256
    assert api.verify_handoff(packed.archive, sha256=right.upper()).sha256 == right
    wrong = "0" * 64
    helpers.refused(helpers.cli("handoff", "verify", packed.archive, "--sha256", wrong), wrong)
    helpers.refused(
        helpers.cli("analyze", packed.archive, "-o", tmp_path / "o", "--sha256", wrong), wrong
    )
    # The same members repacked verify, but are not the archive the digest names.
    repacked = helpers.write(tmp_path / "r.tar.zst", helpers.members(packed.archive))
    helpers.refused(helpers.cli("handoff", "verify", repacked, "--sha256", right), right)
    helpers.refused(helpers.cli("handoff", "verify", repacked, "--sha256", "xyz"), "64 hex")


def _openssh(key: Ed25519PrivateKey, root: Path) -> tuple[Path, Path]:
    private, public = root / "id_ed25519", root / "id_ed25519.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        + b" someone@example\n"
    )
    return private, public


def _raw(key: Ed25519PrivateKey, root: Path, as_hex: bool) -> tuple[Path, Path]:
    raw = serialization.Encoding.Raw
    secret = key.private_bytes(raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    public = key.public_key().public_bytes(raw, serialization.PublicFormat.Raw)
    paths = root / "raw.key", root / "raw.pub"
    for path, data in zip(paths, (secret, public), strict=True):
        path.write_bytes(data.hex().encode() + b"\n" if as_hex else data)
    return paths


@pytest.mark.parametrize("form", ["openssh", "raw", "hex"])
def test_keys_load_from_openssh_and_raw_files(
    generated_case: Path, tmp_path: Path, form: str
) -> None:
    key = Ed25519PrivateKey.generate()
    private, public = (
        _openssh(key, tmp_path) if form == "openssh" else _raw(key, tmp_path, form == "hex")
    )
    made = api.handoff([generated_case], tmp_path / "h.tar.zst", sign=private)
    verified = api.verify_handoff(made.path, [public])
    assert verified.signer is not None
    assert verified.signer.fingerprint == made.signed_by == signing.fingerprint(key.public_key())


def test_unusable_keys_are_usage_errors(packed: Packed, tmp_path: Path) -> None:
    ec_key = tmp_path / "ec.pem"
    ec_key.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(UsageError, match="not an Ed25519"):
        signing.load_private_key(ec_key)
    encrypted = tmp_path / "locked.pem"
    encrypted.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pass"),
        )
    )
    with pytest.raises(UsageError, match="encrypted"):
        signing.load_private_key(encrypted)
    helpers.refused(
        helpers.cli("handoff", "verify", packed.signed, "--trusted-key", tmp_path / "missing.pub"),
        "missing.pub",
    )
    helpers.refused(
        helpers.cli("handoff", "verify", packed.signed, "--trusted-key", ec_key), "Ed25519"
    )


def test_keygen_writes_a_private_key_only_its_owner_reads(packed: Packed, tmp_path: Path) -> None:
    made = helpers.cli("handoff", "keygen", tmp_path / "team")
    assert made.exit_code == 0, made.stderr
    assert (tmp_path / "team").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "team.pub").read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    helpers.refused(helpers.cli("handoff", "keygen", tmp_path / "team"), "overwrite")
    assert packed.packer.fingerprint.startswith("SHA256:")
