"""Byte streams for bundle members: hashing, decompression with expansion caps, peeking.

Everything here reads incrementally in small blocks so a multi-GB member never has to fit in
memory, and so a truncated or corrupt compressed stream still yields every byte that could be
decoded before the damage (the caller records where it stopped).
"""

from __future__ import annotations

import hashlib
import io
import types
import zlib
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import zstandard

from analyzer import defaults
from analyzer.errors import BundleError, ExpansionLimitError

_inflate: types.ModuleType
try:
    from isal import isal_zlib as _inflate
except ImportError:  # pragma: no cover - isal is a dependency; zlib keeps a bare install working
    _inflate = zlib
#: What either inflater raises on corrupt data.
_INFLATE_ERRORS: Final[tuple[type[Exception], ...]] = (zlib.error, _inflate.error)

READ_BLOCK: Final = 1 << 16
_MIN_FEED: Final = 256
_TARGET_OUTPUT: Final = 1 << 20
#: What an archive nested in another may always decode, however small it is (see
#: :meth:`ExpansionBudget.nested`).
NESTED_FLOOR_BYTES: Final = 1 << 20
GZIP_MAGIC: Final = b"\x1f\x8b"
ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"


class Readable(Protocol):
    """The one method culprit needs from a byte stream."""

    def read(self, size: int = -1, /) -> bytes: ...


class CorruptStreamError(BundleError):
    """A compressed stream ended early or is damaged.

    Raised after every decodable byte has been returned by ``read``; ``decoded_bytes`` says how
    far the decoded content goes.
    """

    def __init__(self, message: str, *, decoded_bytes: int, path: str | None = None) -> None:
        super().__init__(message, path=path)
        self.decoded_bytes = decoded_bytes


class HashingReader:
    """Pass-through reader that hashes (sha256) and counts the bytes read through it."""

    def __init__(self, raw: Readable) -> None:
        self._raw = raw
        self._hash = hashlib.sha256()
        self.bytes_read = 0

    def read(self, size: int = -1, /) -> bytes:
        data = self._raw.read(size)
        self._hash.update(data)
        self.bytes_read += len(data)
        return data

    def close(self) -> None:
        """Close the underlying stream, if it can be closed."""
        close = getattr(self._raw, "close", None)
        if close is not None:
            close()

    def drain(self) -> None:
        """Read what is left so the digest covers the whole member."""
        while self.read(READ_BLOCK * 16):
            pass

    @property
    def hexdigest(self) -> str:
        """sha256 of everything read so far."""
        return self._hash.hexdigest()


@dataclass
class ExpansionBudget:
    """Caps on decompressed bytes, shared by every decoder of one ingest run.

    A single compressed stream may expand to ``max_ratio`` times its compressed size, but never
    less than ``floor_bytes`` (small, very repetitive files are normal); the whole bundle may
    decode to at most ``max_total_bytes``. An archive nested in another one gets a budget of
    its own (:meth:`nested`), charged before its parent's.
    """

    max_ratio: float = defaults.MAX_EXPANSION_RATIO
    floor_bytes: int = 64 << 20
    max_total_bytes: int | None = None
    total_decoded: int = field(default=0, init=False)
    #: The budget this one is part of (a nested archive's budget charges its parent too).
    parent: ExpansionBudget | None = field(default=None, init=False, repr=False)
    #: The nested archive this budget is for, and its size where it is stored.
    archive: str | None = field(default=None, init=False)
    stored: int = field(default=0, init=False)

    def nested(self, archive: str, stored: int) -> ExpansionBudget:
        """The budget of an archive nested in the one this budget is for: everything decoded
        inside it may reach ``max_ratio`` times its ``stored`` size, and at least
        :data:`NESTED_FLOOR_BYTES` (never more than ``floor_bytes``).

        Without it a nested bomb (archives of archives, each layer inside the ratio) filled
        the bundle's total cap and stopped the whole run; now it is that archive that stops.
        """
        floor = min(self.floor_bytes, NESTED_FLOOR_BYTES)
        allowance = max(floor, int(stored * self.max_ratio))
        child = ExpansionBudget(self.max_ratio, self.floor_bytes, allowance)
        child.parent, child.archive, child.stored = self, archive, stored
        return child

    @property
    def remaining(self) -> int | None:
        """Bytes this budget may still decode (``None``: no cap of its own)."""
        if self.max_total_bytes is None:
            return None
        return max(0, self.max_total_bytes - self.total_decoded)

    def charge(self, *, compressed: int, decoded: int, added: int, path: str | None) -> None:
        """Account ``added`` freshly decoded bytes; raise when a cap is crossed."""
        self.total_decoded += added
        allowed = max(self.floor_bytes, int(compressed * self.max_ratio))
        if decoded > allowed:
            raise ExpansionLimitError(
                f"decompressed size exceeds {self.max_ratio:g}x the compressed size "
                f"({decoded:,} bytes from {compressed:,}); refusing a likely decompression bomb "
                "(raise --max-expansion to allow it)",
                path=path,
            )
        self._check_total(added, path)

    def add_decoded(self, added: int, path: str | None) -> None:
        """Account bytes another budget already checked per stream (a worker's, a nested
        archive's); raise when the total cap is crossed."""
        self.total_decoded += added
        self._check_total(added, path)

    def check_spent(self, path: str | None) -> None:
        """Raise when more than ``max_total_bytes`` were decoded in total."""
        if self.max_total_bytes is not None and self.total_decoded > self.max_total_bytes:
            if self.parent is not None:
                raise ExpansionLimitError(
                    f"the archive {self.archive} decompresses to more than "
                    f"{self.max_total_bytes:,} bytes ({self.max_ratio:g}x its {self.stored:,} "
                    "stored bytes); refusing a likely nested archive bomb (raise "
                    "--max-expansion to allow it)",
                    path=path,
                )
            raise ExpansionLimitError(
                f"bundle decompresses to more than {self.max_total_bytes:,} bytes in total; "
                "stopping (raise --max-bytes to allow it)",
                path=path,
                scope="bundle",
            )

    def _check_total(self, added: int, path: str | None) -> None:
        """Raise when more than ``max_total_bytes`` were decoded in total; then charge the
        parent."""
        self.check_spent(path)
        if self.parent is not None:
            self.parent.add_decoded(added, path)


class _Decoder:
    """Common bookkeeping of the decoders: caps, buffering, deferred failure.

    A decoder that meets damage records the failure and raises it only once every byte decoded
    before the damage has been handed out.
    """

    compression = "none"

    def __init__(
        self, source: Readable, stored: HashingReader, budget: ExpansionBudget, path: str | None
    ) -> None:
        self._source = source
        self._stored = stored
        self._budget = budget
        self._path = path
        self._pending = bytearray()
        self._done = False
        self._failure: str | None = None
        self.decoded_bytes = 0

    def _produce(self) -> bytes:
        raise NotImplementedError

    def _fail(self, why: str) -> None:
        self._done = True
        self._failure = why

    def read(self, size: int = -1, /) -> bytes:
        while not self._done and (size < 0 or len(self._pending) < size):
            chunk = self._produce()
            if chunk:
                self.decoded_bytes += len(chunk)
                self._budget.charge(
                    compressed=self._stored.bytes_read,
                    decoded=self.decoded_bytes,
                    added=len(chunk),
                    path=self._path,
                )
                self._pending += chunk
        if not self._pending and self._failure is not None:
            why, self._failure = self._failure, None
            raise CorruptStreamError(
                f"{why} after {self.decoded_bytes:,} decoded bytes",
                decoded_bytes=self.decoded_bytes,
                path=self._path,
            )
        take = len(self._pending) if size < 0 else min(size, len(self._pending))
        out = bytes(self._pending[:take])
        del self._pending[:take]
        return out


class _MemberDecoder(_Decoder):
    """A decoder for formats made of concatenated members/frames (gzip, zstd).

    Every byte decoded before damage is handed out (unlike :class:`gzip.GzipFile`, which drops
    the block it was working on), then :class:`CorruptStreamError` is raised. Zero padding
    after the last member is accepted.
    """

    _errors: tuple[type[Exception], ...] = ()

    def __init__(
        self, source: Readable, stored: HashingReader, budget: ExpansionBudget, path: str | None
    ) -> None:
        super().__init__(source, stored, budget, path)
        self._inflater = self._new()
        self._feed = _MIN_FEED

    def _new(self) -> Any:
        raise NotImplementedError

    def _produce(self) -> bytes:
        compressed = self._source.read(self._feed)
        if not compressed:
            self._done = True
            if not self._inflater.eof:
                tail: bytes = self._inflater.flush()
                self._fail(f"{self.compression} stream is truncated (no end-of-stream marker)")
                return tail
            return b""
        out = bytearray()
        data = compressed
        while data:
            if self._inflater.eof:
                if not data.strip(b"\0"):
                    break
                self._inflater = self._new()
            try:
                out += self._inflater.decompress(data)
            except self._errors as exc:
                self._fail(f"{self.compression} stream is corrupt ({exc})")
                return bytes(out)
            data = self._inflater.unused_data if self._inflater.eof else b""
        # Feed less input when it expands a lot, so one call never materializes a bomb: the
        # budget check after each call then refuses it with memory bounded by _TARGET_OUTPUT.
        if out:  # a call that only consumed headers says nothing about the ratio
            ratio = max(1.0, len(out) / len(compressed))
            wanted = max(_MIN_FEED, _TARGET_OUTPUT / ratio)
            self._feed = int(min(READ_BLOCK, wanted, self._feed * 4))
        return bytes(out)


class GzipDecoder(_MemberDecoder):
    """Streaming gzip (multi-member) decoder: ISA-L's inflate (``isal``, about 1.5x zlib on
    these inputs, see benchmarks/RESULTS.md) with :mod:`zlib`'s interface, or zlib itself."""

    compression = "gzip"
    _errors = _INFLATE_ERRORS

    def _new(self) -> Any:
        return _inflate.decompressobj(wbits=31)


class ZstdDecoder(_MemberDecoder):
    """Streaming zstd (multi-frame) decoder built on ``zstandard``.

    pyarrow can decode zstd too, but on a truncated stream it drops what it decoded in the
    failing read (up to a whole read block); ``zstandard`` hands out every decodable byte.
    """

    compression = "zstd"
    _errors = (zstandard.ZstdError,)

    def _new(self) -> Any:
        return zstandard.ZstdDecompressor().decompressobj()


class DeflateDecoder(_MemberDecoder):
    """Streaming raw deflate (a zip member's data, read without zipfile when the zip's
    central directory is missing)."""

    compression = "deflate"
    _errors = (zlib.error,)

    def _new(self) -> Any:
        return zlib.decompressobj(wbits=-15)


class PlainReader:
    """Uncompressed pass-through with the same attributes as the decoders."""

    compression = "none"

    def __init__(self, source: Readable, stored: HashingReader) -> None:
        self._source = source
        self._stored = stored

    @property
    def decoded_bytes(self) -> int:
        return self._stored.bytes_read

    def read(self, size: int = -1, /) -> bytes:
        return self._source.read(size)


class Content:
    """The decoded content of one member, with a peekable head for sniffing.

    Args:
        raw: the member's stored bytes.
        budget: expansion caps shared by the whole ingest run.
        path: bundle-relative path, for error messages.
    """

    def __init__(self, raw: Readable, budget: ExpansionBudget, path: str | None) -> None:
        self.stored = HashingReader(raw)
        magic = self.stored.read(4)
        replay = _Prepend(magic, self.stored)
        self.decoder: GzipDecoder | ZstdDecoder | PlainReader
        if magic.startswith(GZIP_MAGIC):
            self.decoder = GzipDecoder(replay, self.stored, budget, path)
        elif magic == ZSTD_MAGIC:
            self.decoder = ZstdDecoder(replay, self.stored, budget, path)
        else:
            self.decoder = PlainReader(replay, self.stored)
        #: Where :meth:`head` and :meth:`read` draw from: the decoder, or a stage after it
        #: (:class:`analyzer.ingest.decoding.TextContent` turns the bytes into UTF-8 text).
        self.body: Readable = self.decoder
        self._head = b""
        self._head_pos = 0
        self._failure: CorruptStreamError | None = None

    @property
    def compression(self) -> str:
        """``none``, ``gzip`` or ``zstd``."""
        return self.decoder.compression

    def head(self, size: int) -> bytes:
        """The first ``size`` decoded bytes, without consuming them.

        A stream that breaks off inside the head returns what it has; the failure is raised
        by :meth:`read` once the head has been read back.
        """
        while len(self._head) < size and self._failure is None:
            try:
                chunk = self.body.read(size - len(self._head))
            except CorruptStreamError as exc:
                self._failure = exc
                break
            if not chunk:
                break
            self._head += chunk
        return self._head[:size]

    def read(self, size: int = -1, /) -> bytes:
        if self._head_pos >= len(self._head) and self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        if self._head_pos < len(self._head):
            end = len(self._head) if size < 0 else min(len(self._head), self._head_pos + size)
            out = self._head[self._head_pos : end]
            self._head_pos = end
            if size < 0:
                out += self.body.read(-1)
            return out
        return self.body.read(size)

    def read_at_most(self, limit: int) -> bytes:
        """Up to ``limit`` decoded bytes from here on (``read`` may return fewer than asked,
        this keeps reading until ``limit`` or the end)."""
        pieces: list[bytes] = []
        size = 0
        while size < limit:
            piece = self.read(min(1 << 20, limit - size))
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
        return b"".join(pieces)

    def finish(self) -> str:
        """Drain the stored stream and return its sha256."""
        self.stored.drain()
        return self.stored.hexdigest

    def close(self) -> None:
        """Close the member's stream."""
        self.stored.close()


class _Prepend(io.RawIOBase):
    """Replays already-read bytes before the rest of a stream (a file object for pyarrow)."""

    def __init__(self, first: bytes, rest: Readable) -> None:
        super().__init__()
        self._first = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1, /) -> bytes:
        if size is None:
            size = -1
        if self._first:
            if size < 0:
                out, self._first = self._first + self._rest.read(-1), b""
                return out
            out, self._first = self._first[:size], self._first[size:]
            return out
        return self._rest.read(size)
