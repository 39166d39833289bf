"""Helpers to write small signature folders for tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

#: A valid signature file; tests replace fields to make it wrong.
VALID = """\
code = "COORD-T-{number:03d}"
name = "{name}"
title = "A test signature"
family = "{family}"
knowledge = "jax-coordination-heartbeat-timeout"
sources = ["cloud_logging", "text"]
role = "root"
scope = "host"
culprit = "{culprit}"
severity = "error"
anchors = ["widget failed"]
regex = '''{regex}'''

[[examples]]
line = "the widget failed on chip 7"
captures = {{ chip = "7" }}

[[counter_examples]]
line = "the widget failed on nothing"
why = "no chip"
"""


def signature_text(
    *,
    number: int = 1,
    name: str = "test-widget-failed",
    family: str = "coordination",
    culprit: str = "emitter",
    regex: str = r"widget failed on chip (?P<chip>\d+)",
) -> str:
    return VALID.format(number=number, name=name, family=family, culprit=culprit, regex=regex)


@pytest.fixture
def folder(tmp_path: Path) -> Callable[..., Path]:
    """Write ``{relative path: text}`` into a fresh signature folder and return it."""

    def write(files: dict[str, str]) -> Path:
        root = tmp_path / "extra"
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return write
