"""Parse a (small) JSON document and remember where every object starts.

API responses (ModelArts job details, ``gcloud … --format=json`` describe/list output) are one
JSON document whose interesting records are nested: ``status.task_statuses[]``,
``analyzerReports[]``. Rows made from them must cite the line where each record starts, which
the standard ``json`` module cannot tell. This parser returns the same Python values, with
every object and array as :class:`Located` (a dict or list subclass carrying ``offset`` and
``line`` of its opening bracket in the original bytes).

It is meant for documents of megabytes, not for multi-GB exports (those are JSON-lines or
streamed arrays, see :mod:`analyzer.ingest.json.array`).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any, Final

# The C string scanner the json module itself uses (not in its typed public API).
_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009
_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE: Final = re.compile(r"[ \t\r\n]*")
_LITERALS: Final = {"true": True, "false": False, "null": None}
MAX_DEPTH: Final = 256
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class LocatedDict(dict[str, Any]):
    """A JSON object with the position of its ``{``."""

    offset: int = 0
    line: int = 1


class LocatedList(list[Any]):
    """A JSON array with the position of its ``[``."""

    offset: int = 0
    line: int = 1


class DocumentError(ValueError):
    """The document is not valid JSON; ``offset``/``line`` say where parsing stopped."""

    def __init__(self, message: str, offset: int, line: int) -> None:
        super().__init__(f"{message} (line {line})")
        self.offset = offset
        self.line = line


class _Parser:
    def __init__(self, data: bytes) -> None:
        self.text = data.decode("utf-8", "replace")
        self.newlines = [i for i, ch in enumerate(self.text) if ch == "\n"]
        # Byte offset of each character, only needed when the text is not plain ASCII.
        self.ascii = len(data) == len(self.text)
        self._byte_at: list[int] | None = None

    def byte_offset(self, index: int) -> int:
        if self.ascii:
            return index
        if self._byte_at is None:
            offsets = [0]
            total = 0
            for ch in self.text:
                total += len(ch.encode("utf-8", "surrogatepass"))
                offsets.append(total)
            self._byte_at = offsets
        return self._byte_at[index]

    def line_of(self, index: int) -> int:
        return bisect_right(self.newlines, index - 1) + 1 if index else 1

    def fail(self, message: str, index: int) -> DocumentError:
        return DocumentError(
            message, self.byte_offset(min(index, len(self.text))), self.line_of(index)
        )

    def skip(self, index: int) -> int:
        match = _SPACE.match(self.text, index)
        return match.end() if match else index

    def value(self, index: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise self.fail(f"JSON nested deeper than {MAX_DEPTH} levels", index)
        index = self.skip(index)
        if index >= len(self.text):
            raise self.fail("the document ends where a value was expected", index)
        char = self.text[index]
        if char == "{":
            return self.obj(index, depth)
        if char == "[":
            return self.array(index, depth)
        if char == '"':
            try:
                string, end = _scanstring(self.text, index + 1)
                return _no_surrogates(string), end
            except json.JSONDecodeError as exc:
                raise self.fail(f"bad string ({exc.msg})", exc.pos) from None
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, index):
                return literal, index + len(word)
        match = _NUMBER.match(self.text, index)
        if match:
            number = match.group()
            try:
                parsed: Any = float(number) if any(c in number for c in ".eE") else int(number)
            except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
                raise self.fail(f"number of {len(number):,} digits", index) from None
            return parsed, match.end()
        raise self.fail(f"unexpected character {char!r}", index)

    def _place(self, node: LocatedDict | LocatedList, index: int) -> None:
        node.offset = self.byte_offset(index)
        node.line = self.line_of(index)

    def obj(self, index: int, depth: int) -> tuple[LocatedDict, int]:
        node = LocatedDict()
        self._place(node, index)
        index = self.skip(index + 1)
        if self.text.startswith("}", index):
            return node, index + 1
        while True:
            index = self.skip(index)
            if not self.text.startswith('"', index):
                raise self.fail("expected a member name", index)
            try:
                key, index = _scanstring(self.text, index + 1)
            except json.JSONDecodeError as exc:
                raise self.fail(f"bad member name ({exc.msg})", exc.pos) from None
            key = _no_surrogates(key)
            index = self.skip(index)
            if not self.text.startswith(":", index):
                raise self.fail("expected ':'", index)
            node[key], index = self.value(index + 1, depth + 1)
            index = self.skip(index)
            if self.text.startswith(",", index):
                index += 1
                continue
            if self.text.startswith("}", index):
                return node, index + 1
            raise self.fail("expected ',' or '}'", index)

    def array(self, index: int, depth: int) -> tuple[LocatedList, int]:
        node = LocatedList()
        self._place(node, index)
        index = self.skip(index + 1)
        if self.text.startswith("]", index):
            return node, index + 1
        while True:
            item, index = self.value(index, depth + 1)
            node.append(item)
            index = self.skip(index)
            if self.text.startswith(",", index):
                index += 1
                continue
            if self.text.startswith("]", index):
                return node, index + 1
            raise self.fail("expected ',' or ']'", index)


def _no_surrogates(text: str) -> str:
    """A string with the lone surrogates of ``\\udXXX`` escapes replaced by U+FFFD (they
    cannot be encoded as UTF-8, so no column or JSON text downstream could hold them)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def load(data: bytes) -> Any:
    """Parse one JSON document from ``data`` (UTF-8, a BOM is skipped).

    Raises:
        DocumentError: the bytes are not one valid JSON document.
    """
    skipped = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    parser = _Parser(data[skipped:])
    value, end = parser.value(0, 0)
    end = parser.skip(end)
    if end != len(parser.text):
        raise parser.fail("extra data after the JSON document", end)
    if skipped:
        _shift(value, skipped)
    return value


def _shift(value: Any, by: int) -> None:
    if isinstance(value, LocatedDict | LocatedList):
        value.offset += by
        for child in value.values() if isinstance(value, dict) else value:
            _shift(child, by)
