"""The polars backend's prefilter: one case-insensitive alternation of every anchor, with
``str.contains_any`` as the fallback when Rust refuses the alternation; both give the same
matches as the reference over every example of the catalogue."""

from __future__ import annotations

import pytest

from analyzer.signatures.backends import polars as polars_backend
from analyzer.signatures.backends import python as python_backend
from analyzer.signatures.catalog import load
from analyzer.signatures.compile import compile_catalogue
from analyzer.signatures.examples import rows_frame


def test_the_alternation_escapes_every_anchor() -> None:
    regex = polars_backend._alternation(("a.b", "x|y", "[z]", "{1}", "-~#&"))
    assert regex == r"(?i)a\.b|x\|y|\[z\]|\{1\}|\-\~\#\&"


@pytest.mark.parametrize("alternation", [True, False])
def test_both_prefilters_agree_with_the_reference(
    alternation: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not alternation:
        monkeypatch.setattr(polars_backend, "_alternation", lambda patterns: None)
    catalogue = load()
    compiled = compile_catalogue(catalogue)
    lines = [e.line for s in catalogue.signatures for e in s.examples]
    lines += [c.line for s in catalogue.signatures for c in s.counter_examples]
    lines += [line.upper() for line in lines[:50]]
    for source in ("cloud_logging", "kubelet", "modelarts"):
        rows = rows_frame(lines, source)
        expected = python_backend.match(compiled, rows)
        assert polars_backend.match(compiled, rows).equals(expected)
