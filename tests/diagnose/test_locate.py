"""A citation points at the physical line of a folded record that states the match."""

from __future__ import annotations

import json

from analyzer.diagnose.locate import cited_line, line_mapped
from analyzer.signatures.catalog import load

RECORD = "\n".join(
    [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 9, in <module>',
        "    main()",
        "RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use",
    ]
)


def _signature(code: str):  # type: ignore[no-untyped-def]
    return next(s for s in load().signatures if s.code == code)


def test_a_traceback_is_cited_at_its_exception_line() -> None:
    extra = json.dumps({"lines": 4})
    line = cited_line(40, "text.plain", extra, RECORD, _signature("PY-TB-001"))
    assert line == 43


def test_a_one_line_row_keeps_its_line() -> None:
    assert cited_line(7, "text.absl", None, "one line", _signature("PY-TB-001")) == 7


def test_rows_of_json_readers_keep_the_line_where_their_entry_starts() -> None:
    extra = json.dumps({"lines": 4})
    assert cited_line(12, "cloud_logging.jsonl", extra, RECORD, _signature("PY-TB-001")) == 12


def test_a_record_whose_lines_were_joined_is_not_line_mapped() -> None:
    # A CRI partial line joins the next without a newline: lines and newlines disagree.
    assert not line_mapped("text.plain", json.dumps({"lines": 5}), RECORD)
    assert line_mapped("kubelet.klog", json.dumps({"lines": 4}), RECORD)
    assert not line_mapped(None, None, RECORD)
    assert (
        cited_line(40, "text.plain", json.dumps({"lines": 5}), RECORD, _signature("PY-TB-001"))
        == 40
    )


def test_without_a_match_the_row_keeps_its_line() -> None:
    extra = json.dumps({"lines": 4})
    assert cited_line(40, "text.plain", extra, "a\nb\nc\nd", _signature("PY-TB-001")) == 40
    assert cited_line(40, "text.plain", extra, RECORD, None) == 40
