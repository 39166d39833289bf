"""Ed25519 signatures over a handoff's manifest (``MANIFEST.sig``).

The signature is over the exact bytes of ``MANIFEST.json``, and the manifest holds the
sha256 of every other member, so one signature covers the whole handoff. ``MANIFEST.sig`` is
JSON: the algorithm, the signer's public key (raw, base64) and the signature (base64).
Anyone can sign with a key of their own: a signature proves who packed a handoff only
against a key the receiver already trusts (``--trusted-key``).

Keys: a private key as PEM (PKCS#8, ``openssl genpkey -algorithm ed25519``), OpenSSH
(``ssh-keygen -t ed25519``, unencrypted) or 32 raw bytes (or their 64 hex digits); a public
key as PEM, an OpenSSH ``ssh-ed25519 …`` line, or 32 raw bytes (or hex). Fingerprints are
OpenSSH's (``SHA256:…``, as ``ssh-keygen -lf KEY.pub`` prints).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from analyzer.errors import HandoffError, UsageError
from analyzer.provenance.layout import MANIFEST, SIGNATURE

ALGORITHM: Final = "ed25519"
SIGNATURE_FORMAT: Final = "culprit-handoff-signature/1"
_RAW: Final = serialization.Encoding.Raw


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(_RAW, serialization.PublicFormat.Raw)


def fingerprint(key: Ed25519PublicKey) -> str:
    """OpenSSH's fingerprint of ``key`` (``SHA256:`` and unpadded base64)."""
    line = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    blob = base64.b64decode(line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the {what}: {exc.strerror or exc}", path=str(path)) from None


def _raw32(data: bytes) -> bytes | None:
    """32 raw key bytes, from the bytes themselves or 64 hex digits."""
    if len(data) == 32:
        return data
    try:
        decoded = binascii.unhexlify(data.strip())
    except (binascii.Error, ValueError):
        return None
    return decoded if len(decoded) == 32 else None


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in ``path`` (PEM, OpenSSH or raw).

    Raises:
        UsageError: unreadable, encrypted, or not an Ed25519 private key.
    """
    data = _read(path, "signing key")
    raw = _raw32(data)
    if raw is not None:
        return Ed25519PrivateKey.from_private_bytes(raw)
    key: object
    try:
        if b"OPENSSH PRIVATE KEY" in data:
            key = serialization.load_ssh_private_key(data, password=None)
        else:
            key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise UsageError(
            "the signing key is encrypted; use an unencrypted key file for --sign",
            path=str(path),
        ) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"not an Ed25519 private key: {exc}", path=str(path)) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError("the signing key is not an Ed25519 key", path=str(path))
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in ``path`` (PEM, an OpenSSH line, or raw).

    Raises:
        UsageError: unreadable, or not an Ed25519 public key.
    """
    data = _read(path, "trusted key")
    raw = _raw32(data)
    if raw is not None:
        return Ed25519PublicKey.from_public_bytes(raw)
    key: object
    try:
        if data.lstrip().startswith(b"ssh-"):
            key = serialization.load_ssh_public_key(data.strip())
        else:
            key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise UsageError(f"not an Ed25519 public key: {exc}", path=str(path)) from None
    if not isinstance(key, Ed25519PublicKey):
        raise UsageError("the trusted key is not an Ed25519 key", path=str(path))
    return key


def sign(manifest: bytes, key: Ed25519PrivateKey) -> bytes:
    """The ``MANIFEST.sig`` member for the manifest bytes ``manifest``."""
    document = {
        "format": SIGNATURE_FORMAT,
        "algorithm": ALGORITHM,
        "public_key": base64.b64encode(_raw_public(key.public_key())).decode(),
        "signature": base64.b64encode(key.sign(manifest)).decode(),
    }
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()


@dataclass(frozen=True)
class Signer:
    """Who signed a handoff's manifest."""

    fingerprint: str
    #: Whether the key is one of the trusted keys given.
    trusted: bool


def check_signature(
    signature: bytes, manifest: bytes, trusted: list[Ed25519PublicKey], where: str
) -> Signer:
    """The signer of ``manifest``, if ``signature`` (a ``MANIFEST.sig``) holds.

    Raises:
        HandoffError: the signature member is malformed, does not match the manifest, or
            (when ``trusted`` keys are given) was made by none of them.
    """
    try:
        document = json.loads(signature)
        if document.get("format") != SIGNATURE_FORMAT or document.get("algorithm") != ALGORITHM:
            raise ValueError(f"not a {SIGNATURE_FORMAT} ({ALGORITHM}) signature")
        raw = base64.b64decode(document["public_key"], validate=True)
        value = base64.b64decode(document["signature"], validate=True)
        key = Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error) as exc:
        raise HandoffError(f"member {SIGNATURE} is not valid: {exc}", path=where) from None
    try:
        key.verify(value, manifest)
    except InvalidSignature:
        raise HandoffError(
            f"member {SIGNATURE}: the signature does not match {MANIFEST} (tampered)", path=where
        ) from None
    signer = Signer(fingerprint(key), any(_raw_public(t) == _raw_public(key) for t in trusted))
    if trusted and not signer.trusted:
        raise HandoffError(
            f"member {SIGNATURE}: signed by {signer.fingerprint}, which is not a trusted key",
            path=where,
        )
    return signer


def keygen(out: Path) -> tuple[Path, Path, str]:
    """Write a new Ed25519 key pair: ``out`` (private, PEM PKCS#8, mode 0600) and
    ``out.pub`` (public, PEM); return both paths and the fingerprint.

    Raises:
        UsageError: either file exists, or cannot be written.
    """
    public_path = out.with_name(out.name + ".pub")
    for path in (out, public_path):
        if path.exists():
            raise UsageError("will not overwrite an existing key file", path=str(path))
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(private)
        public_path.write_bytes(public)
    except OSError as exc:
        raise UsageError(f"cannot write the key: {exc.strerror or exc}", path=str(out)) from None
    return out, public_path, fingerprint(key.public_key())
