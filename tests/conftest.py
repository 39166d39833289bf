"""Shared fixtures: sample locations, an ingest helper and the optional loghub data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from analyzer import api

TESTS = Path(__file__).parent
SAMPLES = TESTS / "samples"
REPO = TESTS.parent
EXAMPLE = REPO / "examples" / "tpu-heartbeat"
LOGHUB = REPO.parent / "shared" / "data" / "loghub"


@pytest.fixture
def ingest_case(tmp_path: Path) -> Callable[..., Path]:
    """Ingest inputs into a fresh case directory and return its path."""
    counter = iter(range(1000))

    def run(inputs: Sequence[Path] | Path, **kwargs: object) -> Path:
        paths = [inputs] if isinstance(inputs, Path) else list(inputs)
        out = tmp_path / f"case{next(counter)}"
        api.ingest(paths, out, **kwargs)  # type: ignore[arg-type]
        return out

    return run


@pytest.fixture
def loghub() -> Path:
    """The loghub 2k samples next to the repository, or skip."""
    if not LOGHUB.is_dir():
        pytest.skip(f"loghub samples not found at {LOGHUB} (they live in ../shared)")
    return LOGHUB
