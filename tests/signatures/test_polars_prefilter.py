"""The polars backend's prefilter: one alternation of every anchor, case-sensitive but for the
anchors of case-insensitive signatures, with ``str.contains_any`` as the fallback when Rust
refuses the alternation; both give the same matches as the reference over every example of
the catalogue."""

from __future__ import annotations

import polars as pl
import pytest

from analyzer.signatures.backends import polars as polars_backend
from analyzer.signatures.backends import python as python_backend
from analyzer.signatures.catalog import load
from analyzer.signatures.compile import Compiled, CompiledCatalogue, compile_catalogue
from analyzer.signatures.examples import rows_frame


def test_the_alternation_escapes_every_anchor() -> None:
    regex = polars_backend._alternation(("a.b", "x|y", "[z]", "{1}", "-~#&"), ("k.p",))
    assert regex == r"a\.b|x\|y|\[z\]|\{1\}|\-\~\#\&|(?i:k\.p)"


def test_the_alternation_of_one_kind_only() -> None:
    assert polars_backend._alternation(("a",), ()) == "a"
    assert polars_backend._alternation((), ("b",)) == "(?i:b)"


def _signature(code: str, regex: str, anchors: tuple[str, ...], caseless: bool) -> Compiled:
    return Compiled(code, "root", ("text",), anchors, caseless, regex, ())


@pytest.mark.parametrize("alternation", [True, False])
@pytest.mark.parametrize(
    ("signatures", "kept"),
    [
        # Both kinds: a case-sensitive anchor only as written, a caseless one in any case.
        (
            [("T-1", "Widget", ("Widget",), False), ("T-2", "(?i)gadget", ("Gadget",), True)],
            [True, False, True, True, False],
        ),
        # Case-sensitive anchors only.
        ([("T-1", "Widget", ("Widget",), False)], [True, False, False, False, False]),
        # Caseless anchors only.
        ([("T-2", "(?i)gadget", ("Gadget",), True)], [False, False, True, True, False]),
    ],
)
def test_the_prefilter_keeps_what_the_contract_could_match(
    alternation: bool,
    signatures: list[tuple[str, str, tuple[str, ...], bool]],
    kept: list[bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not alternation:
        monkeypatch.setattr(polars_backend, "_alternation", lambda *patterns: None)
    catalogue = CompiledCatalogue(tuple(_signature(*s) for s in signatures))
    plan = polars_backend._plan(catalogue)
    messages = ["a Widget", "a WIDGET", "a gadget", "a GADGET", "nothing"]
    frame = pl.DataFrame({"message": messages})
    assert frame.select(polars_backend._prefilter(plan)).to_series().to_list() == kept


@pytest.mark.parametrize("alternation", [True, False])
def test_both_prefilters_agree_with_the_reference(
    alternation: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not alternation:
        monkeypatch.setattr(polars_backend, "_alternation", lambda *patterns: None)
    catalogue = load()
    compiled = compile_catalogue(catalogue)
    lines = [e.line for s in catalogue.signatures for e in s.examples]
    lines += [c.line for s in catalogue.signatures for c in s.counter_examples]
    lines += [line.upper() for line in lines[:50]]
    lines += [line.lower() for line in lines[:50]]
    for source in ("cloud_logging", "kubelet", "modelarts"):
        rows = rows_frame(lines, source)
        expected = python_backend.match(compiled, rows)
        assert polars_backend.match(compiled, rows).equals(expected)
