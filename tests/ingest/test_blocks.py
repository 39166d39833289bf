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
