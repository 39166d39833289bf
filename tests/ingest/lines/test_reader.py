"""The numpy columns of a line reader's frame, made without polars' numpy path."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analyzer.ingest.lines.reader import _series

ARRAYS = [
    np.arange(5, 12, dtype=np.int32),
    np.array([0, 7, 19, 2**40], dtype=np.int64),
    np.array([True, False, False, True, True, False, True, False, True], dtype=np.bool_),
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.bool_),
    np.arange(20, dtype=np.int64)[3:17],  # a view into a larger buffer
    np.arange(20, dtype=np.int32)[::3],  # not contiguous
]


@pytest.mark.parametrize("values", ARRAYS, ids=lambda a: f"{a.dtype}-{a.size}")
def test_a_column_is_the_series_polars_makes_of_the_array(values: np.ndarray) -> None:
    made = _series(values, "x")
    assert made.name == "x"
    assert made.dtype == pl.Series(values).dtype
    assert made.to_list() == pl.Series(values).to_list()
    assert made.null_count() == 0
