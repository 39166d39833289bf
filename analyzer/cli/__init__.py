"""The ``culprit`` command: a thin typer client of :mod:`analyzer.api`.

Each command parses its arguments, makes one library call and renders the result; one module
per command group, registered in :mod:`analyzer.cli.application`. Options shared by several
commands, and every option whose default is the library's, are in :mod:`analyzer.cli.options`.
Heavy libraries (polars, pyarrow, duckdb, rich) are imported inside the commands so that
``culprit --help`` stays fast.
"""

from __future__ import annotations

from analyzer.cli.application import app, main

__all__ = ["app", "main"]
