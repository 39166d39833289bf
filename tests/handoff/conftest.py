"""One handoff (and one signed handoff) per session, made from a generated scenario, and
two signing keys: the packer's and someone else's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyzer import api
from tests.conftest import Generated


@dataclass(frozen=True)
class Keys:
    """A key pair (``private``, ``public``) and its fingerprint."""

    private: Path
    public: Path
    fingerprint: str


@dataclass(frozen=True)
class Packed:
    """A handoff as culprit wrote it, and what it was made from."""

    archive: Path
    signed: Path
    result: api.HandoffResult
    packer: Keys
    stranger: Keys


def _keys(root: Path, name: str) -> Keys:
    return Keys(*api.handoff_keygen(root / name))


@pytest.fixture(scope="session")
def packed(
    generated: Callable[[str, int], Generated], tmp_path_factory: pytest.TempPathFactory
) -> Packed:
    made = generated("host-crash-heartbeat", 8)
    root = tmp_path_factory.mktemp("handoff")
    packer, stranger = _keys(root, "packer"), _keys(root, "stranger")
    result = api.handoff([made.case], root / "h.tar.zst")
    signed = api.handoff([made.case], root / "signed.tar.zst", sign=packer.private)
    assert result.reproduces and signed.signed_by == packer.fingerprint
    return Packed(result.path, signed.path, result, packer, stranger)


@pytest.fixture
def generated_case(generated: Callable[[str, int], Generated]) -> Path:
    """The case the session's handoffs are made from."""
    return generated("host-crash-heartbeat", 8).case
