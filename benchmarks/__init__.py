"""Benchmarks for culprit (``python -m benchmarks.ingest``); see ``benchmarks/RESULTS.md``."""

from __future__ import annotations
