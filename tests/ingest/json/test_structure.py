"""Where a stretch of a JSON array stops being JSON (the faults the array framing repairs)."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.ingest.json.structure import first_fault, tokens


def _fault(data: bytes, depth: int = 1, *, objects: bool = False) -> tuple[str, int, int] | None:
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    fault = first_fault(data, tokens(data, depth), newlines, objects=objects)
    return None if fault is None else (fault.kind, fault.position, fault.start)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": [1, {"b": "}"}, []], "c": {}}, {"d": "x\\\\"}, ',
        b'{"a": 1}\n, "junk between elements", 2, {"b": 2}',
        b'{"a": "cut inside a str',  # a cut is no fault: the next block goes on
        b'{"a": {"b": [1, 2',
    ],
)
def test_well_formed_stretches_have_no_fault(data: bytes) -> None:
    assert _fault(data) is None


@pytest.mark.parametrize(
    ("data", "kind", "at", "start"),
    [
        (b'{"a": 1}}, {"b": 2}', "stray", 8, 8),
        (b'{"a": 1}] {"b": 2}', "reopen", 10, 10),
        (b'{"a": "x}, {"b": "y"}', "element", 12, 0),  # text after a string
        (b'{"a": "x\n  }, {"b": 1}', "element", 8, 0),  # a line break inside a string
        (b'{"a": "x", {"b": 1}', "element", 11, 0),  # "{" after "," in an object
        (b'{"a": "x" {"b": 1}', "element", 8, 0),  # text after a string: "{"
        (b'{"a": [1}, {"b": 1}', "element", 8, 0),  # "}" closes a "["
    ],
)
def test_faults_and_where_they_show(data: bytes, kind: str, at: int, start: int) -> None:
    depth = 0 if kind == "reopen" else 1
    if kind == "reopen":
        data = b"[" + data
        at, start = at + 1, start + 1
    assert _fault(data, depth) == (kind, at, start)


def test_a_stretch_of_strings_alone_is_checked_without_structure() -> None:
    """Found by the long fuzz run: the pending bytes after the last object of pasted entries
    held strings but no bracket or comma, and the depth lookup indexed an empty array."""
    assert _fault(b'\n"junk\nmore"\n', objects=True) == ("element", 6, 1)
    assert _fault(b'"a" "b"') is None  # strings between elements: junk, quarantined as such
    assert _fault(b'"a" "b"', depth=2) == ("element", 2, 2)
