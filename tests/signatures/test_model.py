"""The signature model refuses what the three regex engines would not agree on."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
from pydantic import ValidationError

from analyzer.signatures.model import Signature
from tests.signatures.conftest import signature_text


def _signature(**kwargs: Any) -> Signature:
    return Signature.model_validate(tomllib.loads(signature_text(**kwargs)))


def test_a_valid_signature() -> None:
    signature = _signature(culprit="capture:chip")
    assert signature.groups == ("chip",)
    assert signature.culprit_group == "chip"


@pytest.mark.parametrize(
    ("regex", "problem"),
    [
        (r"widget failed(?= on)", "look-around"),
        (r"widget failed(?<!x)", "look-around"),
        (r"(widget) failed \1", "back-reference"),
        (r"widget (?>failed)", "atomic group"),
        (r"widget failed a++", "possessive quantifier"),
        (r"widget failed on chip (?<chip>\d+)", "write (?P<name>...)"),
        (r"widget failed\Z", "engines disagree"),
        (r"(?x) widget failed", "verbose flag"),
        (r"widget \p{L} failed", "Unicode property class"),
        (r"widget failed on chip (?P<Chip>\d+)", "not snake_case"),
    ],
)
def test_unportable_regexes_are_refused(regex: str, problem: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(problem)):
        _signature(regex=regex)


def test_the_culprit_capture_must_exist() -> None:
    with pytest.raises(ValidationError, match="culprit names capture 'task'"):
        _signature(culprit="capture:task")


@pytest.mark.parametrize("rule", ["host", "capture:", "capture:Task", "emitter,none"])
def test_culprit_rules(rule: str) -> None:
    with pytest.raises(ValidationError, match="culprit is"):
        _signature(culprit=rule)


def test_example_captures_must_be_groups() -> None:
    with pytest.raises(ValidationError, match=r"example captures \['chip'\]"):
        _signature(regex="widget failed on chip [0-9]+")


def test_unknown_fields_and_families_are_refused() -> None:
    data = tomllib.loads(signature_text())
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Signature.model_validate({**data, "colour": "red"})
    with pytest.raises(ValidationError, match="unknown family 'gpu'"):
        Signature.model_validate({**data, "family": "gpu"})
