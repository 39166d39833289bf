"""The catalogue compiled once for matching: what every backend needs of each signature.

Matching semantics, the same in every backend (a test holds them to it):

* a row is a candidate for a signature when its ``source`` is one of the signature's sources
  and its ``message`` contains one of the signature's anchors (case-sensitive; ASCII
  case-insensitive when the regex starts with ``(?i)``);
* a candidate matches when the regex finds a match anywhere in the message (``^`` and ``$``
  are the message's ends unless the regex sets ``(?m)``);
* the captures are the named groups of the leftmost match, as a JSON object with sorted keys;
  a group that did not take part in the match, or captured the empty string, is absent;
* ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII classes (as RE2 has them: ``\\s`` is
  ``[\\t\\n\\f\\r ]``, no vertical tab);
* ``(?i)`` folds ASCII letters only (KELVIN SIGN is not a ``k``, ``É`` is not ``é``);
* ``$`` (without ``(?m)``) is the very end: it does not match before a final newline.

:func:`analyzer.signatures.dialect.translate` writes each regex so that every engine
follows these rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

import polars as pl

from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.model import Signature

#: The columns of a matches table, in order.
MATCHES_SCHEMA: Final = pl.Schema(
    {
        "row_id": pl.Int64,
        "signature": pl.String,
        "role": pl.String,
        "captures": pl.String,
    }
)


#: A flag group at the very start that turns on case-insensitivity: ``(?i)``, ``(?im)``, ….
_LEADING_FLAGS: Final = re.compile(r"^\(\?[ms]*i[ims]*\)")


@dataclass(frozen=True)
class Compiled:
    """One signature as the backends use it."""

    code: str
    role: str
    sources: tuple[str, ...]
    anchors: tuple[str, ...]
    case_insensitive: bool
    regex: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class CompiledCatalogue:
    """Every signature, in catalogue order."""

    signatures: tuple[Compiled, ...]

    @property
    def anchors(self) -> tuple[str, ...]:
        """Every distinct anchor, in first-use order."""
        return tuple(dict.fromkeys(a for s in self.signatures for a in s.anchors))


def compile_signature(signature: Signature) -> Compiled:
    return Compiled(
        code=signature.code,
        role=signature.role,
        sources=signature.sources,
        anchors=signature.anchors,
        case_insensitive=_LEADING_FLAGS.match(signature.regex) is not None,
        regex=signature.regex,
        groups=signature.groups,
    )


def compile_catalogue(catalogue: Catalogue | tuple[Signature, ...]) -> CompiledCatalogue:
    signatures = catalogue.signatures if isinstance(catalogue, Catalogue) else catalogue
    return CompiledCatalogue(tuple(compile_signature(s) for s in signatures))


def captures_json(captures: dict[str, str | None]) -> str:
    """The canonical text of a match's captures: non-empty groups, sorted, compact JSON."""
    kept = {name: value for name, value in sorted(captures.items()) if value}
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"))


def empty_matches() -> pl.DataFrame:
    return pl.DataFrame(schema=MATCHES_SCHEMA)
