"""Scenarios generated once per session (small: 8 hosts, 5 minutes), the fake CLIs per test,
and the worlds the fakes replay."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fixtures.generate import generate
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR
from tests.collect.fakes import FakeCloud, fake_cloud
from tests.collect.worlds import GkeWorld, ModelArtsWorld, gke_world, modelarts_world

__all__ = ["fake_cloud"]

#: Small scenarios (the generator needs 8 hosts at least): about 0.2 MB of logs each.
SMALL = Options(hosts=8, seed=1, minutes=3.0, rate=6.0)


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A generated scenario's bundle folder, generated once per session."""
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            root = tmp_path_factory.mktemp(name)
            generate(name, SMALL, root / "gen")
            made[name] = root / "gen" / BUNDLE_DIR
        return made[name]

    return get


@pytest.fixture
def gke(scenario: Callable[[str], Path], fake_cloud: FakeCloud) -> tuple[Path, GkeWorld]:
    """The oom-killed scenario (its kernel OOM kill reaches the bundle through the serial
    console) and fakes that replay it."""
    bundle = scenario("oom-killed")
    return bundle, gke_world(bundle, fake_cloud)


@pytest.fixture
def ma(scenario: Callable[[str], Path], fake_cloud: FakeCloud) -> tuple[Path, ModelArtsWorld]:
    """The hccl-timeout-modelarts scenario and fakes that replay it."""
    bundle = scenario("hccl-timeout-modelarts")
    return bundle, modelarts_world(bundle, fake_cloud)
