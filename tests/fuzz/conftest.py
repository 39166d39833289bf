"""Hypothesis profiles of the reader fuzz tests.

``ci`` (the default of the suite): a few derandomized examples per reader family, so a run is
fast and reproducible. ``long``: ``pytest -m fuzz --hypothesis-profile long tests/fuzz``, at
least 1,000 examples per test.

How loading interacts: hypothesis's pytest plugin calls ``settings.load_profile(NAME)`` for
``--hypothesis-profile NAME`` in its ``pytest_configure``, which runs before this conftest is
imported unless ``tests/fuzz`` is on the command line (pytest loads a subfolder's conftest only
then, or while collecting). So the ``long`` run must name ``tests/fuzz`` (otherwise the plugin
refuses the unknown profile). Without the option we load ``ci`` ourselves in
``pytest_configure`` (a historic hook: a conftest imported during collection still gets it).
``load_profile`` sets the default settings of the whole session, but no other test of the suite
uses hypothesis.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

_SLOW_INPUTS = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=_SLOW_INPUTS,
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SLOW_INPUTS,
)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("ci")
