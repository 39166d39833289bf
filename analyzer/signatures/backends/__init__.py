"""Matching backends: each turns (rows, compiled catalogue) into the same matches table.

:data:`BACKENDS` is the registry, an explicit tuple in preference order (the first is the
default, :data:`analyzer.defaults.BACKEND`). Every backend follows the contract of
:mod:`analyzer.signatures.compile` and gives exactly the same table; a test runs every
signature example through all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import polars as pl

from analyzer import defaults
from analyzer.errors import UsageError
from analyzer.signatures.backends import duckdb as duckdb_backend
from analyzer.signatures.backends import polars as polars_backend
from analyzer.signatures.backends import python as python_backend
from analyzer.signatures.compile import CompiledCatalogue

MatchFrame = Callable[[CompiledCatalogue, pl.DataFrame], pl.DataFrame]
MatchFiles = Callable[[CompiledCatalogue, Sequence[Path]], Iterator[pl.DataFrame]]


@dataclass(frozen=True)
class Backend:
    """One way to run the catalogue.

    ``match_frame`` takes a frame with ``row_id``, ``source`` and ``message``;
    ``match_files`` the case's row files (Parquet) and yields matches tables (each sorted;
    together, every match once). ``compile_error`` says why the engine rejects a signature
    regex (once translated for it), or None.
    """

    name: str
    match_frame: MatchFrame
    match_files: MatchFiles
    compile_error: Callable[[str], str | None]


BACKENDS: Final[tuple[Backend, ...]] = tuple(
    Backend(name, module.match, module.match_files, module.compile_error)
    for name, module in (
        ("polars", polars_backend),
        ("duckdb", duckdb_backend),
        ("python", python_backend),
    )
)

DEFAULT_BACKEND: Final = defaults.BACKEND


def backend_named(name: str) -> Backend:
    """The backend called ``name``.

    Raises:
        UsageError: no backend has that name (the message lists the known ones).
    """
    for backend in BACKENDS:
        if backend.name == name:
            return backend
    known = ", ".join(backend.name for backend in BACKENDS)
    raise UsageError(f"unknown matching backend {name!r}; known: {known}")
