"""Where a JSON array goes on after a malformed element.

When :func:`analyzer.ingest.json.structure.first_fault` finds an element broken (a missing
``}``, a ``"`` too few), the array framing (:mod:`analyzer.ingest.json.array`) quarantines that
element and takes the array up again at the start of the next element, found here without
trusting the depth or string state, which the damage has thrown off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from analyzer.ingest.base import ReadContext

#: A compact array's next element: a ``{`` after a ``,``, a ``[`` or a ``}`` (no comma).
_COMPACT_START: Final = re.compile(rb"[,\[}][ \t\r\n]*\{")
#: The first key of an object.
_FIRST_KEY: Final = re.compile(rb'\{[ \t\r\n]*("(?:[^"\\\n]|\\.){1,200}")[ \t\r\n]*:')
#: How far past a fault the next element is looked for before the last resort
#: (:meth:`Layout.next_start`); also how far back a start may begin that a block boundary cut.
RESYNC_WINDOW: Final = 64 << 10


def first_key(data: bytes, start: int) -> bytes | None:
    """The first key of the object at ``start`` (with its quotes), if it reads as one."""
    match = _FIRST_KEY.match(data, start)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Layout:
    """What the start of the next element looks like after a malformed one.

    ``indent``: how the elements' lines start in pretty-printed output (gcloud's two spaces);
    nested objects are indented deeper and JSON strings hold no line break, so a ``{`` first
    on its line with exactly this indentation starts an element. ``key``: in a compact array,
    the malformed element's first key; the elements of a log export are one kind of object,
    so the next ``{`` with the same first key starts the next element, wherever the damage
    hides it (inside a string the missing ``"`` opened, say). The last resort, once
    :data:`RESYNC_WINDOW` bytes past the fault are in view without either: the first ``{``
    after a separator at or after the fault.
    """

    indent: bytes | None
    key: bytes | None

    def next_start(self, data: bytes, start: int, fault: int, *, complete: bool) -> int | None:
        """Where the element after the malformed one that starts at ``start`` begins, or None
        if not in ``data`` (``complete``: the data reaches far enough for the last resort)."""
        if self.indent is not None:
            line_start = data.rfind(b"\n", 0, fault + 1)
            pattern = re.compile(b"\n" + re.escape(self.indent) + b"\\{")
            for match in pattern.finditer(data, max(line_start, 0)):
                if match.end() - 1 > start:
                    return match.end() - 1
            return None
        if self.key is not None:
            same = re.compile(rb"\{[ \t\r\n]*" + re.escape(self.key) + rb"[ \t\r\n]*:")
            found = same.search(data, start + 1)
            if found:
                return found.start()
        if not complete:
            return None
        for match in _COMPACT_START.finditer(data, max(start + 1, fault - RESYNC_WINDOW, 0)):
            if match.end() - 1 >= fault:
                return match.end() - 1
        return None


@dataclass
class Resync:
    """A malformed element with no next element in sight: followed, without storing it, to
    where the next element starts."""

    offset: int
    line: int
    head: bytes
    reason: str
    layout: Layout
    #: The last bytes seen (no element starts in them), where the start of the next element
    #: may begin, and their offset and line in the file.
    tail: bytes
    tail_offset: int
    tail_line: int

    def feed(self, block: bytes) -> tuple[bytes, int, int] | None:
        """The stream from the start of the next element on, with its offset and line, or
        None while it is not in sight."""
        text = self.tail + block
        found = self.layout.next_start(text, -1, 0, complete=True)
        if found is None:
            keep = len(text) - min(len(text), RESYNC_WINDOW)
            self.tail_line += text.count(b"\n", 0, keep)
            self.tail_offset += keep
            self.tail = text[keep:]
            return None
        return text[found:], self.tail_offset + found, self.tail_line + text.count(b"\n", 0, found)

    def drop(self, ctx: ReadContext, next_line: int | None) -> None:
        """Quarantine the malformed element (``next_line``: where reading went on)."""
        if next_line is None:
            where = "the file ends before another element starts"
        else:
            where = f"read again from the next element, line {next_line}"
        ctx.counts.records += 1
        ctx.drop(self.line, self.offset, f"{self.reason}; {where}", self.head)
