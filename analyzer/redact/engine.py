"""The engine: run every detector over a text, keep one secret per stretch of text (the
first detector in :data:`DETECTORS` wins an overlap), and put ``[REDACTED:<kind>]`` in
place of each value; over a column, let polars pick the rows that may hold a secret (one
regex, the union of the detectors' hints) and run the detectors on those distinct values
only.

Addresses in ``keep`` are never redacted: the case's own host names (a ModelArts node is
named by its IP) and the address a verdict blames, which are the verdict and stand in
structured fields anyway. Only an address is kept so: a host is never named by a credential.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from typing import Final

import polars as pl

from analyzer.redact.blocks import PEM, KeyMaterial
from analyzer.redact.detectors import Detector, Span
from analyzer.redact.keywords import KeywordDetector
from analyzer.redact.library import JWT, PLUGINS
from analyzer.redact.network import NETWORK
from analyzer.redact.vendors import VENDORS

#: The kinds a kept name may take.
_ADDRESSES: Final = frozenset({"ip", "ipv6"})
#: A redaction already made (a handoff's rows, re-diagnosed): never redacted again.
_MARKER: Final = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

#: In priority order: a block before the tokens inside it, a vendor's format before a
#: generic keyword, a keyword's value before an address inside it, key material last.
DETECTORS: Final[tuple[Detector, ...]] = (
    PEM,
    *PLUGINS,
    JWT,
    *VENDORS,
    KeywordDetector(),
    *NETWORK,
    KeyMaterial(),
)


def marker(kind: str) -> str:
    """What a secret of ``kind`` becomes."""
    return f"[REDACTED:{kind}]"


class Redactor:
    """Replaces secrets by ``[REDACTED:<kind>]``; callable on one text.

    Args:
        keep: addresses never redacted (the case's host names, a blamed address).
        enabled: False for ``--no-redact``: every method returns its input.
        detectors: the detectors, in priority order (:data:`DETECTORS`).
    """

    def __init__(
        self,
        keep: Iterable[str] = (),
        *,
        enabled: bool = True,
        detectors: Sequence[Detector] = DETECTORS,
    ) -> None:
        self.keep = frozenset(keep)
        self.enabled = enabled
        self.detectors = tuple(detectors)
        self.prefilter = "|".join(f"(?:{d.hint})" for d in self.detectors)

    @functools.cached_property
    def _hints(self) -> tuple[re.Pattern[str], ...]:
        # Compiled when a text is first redacted alone: never for VERBATIM.
        return tuple(re.compile(d.hint) for d in self.detectors)

    def keeping(self, names: Iterable[str]) -> Redactor:
        """The same redaction, also keeping ``names``."""
        return Redactor(self.keep | set(names), enabled=self.enabled, detectors=self.detectors)

    def spans(self, text: str, active: Sequence[bool] | None = None) -> list[Span]:
        """The secrets of ``text``, in text order, none overlapping another; only the
        detectors whose hint ``text`` matches run (``active``: which, when known)."""
        if active is None:
            active = [hint.search(text) is not None for hint in self._hints]
        made = [Span(*m.span(), "") for m in _MARKER.finditer(text)]
        chosen: list[Span] = list(made)
        for detector, on in zip(self.detectors, active, strict=True):
            if not on:
                continue
            for span in sorted(detector.find(text)):
                if span.kind in _ADDRESSES and text[span.start : span.end] in self.keep:
                    continue
                if all(span.end <= c.start or span.start >= c.end for c in chosen):
                    chosen.append(span)
        return sorted(set(chosen) - set(made))

    def __call__(self, text: str) -> str:
        return self._replace(text, None)

    def _replace(self, text: str, active: Sequence[bool] | None) -> str:
        if not self.enabled or not text:
            return text
        pieces: list[str] = []
        at = 0
        for start, end, kind in self.spans(text, active):
            pieces += [text[at:start], marker(kind)]
            at = end
        return "".join(pieces) + text[at:] if pieces else text

    def series(self, values: pl.Series) -> pl.Series:
        """``values`` (strings) redacted; the detectors run on each distinct value that the
        prefilter lets through, never per row."""
        if not self.enabled or values.len() == 0:
            return values
        old, new = [], []
        for text, *active in self._candidates(values).iter_rows():
            redacted = self._replace(text, active)
            if redacted != text:
                old.append(text)
                new.append(redacted)
        return values.replace(old, new) if old else values

    def _candidates(self, values: pl.Series) -> pl.DataFrame:
        """The distinct values the prefilter lets through, and for each, which detectors'
        hints it matches (one polars pass per hint over the candidates only)."""
        text = pl.col("text")
        return (
            values.alias("text")
            .to_frame()
            .filter(text.is_not_null() & text.str.contains(self.prefilter))
            .unique()
            .with_columns(
                text.str.contains(d.hint).alias(f"d{i}") for i, d in enumerate(self.detectors)
            )
        )

    def captures(self, values: pl.Series) -> pl.Series:
        """Signature captures (compact JSON objects of strings) with every value redacted and
        the JSON still valid."""
        if not self.enabled or values.len() == 0:
            return values
        old, new = [], []
        for text, *_ in self._candidates(values).iter_rows():
            groups = json.loads(text)
            redacted = {k: self(v) if isinstance(v, str) else v for k, v in groups.items()}
            if redacted != groups:
                old.append(text)
                new.append(json.dumps(redacted, ensure_ascii=False, separators=(",", ":")))
        return values.replace(old, new) if old else values


#: No redaction (``--no-redact``, on the owner's own machine).
VERBATIM: Final = Redactor(enabled=False)
