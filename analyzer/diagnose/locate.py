"""The physical line a citation points at inside a folded record.

A traceback or a multi-line status is one row, cited by default at its first line; the line
that states the error (``XlaRuntimeError: RESOURCE_EXHAUSTED …``) may be many lines further
down. For rows of line-oriented readers, whose message keeps one line per line of the file,
the citation moves to the line where the signature's match starts (or its ``cite`` group),
and the record's first line stays in the citation as context.
"""

from __future__ import annotations

import json

from analyzer.ingest.registry import LINE_READERS
from analyzer.signatures.backends.python import match_start
from analyzer.signatures.model import Signature


def line_mapped(reader: str | None, extra: str | None, message: str) -> bool:
    """Whether the row's message lines are the file's lines, one for one: a line reader's
    row whose message has as many lines as the record it was folded from."""
    if reader is None or reader.split(".", 1)[0] not in LINE_READERS:
        return False
    newlines = message.count("\n")
    if newlines == 0:
        return True
    try:
        lines = json.loads(extra or "{}").get("lines")
    except ValueError:
        return False
    return isinstance(lines, int) and lines == newlines + 1


def cited_line(
    line: int,
    reader: str | None,
    extra: str | None,
    message: str,
    signature: Signature | None,
) -> int:
    """The physical line of the row at ``line`` that states what ``signature`` matched (the
    row's own line when the record is one line, is not line-mapped, or nothing matches)."""
    if signature is None or "\n" not in message or not line_mapped(reader, extra, message):
        return line
    start = match_start(signature.regex, message, signature.cite)
    if start is None:
        return line
    return line + message.count("\n", 0, start)
