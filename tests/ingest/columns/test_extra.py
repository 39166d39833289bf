"""The ``extra`` column: compact JSON of the fields beyond the schema."""

from __future__ import annotations

import json

import polars as pl

from analyzer.ingest.columns.extra import compact_json

# -- shared code: what these samples showed (see the report) ------------------------------


def test_compact_json_members_are_spliced() -> None:
    frame = pl.DataFrame({"a": ["x"], "m": ['{"k":1,"j":"y"}']})
    got = frame.select(
        compact_json([("a", pl.col("a"), "text"), ("attrs", pl.col("m"), "members")])
    ).item()
    assert json.loads(got) == {"a": "x", "k": 1, "j": "y"}
