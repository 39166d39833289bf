"""A member's decoded bytes as UTF-8 text: UTF-16 re-encoded, leading NUL bytes skipped.

Every reader works on UTF-8 bytes. Two kinds of text files would otherwise be refused as
binary, because their head holds NUL bytes:

* **UTF-16 with a byte-order mark** (``FF FE`` or ``FE FF``; Windows exports, PowerShell's
  ``Out-File``): re-encoded to UTF-8 as it streams. Line numbers are the file's own lines;
  byte offsets count the bytes of the UTF-8 text the file decodes to (from the first character
  after the BOM), not the bytes of the file. A lone surrogate is passed on as the bytes
  ``ED A0 80``-style UTF-8 would give it, which the framing finds invalid and replaces by
  U+FFFD with a note, as for any invalid UTF-8; an odd last byte likewise.
* **NUL bytes at the very start** (a live log truncated in place by ``copytruncate``
  rotation: the writer goes on at its old offset and the file begins with a hole of NULs):
  skipped, however many, and counted in :attr:`TextStage.skipped` so that offsets still point
  at the file's own bytes; the ingest notes how many were skipped. What follows is sniffed as
  usual: a file that still holds NULs after them is binary.

A UTF-16 BOM in front of text that is plainly UTF-8 (no NUL byte and valid UTF-8 after it) is
not taken for UTF-16: those two bytes are invalid UTF-8 in the first line, repaired as such.
"""

from __future__ import annotations

import codecs
from typing import Final

from analyzer.streams import Content, CorruptStreamError, ExpansionBudget, Readable

UTF16_BOMS: Final = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
#: How much of the start is looked at to tell UTF-16 from UTF-8 behind a UTF-16 BOM.
_PROBE: Final = 64 << 10
_PIECE: Final = 1 << 20
#: Stands for an odd last byte of a UTF-16 file: invalid UTF-8, so the line is repaired.
_BROKEN: Final = b"\xff"


def _looks_utf16(rest: bytes) -> bool:
    """Whether the bytes after a UTF-16 BOM are UTF-16 rather than UTF-8 text: UTF-16 text
    holds a NUL byte for every ASCII character, UTF-8 text none, and CJK UTF-16 is rarely
    valid UTF-8."""
    if b"\x00" in rest:
        return True
    try:
        codecs.utf_8_decode(rest, "strict", False)
    except UnicodeDecodeError:
        return True
    return False


class TextStage:
    """A reader over a decoded stream that hands out UTF-8 text (see module docstring).

    Bytes pass straight through once the start is settled, unless the file is UTF-16.
    """

    def __init__(self, source: Readable) -> None:
        self._source = source
        self._ready = bytearray()
        self._started = False
        self._ended = False
        self._failure: CorruptStreamError | None = None
        self._transcoder: codecs.IncrementalDecoder | None = None
        #: ``utf-8`` or the UTF-16 codec the file was decoded with.
        self.encoding = "utf-8"
        #: NUL bytes skipped at the start (bytes of the text, before its first character).
        self.skipped = 0

    def read(self, size: int = -1, /) -> bytes:
        self._start()
        if self._transcoder is None:
            return self._read_plain(size)
        while (size < 0 or len(self._ready) < size) and not self._ended:
            self._pull(_PIECE)
        return self._take(size)

    def _read_plain(self, size: int) -> bytes:
        """UTF-8 text: what is left of the start, then the source's bytes as they come."""
        if not self._ready:
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            return self._source.read(size)
        if self._ended or 0 <= size <= len(self._ready):
            return self._take(size)
        out = bytes(self._ready)
        self._ready.clear()
        try:
            return out + self._source.read(-1 if size < 0 else size - len(out))
        except CorruptStreamError as exc:
            self._failure = exc  # raised by the next read, after these bytes
            self._ended = True
            return out

    def _take(self, size: int) -> bytes:
        if not self._ready and self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        take = len(self._ready) if size < 0 else min(size, len(self._ready))
        out = bytes(self._ready[:take])
        del self._ready[:take]
        return out

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        while len(self._ready) < _PROBE and not self._ended:
            self._pull(_PROBE - len(self._ready))
        codec = UTF16_BOMS.get(bytes(self._ready[:2]))
        if codec is not None and _looks_utf16(bytes(self._ready[2:_PROBE])):
            raw = bytes(self._ready[2:])
            self._ready.clear()
            self.encoding = codec
            self._transcoder = codecs.getincrementaldecoder(codec)("surrogatepass")
            self._ready += self._transcode(raw)
            if self._ended:
                self._ready += self._transcode_end()
        while True:
            kept = self._ready.lstrip(b"\x00")
            if len(kept) < len(self._ready):
                self.skipped += len(self._ready) - len(kept)
                self._ready = bytearray(kept)
            if self._ready or self._ended:
                return
            self._pull(_PIECE)

    def _pull(self, size: int) -> None:
        """Read up to ``size`` bytes of the source into the ready text."""
        try:
            raw = self._source.read(size)
        except CorruptStreamError as exc:
            # Every decodable byte came before the failure: hand those out, then raise it.
            self._failure = exc
            raw = b""
        if not raw:
            self._ended = True
            if self._transcoder is not None:
                self._ready += self._transcode_end()
            return
        self._ready += raw if self._transcoder is None else self._transcode(raw)

    def _transcode(self, raw: bytes) -> bytes:
        assert self._transcoder is not None
        return self._transcoder.decode(raw, False).encode("utf-8", "surrogatepass")

    def _transcode_end(self) -> bytes:
        assert self._transcoder is not None
        try:
            return self._transcoder.decode(b"", True).encode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return _BROKEN


class TextContent(Content):
    """:class:`~analyzer.streams.Content` whose head and reads are UTF-8 text (see module
    docstring); what the ingest hands every reader."""

    def __init__(self, raw: Readable, budget: ExpansionBudget, path: str | None) -> None:
        super().__init__(raw, budget, path)
        self.text = TextStage(self.decoder)
        self.body = self.text

    @property
    def encoding(self) -> str:
        """``utf-8``, or the UTF-16 codec of a file with a UTF-16 BOM."""
        return self.text.encoding

    @property
    def skipped(self) -> int:
        """NUL bytes skipped at the start of the text."""
        return self.text.skipped
