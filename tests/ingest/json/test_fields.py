"""JSON-lines framing (which lines are blank) and the extraction of fields from records."""

from __future__ import annotations

import io

import duckdb
import numpy as np
import polars as pl
import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.json.fields import FieldSpec, _blank_lines, _query, connection, extract
from analyzer.ingest.lines.framing import iter_line_chunks


def test_blank_json_lines_are_those_strip_empties() -> None:
    """The cheap blank-line test agrees with stripping every line, Unicode spaces included."""
    data = '{}\n\n   \n\t\n{"a":1}\n\u00a0\u3000\n \x1c\nx\n\r\n'.encode()
    ctx = ReadContext("x", ReadOptions())
    chunk = next(iter_line_chunks(io.BytesIO(data), ctx))
    text, _ = chunk.text()
    expected = (text.str.strip_chars().str.len_bytes() == 0).to_list()
    assert _blank_lines(chunk, text).tolist() == expected
    assert expected == [False, True, True, True, False, True, False, False, True]


_SPEC = FieldSpec({"a": ["$.a"], "b": ["$.x.b", "$.b"]}, {"x": ["$.x"]})


def test_extract_keeps_objects_and_quarantines_the_rest_with_reasons() -> None:
    """Validity and type are asked of DuckDB only for records whose extraction failed: the
    rows and the reasons are those DuckDB's json_valid/json_type give for every record."""
    records = {
        '{"a":"1","x":{"b": 2}}': "row",
        ' \t{"a":"2"}\r': "row",
        '{"a":3,}': "row",  # DuckDB's parser takes a trailing comma
        '{"b":"4","a":null}': "row",
        "[1,2]": "not an object",
        '"text"': "not an object",
        "42": "not an object",
        "null": "not an object",
        "\ufeff{}": "not valid",
        "\x0b{}": "not valid",
        '{"a":1} junk': "not valid",
        '{"a":': "not valid",
        "{'a':1}": "not valid",
        '{"a":"\\ud800"}': "not valid",
    }
    texts = pl.Series("text", list(records))
    ctx = ReadContext("x", ReadOptions())
    lines = np.arange(1, len(records) + 1, dtype=np.int32)
    offsets = np.arange(len(records), dtype=np.int64) * 100
    frame = extract(_SPEC, texts, lines, offsets, ctx, "thing")
    expected_rows = [i + 1 for i, what in enumerate(records.values()) if what == "row"]
    assert frame["line"].to_list() == expected_rows
    assert frame["a"].to_list() == ["1", "2", "3", None]
    assert frame["b"].to_list() == ["2", None, None, "4"]
    assert frame["raw_x"].to_list() == ['{"b":2}', None, None, None]
    assert frame.columns[:3] == ["entry", "line", "offset"]
    reasons = {issue.line: issue.reason for issue in ctx.issues}
    for line, what in enumerate(records.values(), start=1):
        if what == "not valid":
            assert reasons.pop(line) == "not valid JSON"
        elif what == "not an object":
            assert reasons.pop(line) == "JSON value is not an object (thing)"
    assert reasons == {}
    # Nothing lost: every record is a row or a quarantine entry.
    assert frame.height + ctx.counts.dropped == len(records)


def test_extract_of_only_good_records_keeps_them_all() -> None:
    texts = pl.Series("text", ['{"a":"1"}', '{"x":{"b":"2"}}'])
    ctx = ReadContext("x", ReadOptions())
    lines = np.array([1, 2], dtype=np.int32)
    frame = extract(_SPEC, texts, lines, np.array([0, 10], dtype=np.int64), ctx, "thing")
    assert frame.select("line", "offset", "a", "b").rows() == [
        (1, 0, "1", None),
        (2, 10, None, "2"),
    ]
    assert ctx.issues == []


#: Records every extraction parses: objects of every shape, and JSON values that are not.
_PARSED = [
    '{"a":"1","x":{"b": 2}}',
    ' \t{"a":"2"}\r',
    '{"a":3,}',
    '{"b":"4","a":null}',
    '{"a":"\\u00e9\\n\\"q\\"","x":{"b":[1,{"c":"\\u2028"}],"d":1.50e3,"e":"\\/"}}',
    '{"a":{"n":1},"x":[]}',
    '{"a":true,"x":"text"}',
    '{"x":{}}',
    "[1,2]",
    '"text"',
    "42",
    "null",
]


def test_unguarded_extraction_gives_what_the_guarded_one_gives() -> None:
    """The fast query (no ``try``, sub-objects without a cast) returns exactly what the
    guarded query returns wherever it runs at all."""
    texts = pl.Series("text", _PARSED)
    fast = _query(_SPEC._fast_sql, texts)
    guarded = _query(_SPEC._sql, texts)
    assert fast.schema == guarded.schema
    assert fast.equals(guarded)


def test_a_record_that_is_not_json_falls_back_to_the_guarded_extraction() -> None:
    """One bad record fails the fast query for its whole chunk; the chunk is extracted again,
    guarded, and its good records come out as they do without the bad one."""
    bad = '{"a":'
    with pytest.raises(duckdb.Error):
        _query(_SPEC._fast_sql, pl.Series("text", [*_PARSED, bad]))
    objects = [text for text in _PARSED if text.lstrip(" \t").startswith("{")]
    rows = []
    for texts in (objects, [objects[0], bad, *objects[1:]]):
        ctx = ReadContext("x", ReadOptions())
        lines = np.arange(1, len(texts) + 1, dtype=np.int32)
        offsets = np.zeros(len(texts), dtype=np.int64)
        frame = extract(_SPEC, pl.Series("text", texts), lines, offsets, ctx, "thing")
        assert frame.height + ctx.counts.dropped == len(texts)
        rows.append(frame.drop("line", "offset"))
        if bad in texts:
            assert [issue.reason for issue in ctx.issues] == ["not valid JSON"]
    assert rows[0].equals(rows[1])


def test_string_views_change_nothing_in_what_is_extracted() -> None:
    """The connection hands strings over as Arrow string views (no copy into another layout):
    the fields are those of DuckDB's default large strings."""
    texts = pl.Series("text", _PARSED)
    db = connection()
    views = _query(_SPEC._fast_sql, texts)
    db.execute("SET produce_arrow_string_view = false")
    try:
        plain = _query(_SPEC._fast_sql, texts)
    finally:
        db.execute("SET produce_arrow_string_view = true")
    assert views.schema == plain.schema
    assert views.equals(plain)
