"""Benchmarks for culprit: ``python -m benchmarks run`` reproduces every figure and judges the
targets (:mod:`benchmarks.run`, :mod:`benchmarks.targets`); each benchmark also runs on its own
(``python -m benchmarks.ingest``, ``.generate``, ``.match``, ``.analyze``, ``.scaleout``,
``.html``, ``.bgl``); see ``benchmarks/RESULTS.md``. They time culprit's command line and read
its results through :mod:`analyzer.api`; their inputs come from :mod:`fixtures`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

#: This directory: the input cache, the recorded results and RESULTS.md live here.
BENCHMARKS_DIR: Final = Path(__file__).resolve().parent
#: The repository root: the ``analyzer/`` sources are fingerprinted and git is asked here.
REPO_DIR: Final = BENCHMARKS_DIR.parent
MIB: Final = 1 << 20


def say(message: str) -> None:
    """A progress message, on stderr: stdout carries only the results."""
    print(message, file=sys.stderr, flush=True)
