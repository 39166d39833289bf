"""One signature regex, every engine: parse the pattern once, write it for each engine.

The matching contract (:mod:`analyzer.signatures.compile`) says ``\\d \\w \\s \\b`` are ASCII
classes as RE2 has them, ``(?i)`` folds ASCII letters only, and ``$`` is the end of the message.
The engines read the same pattern text differently:

============  =====================  =======================  ==========================
construct     Python ``regex``       RE2 (DuckDB)             Rust ``regex`` (polars)
              (ASCII flag)
============  =====================  =======================  ==========================
``\\d \\w``     ASCII                  ASCII                    Unicode
``\\s``        ASCII, with ``\\v``     ``[\\t\\n\\f\\r ]``          Unicode
``\\b \\B``     ASCII                  ASCII                    Unicode
``(?i)``      ASCII letters          Unicode simple folding   Unicode simple folding
              (``K`` != KELVIN SIGN) (``k`` = KELVIN SIGN)
``$``         end, or before a       end                      end
              final ``\\n``
``(``         capture                capture                  capture
``[`` in      literal                literal                  nested class
a class
============  =====================  =======================  ==========================

:func:`translate` parses the pattern (:mod:`.tree`, the common subset the signature model
allows) and hands the tree to the engine's writer in :data:`WRITERS`, a table of per-construct
writers that inherit "as written" and override what their engine reads differently:

* ``python``, ``re2``, ``rust`` (:mod:`.contract`), the matching backends' engines:
  ``\\d \\D \\w \\W \\s \\S`` become explicit ASCII classes where the engine differs (inside a
  class too: a class is computed as a set of code points and written back, so ``[\\s\\S]``,
  ``[^\\w.-]`` and POSIX ``[[:alpha:]]`` come out exact); ``\\b``/``\\B`` become
  ``(?-u:\\b)``/``(?-u:\\B)`` for Rust; case-insensitive parts lose the flag for RE2 and Rust
  (each ASCII letter becomes ``[aA]``, each class is closed under ASCII case); ``$`` outside
  ``(?m)`` becomes ``\\Z`` for Python; unnamed groups become non-capturing for RE2 and Rust,
  so the named groups are the only captures, in order (DuckDB's ``regexp_extract`` takes them
  by position).
* ``ere`` and ``ripgrep`` (:mod:`.baselines`), the matching benchmark's baselines: POSIX ERE
  for ``grep -E`` and the catalogue's text as ripgrep takes it, both over messages exported one
  per line.

Constructs outside the common subset raise :class:`UnportableRegex` (lint reports them):
back-references, ``\\Q…\\E``, unknown escapes, flags other than ``i m s``, a flag group
``(?i)`` anywhere but at the start (Python applies it to the whole pattern, the others from
that point), a bare ``[`` inside a class. A pattern that is no regex at all is handed to the
engine unchanged, so that it says what is wrong in its own words.
"""

from __future__ import annotations

import functools
from typing import Final, Literal

from analyzer.signatures.dialect.baselines import EreWriter, RipgrepWriter
from analyzer.signatures.dialect.contract import PythonWriter, Re2Writer, RustWriter
from analyzer.signatures.dialect.tree import Malformed, Node, UnportableRegex, parse
from analyzer.signatures.dialect.writer import Writer

__all__ = [
    "BASELINE_ENGINES",
    "ENGINE_NAMES",
    "WRITERS",
    "Engine",
    "UnportableRegex",
    "ascii_lower",
    "translate",
]

Engine = Literal["python", "re2", "rust", "ere", "ripgrep"]
#: The engines a signature regex must be portable to: the matching backends'.
ENGINE_NAMES: Final[tuple[Engine, ...]] = ("python", "re2", "rust")
#: The engines of the matching benchmark's baselines (``grep -E`` and ripgrep).
BASELINE_ENGINES: Final[tuple[Engine, ...]] = ("ere", "ripgrep")
#: The writer of each engine.
WRITERS: Final[dict[Engine, Writer]] = {
    "python": PythonWriter(),
    "re2": Re2Writer(),
    "rust": RustWriter(),
    "ere": EreWriter(),
    "ripgrep": RipgrepWriter(),
}


@functools.cache
def _tree(pattern: str) -> tuple[Node, ...]:
    return parse(pattern)


@functools.cache
def translate(pattern: str, engine: Engine) -> str:
    """``pattern`` written for ``engine`` (matching engines: so that it follows the matching
    contract).

    Raises:
        UnportableRegex: the pattern is outside the common subset, or ``engine`` cannot say it.
    """
    writer = WRITERS.get(engine)
    if writer is None:
        raise ValueError(f"unknown regex engine {engine!r}")
    try:
        nodes = _tree(pattern)
    except Malformed as exc:
        if writer.passes_malformed:
            return pattern  # the engine reports the syntax error in its own words
        raise UnportableRegex(f"not a regex: {exc}") from None
    return writer.write(nodes)


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """``text`` with ASCII letters lower-cased and everything else as it is (how a
    case-insensitive signature's anchors are compared)."""
    return text.translate(_ASCII_LOWER)
