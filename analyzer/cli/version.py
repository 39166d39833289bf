"""``culprit version``."""

from __future__ import annotations

import typer


def version() -> None:
    """Print culprit's version."""
    from analyzer import __version__

    typer.echo(__version__)
