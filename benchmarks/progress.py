"""Progress messages of the benchmark."""

from __future__ import annotations

import sys


def say(message: str) -> None:
    """Print ``message`` to stderr: stdout carries only the results table."""
    print(message, file=sys.stderr, flush=True)
