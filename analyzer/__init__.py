"""culprit: offline log forensics for large ML training incidents (import package ``analyzer``)."""

from __future__ import annotations

#: The one place the version is written: pyproject.toml reads it at build time.
__version__ = "0.1.0"
