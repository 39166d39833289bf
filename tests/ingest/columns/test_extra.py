"""The ``extra`` column: compact JSON of the fields beyond the schema."""

from __future__ import annotations

import json

import polars as pl

from analyzer.ingest.columns.extra import append_members, compact_json, with_members

# -- shared code: what these samples showed (see the report) ------------------------------


def test_compact_json_members_are_spliced() -> None:
    frame = pl.DataFrame({"a": ["x"], "m": ['{"k":1,"j":"y"}']})
    got = frame.select(
        compact_json([("a", pl.col("a"), "text"), ("attrs", pl.col("m"), "members")])
    ).item()
    assert json.loads(got) == {"a": "x", "k": 1, "j": "y"}


def test_compact_json_is_null_when_no_field_is_set() -> None:
    frame = pl.DataFrame(
        {"a": [None, "x"], "n": [None, None]}, schema={"a": pl.String, "n": pl.Int64}
    )
    got = frame.select(compact_json([("a", pl.col("a"), "text"), ("n", pl.col("n"), "number")]))
    assert got.to_series().to_list() == [None, '{"a":"x"}']


def test_compact_json_text_is_escaped_and_tokens_are_quoted() -> None:
    frame = pl.DataFrame({"t": ['say "hi"\n'], "k": ["abc"], "b": [True], "r": ['{"x":1}']})
    got = frame.select(
        compact_json(
            [
                ("t", pl.col("t"), "text"),
                ("k", pl.col("k"), "token"),
                ("b", pl.col("b"), "bool"),
                ("r", pl.col("r"), "raw"),
            ]
        )
    ).item()
    assert got == '{"t":"say \\"hi\\"\\n","k":"abc","b":true,"r":{"x":1}}'
    assert json.loads(got) == {"t": 'say "hi"\n', "k": "abc", "b": True, "r": {"x": 1}}


def test_compact_json_raw_members_are_left_out_where_null_first_middle_or_alone() -> None:
    # A raw value is joined as two parts (key, value): a null value must drop its key too,
    # whether it comes first, between other members, or is the only field set.
    frame = pl.DataFrame(
        {
            "r": [None, '{"x":1}', None, None, "[]"],
            "t": ["a", None, None, "b", None],
            "s": ['{"y":2}', '{"z":3}', None, None, None],
        }
    )
    got = frame.select(
        compact_json(
            [
                ("r", pl.col("r"), "raw"),
                ("t", pl.col("t"), "text"),
                ("s", pl.col("s"), "raw"),
            ]
        )
    )
    assert got.to_series().to_list() == [
        '{"t":"a","s":{"y":2}}',
        '{"r":{"x":1},"s":{"z":3}}',
        None,
        '{"t":"b"}',
        '{"r":[]}',
    ]


def test_append_members_covers_every_case_of_extra_and_fields() -> None:
    frame = pl.DataFrame(
        {"extra": [None, None, '{"a":1}', '{"a":1}'], "v": [None, "x", None, "y"]},
        schema={"extra": pl.String, "v": pl.String},
    )
    got = with_members(frame, [("v", pl.col("v"), "text")], "more").select(
        append_members(pl.col("extra"), pl.col("more"))
    )
    assert got.to_series().to_list() == [None, '{"v":"x"}', '{"a":1}', '{"a":1,"v":"y"}']


def test_with_members_computes_each_value_once_and_keeps_the_frame() -> None:
    frame = pl.DataFrame({"m": ["pid=7", "none"]})
    value = pl.col("m").str.extract(r"pid=(\d+)", 1)
    got = with_members(frame, [("pid", value, "token"), ("m", pl.col("m"), "text")], "more")
    assert got.columns == ["m", "more"]
    assert got["more"].to_list() == [',"pid":"7","m":"pid=7"', ',"m":"none"']
