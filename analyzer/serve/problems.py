"""What the dashboard says when something fails: one line, no absolute path of the machine.

A case can be damaged in ways its own checks do not see (a cut Parquet file, a ``matches``
file that is not one); the libraries reading it then raise their own errors, which a page
states as "the case cannot be read" with their first line. Every such text, and every error
the dashboard shows, names paths relative to the served directory: a page may be
screenshotted or pasted into a ticket, and the machine's layout is nobody's business.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import duckdb
import polars as pl
import pyarrow as pa

#: What reading a damaged case raises (besides :class:`analyzer.errors.CaseError`).
DAMAGE: Final = (duckdb.Error, pl.exceptions.PolarsError, pa.ArrowException, OSError)

#: An absolute path (two or more parts) not inside a word, URL or relative path; its last
#: part is kept.
_ABSOLUTE: Final = re.compile(
    r"(?<![\w.~:/-])/(?:[^\s/'\"`:;,()\[\]<>]+/)+(?P<name>[^\s/'\"`:;,()\[\]<>]*)"
)


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def relative(text: str, root: Path) -> str:
    """``text`` with paths under ``root`` (the served directory) made relative to it, and any
    other absolute path cut to ``…/`` and its last part."""
    prefixes = {str(root.resolve()), str(root.absolute())} - {"/"}
    for prefix in sorted(prefixes, key=len, reverse=True):
        # The root itself, or a path under it; not a sibling that merely starts alike.
        under = re.compile(re.escape(prefix) + r"(?P<sep>/|(?![^\s/'\"`:;,()\[\]<>]))")
        text = under.sub(lambda m: "" if m["sep"] else ".", text)
    return _ABSOLUTE.sub(lambda m: "…/" + m["name"], text)
