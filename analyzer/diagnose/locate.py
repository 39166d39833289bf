"""The physical line a citation points at inside a folded record.

A traceback or a multi-line status is one row, cited by default at its first line; the line
that states the error (``XlaRuntimeError: RESOURCE_EXHAUSTED …``) may be many lines further
down. For rows of line-oriented readers, whose message keeps one line per line of the file,
the citation moves to the line where the signature's match starts (or its ``cite`` group),
and the record's first line stays in the citation as context.
"""

from __future__ import annotations

import json
import re

from analyzer.ingest.registry import LINE_READERS
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
    # Only a folded record needs the reference engine (Python's ``regex``): imported here.
    from analyzer.signatures.backends.python import match_start

    start = match_start(signature.regex, message, signature.cite)
    if start is None:
        return line
    return line + message.count("\n", 0, start)


#: The line of a Python traceback that states the exception (``pkg.module.SomeError: …``).
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Fault)\b")
#: A line that states an error in other words.
_ERROR_WORDS = re.compile(
    r"(?i)\b(?:error|fatal|fail|failed|failure|exception|panic|abort|aborted|killed)\b"
)


def lead_line(line: int, reader: str | None, extra: str | None, message: str) -> int:
    """The physical line of a folded record that states its error, for a lead (no signature
    says where): the first line when it says so itself; else a traceback's exception line (the
    last one: the one that ended it), else the first line with an error word; the row's own
    line otherwise."""
    if "\n" not in message or not line_mapped(reader, extra, message):
        return line
    lines = message.split("\n")
    if _ERROR_WORDS.search(lines[0]) and not lines[0].startswith("Traceback"):
        return line
    exceptions = [i for i, text in enumerate(lines) if _EXCEPTION_LINE.match(text.strip())]
    if exceptions:
        return line + exceptions[-1]
    worded = [i for i, text in enumerate(lines) if _ERROR_WORDS.search(text)]
    return line + worded[0] if worded else line
