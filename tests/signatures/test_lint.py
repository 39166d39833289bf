"""``culprit signatures lint``: the packaged catalogue is clean, and each kind of problem in a
signature folder is found with its file and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from analyzer.signatures.lint import lint
from tests.signatures.conftest import signature_text


def _messages(extra: Path) -> list[str]:
    return [str(problem) for problem in lint([extra], builtin=False)]


def test_the_packaged_catalogue_is_clean() -> None:
    assert [str(p) for p in lint()] == []


def test_a_clean_extra_folder(folder: Callable[..., Path]) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    assert _messages(extra) == []


def test_examples_that_do_not_hold_are_found_at_their_line(folder: Callable[..., Path]) -> None:
    text = signature_text(regex=r"widget failed on chip (?P<chip>[0-9]+)")
    broken = (
        text.replace('line = "the widget failed on chip 7"', 'line = "the widget broke on chip 7"')
        + '\n[[examples]]\nline = "widget failed on chip 8"\ncaptures = { chip = "9" }\n'
        + '\n[[counter_examples]]\nline = "widget failed on chip 10"\n'
    )
    extra = folder({"coordination/test-widget-failed.toml": broken})
    messages = _messages(extra)
    path = extra / "coordination" / "test-widget-failed.toml"
    assert f"{path}:14: example 1 contains none of the anchors" in messages
    assert f"{path}:14: example 1 does not match (python)" in messages
    assert (
        f"{path}:22: example 2 captures {{'chip': '8'}}, expected {{'chip': '9'}} (python)"
        in messages
    )
    assert f"{path}:26: counter-example 2 matches (python)" in messages


def test_a_regex_that_does_not_compile(folder: Callable[..., Path]) -> None:
    extra = folder(
        {
            "coordination/test-widget-failed.toml": signature_text(
                regex="widget failed on chip (?P<chip>[0-9]+"
            )
        }
    )
    messages = _messages(extra)
    assert len(messages) == 1
    assert "test-widget-failed.toml:12: regex does not compile in python regex" in messages[0]


def test_a_missing_knowledge_page(folder: Callable[..., Path]) -> None:
    text = signature_text().replace(
        'knowledge = "jax-coordination-heartbeat-timeout"', 'knowledge = "no-such-page"'
    )
    extra = folder({"coordination/test-widget-failed.toml": text})
    assert _messages(extra) == [
        f"{extra / 'coordination' / 'test-widget-failed.toml'}:5: "
        "knowledge page no-such-page.md does not exist"
    ]
