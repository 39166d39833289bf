"""What a detector is: something that finds the spans of secrets in a text, names their kind,
and says (as a regex for the vectorized prefilter) what any text it would flag must contain.

The spans are the secret *values* only: a ``password=`` or ``Authorization: Bearer`` before
them stays, so a redacted line still reads as what it was.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple, Protocol

#: Characters of base64 (plain and URL-safe) and its padding.
BASE64: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")


class Span(NamedTuple):
    """``text[start:end]`` is a secret of ``kind``."""

    start: int
    end: int
    kind: str


class Detector(Protocol):
    """One family of secrets."""

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every kind :meth:`find` may name (the per-kind table lists each one)."""
        ...

    @property
    def hint(self) -> str:
        """A regex, in the syntax both polars (Rust) and Python read, that every text
        :meth:`find` flags contains: the detector runs only on texts it matches."""
        ...

    def find(self, text: str) -> Iterator[Span]:
        """Every secret in ``text``."""
        ...


class Regex:
    """A regex compiled when first used: compiling the detectors' patterns was most of
    importing the redaction (a hundredth of a second of a small analysis), and a text runs only
    the detectors whose hint it matches, usually none."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(text, pos, endpos)


@dataclass(frozen=True)
class RegexDetector:
    """A regex whose named group ``s`` (or, without one, every group that took part, or the
    whole match) is the secret; ``check`` may refuse a candidate (or rename its kind)."""

    kind: str
    pattern: Regex
    hint: str
    check: Callable[[str, re.Match[str]], str | None] | None = None
    also: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind, *self.also)

    def find(self, text: str) -> Iterator[Span]:
        for match in self.pattern.finditer(text):
            kind = self.kind if self.check is None else self.check(text, match)
            if kind is None:
                continue
            for start, end in _secret_spans(match):
                if end > start:
                    yield Span(start, end, kind)


def _secret_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    if "s" in match.re.groupindex:
        return [match.span("s")] if match.start("s") >= 0 else []
    if match.re.groups:
        return [match.span(g) for g in range(1, match.re.groups + 1) if match.start(g) >= 0]
    return [match.span()]


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())


def mixed(text: str) -> bool:
    """Whether ``text`` mixes upper case, lower case and digits (random tokens do; words,
    numbers and hex digests do not)."""
    return (
        any(c.isupper() for c in text)
        and any(c.islower() for c in text)
        and any(c.isdigit() for c in text)
    )
