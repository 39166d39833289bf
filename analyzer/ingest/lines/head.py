"""Quick decisions from the head of a file, with Python's ``re`` on a few hundred lines.

Sniffing and the choice of a year anchor look at the first lines of a file only; for that
little text, Python's ``re`` is cheaper than a polars query and close enough to the grammars
(:mod:`analyzer.ingest.lines.parse` does the real parse).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

from analyzer.ingest.lines.grammars import ANSI_ESCAPE, GRAMMARS, WRAPPERS, Grammar

SNIFF_LINES: Final = 200


def looks_binary(head: bytes) -> bool:
    """Whether a file head looks like binary data rather than text (NUL bytes)."""
    return b"\x00" in head[:8192]


def head_lines(head: bytes) -> list[str]:
    """The non-blank lines of a file head (the last one dropped when it may be cut)."""
    lines = head.decode("utf-8", "replace").splitlines()[:SNIFF_LINES]
    if len(head) >= 1024 and len(lines) > 1:
        lines = lines[:-1]
    return [line for line in lines if line.strip()]


_ANSI: Final = re.compile(ANSI_ESCAPE)
_WRAPPERS: Final = tuple(re.compile(p) for p in WRAPPERS)


@functools.lru_cache(maxsize=32)
def _python_patterns(grammars: tuple[Grammar, ...]) -> list[re.Pattern[str]]:
    return [re.compile(g.prefix) for g in grammars]


def _unwrapped(line: str) -> tuple[str, bool]:
    """A line without ANSI colours and wrappers, and whether a wrapper carried a timestamp."""
    rest = _ANSI.sub("", line)
    stamped = False
    for wrapper in _WRAPPERS:
        match = wrapper.match(rest)
        if match:
            stamped = stamped or bool(match.groupdict().get("rfc"))
            rest = rest[match.end("all") :]
    return rest, stamped


def any_dated(lines: list[str], grammars: Sequence[Grammar] = GRAMMARS) -> bool:
    """Whether any line could get a stamp with its year from
    :func:`~analyzer.ingest.lines.parse.parse_lines`: a timestamp wrapper, or a first matching
    grammar whose stamp carries the date (epoch, zoned, local). False means parsing these
    lines cannot date any of them (journal and klog heads)."""
    patterns = _python_patterns(tuple(grammars))
    for line in lines:
        rest, stamped = _unwrapped(line)
        if stamped:
            return True
        for pattern, grammar in zip(patterns, grammars, strict=True):
            if grammar.after_timestamp or not pattern.match(rest):
                continue
            if grammar.stamp in ("epoch", "zoned", "local"):
                return True
            break
    return False


def any_yearless(lines: list[str], grammars: Sequence[Grammar] = GRAMMARS) -> bool:
    """Whether any line starts with a stamp that has no year (absl ``MMDD``, syslog, vLLM)."""
    patterns = _python_patterns(tuple(grammars))
    yearless = [p for p, g in zip(patterns, grammars, strict=True) if g.stamp == "yearless"]
    for line in lines:
        rest, _ = _unwrapped(line)
        if any(pattern.match(rest) for pattern in yearless):
            return True
    return False


def share_recognized(lines: list[str], grammars: Sequence[Grammar] = GRAMMARS) -> float:
    """Share of ``lines`` that a grammar or a timestamp wrapper recognizes.

    For sniffing a file head: Python's ``re`` on at most a few hundred lines is cheaper than a
    polars query, and close enough to the real grammars for a score.
    """
    if not lines:
        return 0.0
    patterns = _python_patterns(tuple(grammars))
    known = 0
    for line in lines:
        rest, stamped = _unwrapped(line)
        if stamped or any(pattern.match(rest) for pattern in patterns):
            known += 1
    return known / len(lines)
