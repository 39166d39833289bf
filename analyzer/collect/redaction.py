"""Secrets out of what the commands printed, before it is written into the bundle.

The same detectors as reports (:mod:`analyzer.redact`) but for addresses and e-mails: a
bundle is evidence to be analyzed, and its IPs and node names are how hosts are told apart (a
ModelArts node is named by its IP). Tokens, keys, passwords, signed URLs' signatures and
private keys become ``[REDACTED:<kind>]``. A redaction never takes a quote or a backslash
away, so a JSON string stays a JSON string.

Lines are redacted in blocks with polars (the detectors run on the distinct lines the
prefilter lets through); a block that is not UTF-8 is redacted line by line, its bytes kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import polars as pl

from analyzer.redact import Redactor, marker
from analyzer.redact.engine import DETECTORS

#: Kinds a bundle keeps: they identify hosts and people's roles in audit entries, and the
#: analysis needs them (reports redact them later).
KEPT_KINDS: Final = frozenset({"ip", "ipv6", "email"})
_BLOCK: Final = 8 << 20
_STRUCTURE: Final = frozenset('"\\')


class OutputRedactor(Redactor):
    """A :class:`~analyzer.redact.Redactor` whose spans stop at quotes and backslashes."""

    def _replace(self, text: str, active: Sequence[bool] | None) -> str:
        if not self.enabled or not text:
            return text
        pieces: list[str] = []
        at = 0
        for start, end, kind in self.spans(text, active):
            while start < end and text[start] in _STRUCTURE:
                start += 1
            # A value running into an escape or a closing quote is redacted up to it.
            stop = start
            while stop < end and text[stop] not in _STRUCTURE:
                stop += 1
            if stop == start:
                continue
            pieces += [text[at:start], marker(kind)]
            at = stop
        return "".join(pieces) + text[at:] if pieces else text


def output_redactor(*, enabled: bool = True) -> OutputRedactor:
    """The redaction of collected outputs (``enabled`` false: none)."""
    detectors = [d for d in DETECTORS if not set(d.kinds) <= KEPT_KINDS]
    return OutputRedactor(enabled=enabled, detectors=detectors)


def redact_file(source: Path, target: Path, redactor: Redactor) -> tuple[int, str, int]:
    """Copy ``source`` to ``target`` with secrets redacted: the bytes written, their sha256
    and how many lines changed."""
    digest = hashlib.sha256()
    size = changed = 0
    with source.open("rb") as raw, target.open("wb") as out:
        rest = b""
        while True:
            block = raw.read(_BLOCK)
            data = rest + block
            if block:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data
                    continue
                data, rest = data[:cut], data[cut:]
            else:
                rest = b""
            if not data:
                break
            clean, count = _redact_block(data, redactor)
            out.write(clean)
            digest.update(clean)
            size += len(clean)
            changed += count
            if not block:
                break
    return size, digest.hexdigest(), changed


def _redact_block(data: bytes, redactor: Redactor) -> tuple[bytes, int]:
    if not redactor.enabled:
        return data, 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        lines = data.decode("utf-8", "surrogateescape").split("\n")
        done = [redactor(line) for line in lines]
        count = sum(a != b for a, b in zip(lines, done, strict=True))
        return "\n".join(done).encode("utf-8", "surrogateescape"), count
    column = pl.Series("line", text.split("\n"), dtype=pl.String)
    redacted = redactor.series(column)
    count = int((column != redacted).sum())
    if not count:
        return data, 0
    return "\n".join(redacted.to_list()).encode("utf-8"), count
