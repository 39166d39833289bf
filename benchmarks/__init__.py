"""Benchmarks for culprit: ``python -m benchmarks run`` reproduces every figure and judges the
targets (:mod:`benchmarks.run`, :mod:`benchmarks.targets`); each benchmark also runs on its own
(``python -m benchmarks.ingest``, ``benchmarks.generate``, ``benchmarks.match``,
``benchmarks.analyze``); see ``benchmarks/RESULTS.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Final

#: This directory: the input cache, the recorded results and RESULTS.md live here.
BENCHMARKS_DIR: Final = Path(__file__).resolve().parent
#: The repository root: the ``analyzer/`` sources are fingerprinted and git is asked here.
REPO_DIR: Final = BENCHMARKS_DIR.parent
MIB: Final = 1 << 20
