from __future__ import annotations

import datetime as dt

import polars as pl

from analyzer.ingest.folding import mark_records
from analyzer.ingest.grammars import parse_lines


def _records(
    lines: list[str], *, max_lines: int = 500, max_bytes: int = 1 << 20
) -> list[list[str]]:
    text = pl.Series(lines, dtype=pl.String)
    frame = parse_lines(text, anchor=dt.date(2026, 11, 29)).with_columns(text=text)
    marked = mark_records(frame.lazy(), max_lines=max_lines, max_bytes=max_bytes).collect()
    groups: dict[int, list[str]] = {}
    for record, line in marked.select("record", "text").iter_rows():
        if record is not None:
            groups.setdefault(record, []).append(line)
    return list(groups.values())


E = "E1129 18:35:15.123456 1 a.cc:1] step failed"
I = "I1129 18:35:16.000000 1 a.cc:2] next"


def test_traceback_after_error_line_is_one_record() -> None:
    lines = [
        E,
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 240, in <module>',
        "    main()",
        "jaxlib._jax.XlaRuntimeError: UNAVAILABLE: ...",
        I,
    ]
    assert _records(lines) == [lines[:5], [I]]


def test_standalone_traceback_and_chained_exceptions() -> None:
    lines = [
        I,
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in f',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in g',
        "RuntimeError: wrapped",
        "",
        "plain output",
    ]
    assert _records(lines) == [[I], lines[1:10], ["plain output"]]


def test_third_party_exception_names_close_a_traceback() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/app/checkpoint.py", line 88, in commit',
        "    blob.upload_from_file(handle)",
        "google.api_core.exceptions.ServiceUnavailable: 503 POST https://storage.googleapis.com",
        "Note: this line stands alone",
        I,
    ]
    assert _records(lines) == [lines[:4], [lines[4]], [I]]


def test_blank_lines_between_records_are_not_folded() -> None:
    marked = mark_records(
        parse_lines(pl.Series([I, "", "", E]), anchor=dt.date(2026, 1, 1))
        .with_columns(text=pl.Series([I, "", "", E]))
        .lazy(),
        max_lines=500,
        max_bytes=1 << 20,
    ).collect()
    assert marked["is_blank"].to_list() == [False, True, True, False]
    assert marked["record"].to_list()[1:3] == [None, None]


def test_stack_trace_block_and_klog_multiline_value() -> None:
    lines = [
        "F1129 18:35:15.123462 1 tpu.cc:9] fatal",
        "*** Begin stack trace ***",
        "tsl::CurrentStackTrace()",
        "xla::Foo()",
        "*** End stack trace ***",
        'I1129 18:36:10.001122 2218 prober.go:107] "Probe failed" output=<',
        "\tcat: can't open '/tmp/healthy': No such file or directory",
        " >",
        I,
    ]
    assert _records(lines) == [lines[:5], lines[5:8], [I]]


def test_caps_split_runaway_records() -> None:
    lines = [E] + [f"  frame {i}" for i in range(9)]
    records = _records(lines, max_lines=4)
    assert [len(r) for r in records] == [4, 4, 2]
    assert [line for record in records for line in record] == lines
    # 41 + 103 + 103 bytes fit in 250; the fourth line starts a new piece.
    by_bytes = _records([E] + ["  " + "x" * 100] * 4, max_bytes=250)
    assert [len(r) for r in by_bytes] == [3, 2]
