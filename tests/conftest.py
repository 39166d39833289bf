"""Shared fixtures: sample locations, an ingest helper and the optional loghub data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyzer import api
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR, Truth

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


def small(hosts: int = 8, seed: int = 0) -> Options:
    """Generator options small enough for the suite: 10 minutes at 12 background lines per
    host and minute."""
    return Options(hosts=hosts, seed=seed, minutes=10.0, rate=12.0)


@dataclass(frozen=True)
class Generated:
    """A generated scenario (seed 1, :func:`small`) and its ingested case."""

    out: Path
    truth: Truth
    case: Path
    ingest: api.IngestResult


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], Generated]:
    """Generate and ingest a scenario once per session, however many tests look at it."""
    cache: dict[tuple[str, int], Generated] = {}

    def get(name: str, hosts: int) -> Generated:
        if (name, hosts) not in cache:
            root = tmp_path_factory.mktemp(f"{name}-{hosts}")
            truth = generate(name, small(hosts, 1), root / "gen")
            result = api.ingest([root / "gen" / BUNDLE_DIR], root / "case")
            cache[name, hosts] = Generated(root / "gen", truth, root / "case", result)
        return cache[name, hosts]

    return get
