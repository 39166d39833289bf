"""English left in a Chinese report: ``python -m tests.report.english report.md…`` prints each
English phrase outside what a Chinese report may quote, and exits 1 when there is one.

Allowed, and removed before looking: fenced blocks and inline code (log lines, citations),
blockquoted log lines, 「」 (text quoted in English from the catalogue or a knowledge page,
as the report's note says), link targets, times, paths and identifiers (signature codes, host
names, failure modes, rule names: anything with a digit, ``-``, ``_``, ``/``, ``.`` or ``:``
inside, or in quotes), and single words (a product or a term such as ``Pod``, ``JAX``). What
remains must not hold two English words in a row.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Final

_FENCE: Final = re.compile(r"^(\s*)(`{3,})[^\n]*\n.*?^\1\2\s*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE: Final = re.compile(r"(`+)(?:(?!\1).)+?\1")
_QUOTED_EN: Final = re.compile(r"「[^」]*」")
_LINK_TARGET: Final = re.compile(r"\]\([^)]*\)")
_QUOTED: Final = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_TIME: Final = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?: UTC)?")
#: A token with a digit or an inner - _ / . : @ = is an identifier, not a word.
_IDENTIFIER: Final = re.compile(r"[\w.:/@=+-]*(?:\d|[A-Za-z][-_/.:@=+][A-Za-z0-9])[\w.:/@=+-]*")
#: Product and system names that a Chinese text writes as they are, even two in a row.
_NAMES: Final = ("ML Diagnostics", "Cloud Logging", "Diagon", "culprit")
_WORDS: Final = re.compile(r"[A-Za-z]{2,}(?:[ ,;]+[A-Za-z]{2,})+")


def english_phrases(report: str) -> list[str]:
    """The runs of two or more English words left outside what may stay English."""
    text = _FENCE.sub(" ", report)
    for pattern in (_INLINE_CODE, _QUOTED_EN, _LINK_TARGET, _QUOTED, _TIME, _IDENTIFIER):
        text = pattern.sub(" ", text)
    for name in _NAMES:
        text = text.replace(name, " ")
    return [m.group(0) for m in _WORDS.finditer(text)]


def main(paths: list[str]) -> int:
    found = 0
    for path in paths:
        for phrase in english_phrases(Path(path).read_text(encoding="utf-8")):
            print(f"{path}: English outside quotes: {phrase!r}")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
