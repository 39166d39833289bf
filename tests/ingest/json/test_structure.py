"""Where a stretch of a JSON array stops being JSON (the faults the array framing repairs)."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.ingest.json.structure import ScanState, first_fault, scan, tokens


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


def _reference_scan(block: bytes, state: ScanState) -> tuple[list[int], ScanState]:
    """The structural characters outside strings, byte by byte (the specification). An odd
    run of backslashes escapes the quote after it wherever it is (outside strings valid JSON
    has none), and hides nothing else outside a string."""
    depth, in_string, escaped = state.depth, state.in_string, state.escaped
    found = []
    for position, byte in enumerate(block):
        if byte == 92 and not escaped:
            escaped = True
            continue
        if byte == 34 and not escaped:
            in_string = not in_string
        elif not in_string and byte in b"{[}],":
            found.append(position)
            depth += 1 if byte in b"{[" else -1 if byte in b"}]" else 0
        escaped = False
    # An escape is carried into the next block only inside a string.
    return found, ScanState(depth, in_string, escaped and in_string)


@pytest.mark.parametrize(
    "block",
    [
        b'{"a": "x\\"y", "b": "\\\\", "c": "\\\\\\"", "d": [1]}',
        b'"\\\\\\\\"}, {"e": "\\"',  # runs of backslashes of every parity before a quote
        b'\\", "f": 1}',  # starts inside an escape carried from the last block
        b'{"g": "ends in an escape \\',
        b'{"h": "ends after an escaped backslash \\\\',
        b"\\",
    ],
)
# An escape is carried into a block only inside a string: three states, not four.
@pytest.mark.parametrize(("in_string", "escaped"), [(False, False), (True, False), (True, True)])
def test_scan_finds_the_structure_outside_strings(
    block: bytes, in_string: bool, escaped: bool
) -> None:
    state = ScanState(1, in_string, escaped)
    expected, expected_state = _reference_scan(block, ScanState(1, in_string, escaped))
    positions, _, _ = scan(block, state)
    assert positions.tolist() == expected
    assert state == expected_state


def test_scan_agrees_with_the_byte_by_byte_reading_on_random_blocks() -> None:
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b'"\\{}[],a \n', dtype=np.uint8)
    for _ in range(2000):
        # (An empty block drops an escape carried into it; the framing never scans one.)
        block = bytes(rng.choice(alphabet, size=int(rng.integers(1, 30))))
        for in_string, escaped in ((False, False), (True, False), (True, True)):
            state = ScanState(0, in_string, escaped)
            expected, expected_state = _reference_scan(block, ScanState(0, in_string, escaped))
            assert scan(block, state)[0].tolist() == expected, block
            assert state == expected_state, block
