"""The on-disk cache of parsed signature files: used by a new process, keyed by content,
never a reason to fail."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from analyzer.signatures import catalog, parsed
from analyzer.signatures.catalog import load
from tests.signatures.conftest import signature_text


def _fresh_process() -> None:
    """Forget what this process parsed, as a new process would."""
    catalog._parsed_files.cache_clear()
    catalog._VALIDATED.clear()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv(parsed.CACHE_ENV, str(folder))
    _fresh_process()
    yield folder
    _fresh_process()


def _no_toml(text: str) -> None:
    raise AssertionError("parsed again although the cache holds this text")


def test_a_new_process_reads_the_packaged_catalogue_from_the_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load()
    stored = json.loads((cache / parsed.CACHE_FILE).read_text())
    assert len(stored) == len(first.signatures)
    _fresh_process()
    monkeypatch.setattr("tomllib.loads", _no_toml)
    assert load().signatures == first.signatures


def test_an_edited_file_is_parsed_again(cache: Path, folder: Callable[..., Path]) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    assert load([extra], builtin=False).signatures[0].regex.endswith(r"(?P<chip>\d+)")
    path = extra / "coordination" / "test-widget-failed.toml"
    path.write_text(signature_text(regex=r"widget failed on chip (?P<chip>\w+)"))
    _fresh_process()
    assert load([extra], builtin=False).signatures[0].regex.endswith(r"(?P<chip>\w+)")


@pytest.mark.parametrize("damage", ["", "{not json", "[1, 2]", '{"abc": 3}'])
def test_a_damaged_cache_is_ignored_and_rewritten(
    cache: Path, folder: Callable[..., Path], damage: str
) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    cache.mkdir()
    (cache / parsed.CACHE_FILE).write_text(damage)
    assert [s.code for s in load([extra], builtin=False).signatures] == ["COORD-T-001"]
    (stored,) = json.loads((cache / parsed.CACHE_FILE).read_text()).values()
    assert stored["code"] == "COORD-T-001"


def test_a_cache_that_cannot_be_written_costs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Callable[..., Path]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(parsed.CACHE_ENV, str(blocker / "cache"))  # below a file: mkdir fails
    _fresh_process()
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    assert [s.code for s in load([extra], builtin=False).signatures] == ["COORD-T-001"]
    _fresh_process()


def test_off_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Callable[..., Path]
) -> None:
    monkeypatch.setenv(parsed.CACHE_ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _fresh_process()
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    load([extra], builtin=False)
    assert parsed.cache_dir() is None
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()
    _fresh_process()


def test_a_table_asked_with_its_digest_is_the_table_of_its_text(tmp_path: Path) -> None:
    files = parsed.ParsedFiles(tmp_path)
    text = signature_text()
    assert files.table(text, parsed.digest(text)) == files.table(text)
    files.save()
    again = parsed.ParsedFiles(tmp_path)
    assert again.table(text, parsed.digest(text)) == files.table(text)
