"""culprit: offline log forensics for large ML training incidents (import package ``analyzer``)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("culprit")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"
