"""Byte spans of a decoded block as Arrow strings."""

from __future__ import annotations

import numpy as np

from analyzer.ingest.blocks import spans_to_strings


def test_spans_to_strings_exact_and_trimmed_agree() -> None:
    data = b"ab\r\ncd\nef"
    starts = np.array([0, 4, 7])
    ends = np.array([2, 6, 9])
    trimmed = spans_to_strings(data, starts, ends, exact=False)
    exact = spans_to_strings(data, starts, ends, exact=True)
    assert trimmed.to_pylist() == exact.to_pylist() == ["ab", "cd", "ef"]


def test_a_span_ending_in_trim_characters_reads_the_same_on_both_paths() -> None:
    """``abc\\r\\r\\n`` (Python writing ``\\r\\n`` in text mode on Windows) read ``abc`` in an
    ordinary block but ``abc\\r`` in a block packed exactly (one holding a cut line)."""
    data = b"abc\r\r\nxyz\n"
    starts = np.array([0, 6])
    ends = np.array([4, 9])  # the first span keeps the CR before its CRLF
    trimmed = spans_to_strings(data, starts, ends, exact=False)
    exact = spans_to_strings(data, starts, ends, exact=True)
    assert trimmed.to_pylist() == exact.to_pylist() == ["abc", "xyz"]
