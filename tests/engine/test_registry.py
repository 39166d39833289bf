"""Choosing an engine."""

from __future__ import annotations

import sys

import pytest

from analyzer.engine import ENGINES, engine_named
from analyzer.errors import UsageError


def test_every_listed_engine_is_known() -> None:
    assert ENGINES == ("local", "ray")
    assert engine_named("local").name == "local"


def test_unknown_engine_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown engine 'spark'; known: local, ray"):
        engine_named("spark")


def test_ray_options_need_the_ray_engine() -> None:
    with pytest.raises(UsageError, match="go with --engine ray"):
        engine_named("local", address="ray://head:10001")


def test_ray_options_are_checked() -> None:
    with pytest.raises(UsageError, match="--shards must be at least 1"):
        engine_named("ray", shards=0)
    with pytest.raises(UsageError, match="a cluster"):
        engine_named("ray", address="ray://head:10001", workers=2)


def test_missing_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "ray", None)
    engine = engine_named("ray")
    with pytest.raises(UsageError, match=r"pip install 'culprit\[ray\]'"), engine.session():
        pass
