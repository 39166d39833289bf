"""JSON-lines framing: which lines are blank."""

from __future__ import annotations

import io

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.json.fields import _blank_lines
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
