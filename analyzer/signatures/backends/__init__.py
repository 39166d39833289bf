"""Matching backends: each turns (rows, compiled catalogue) into the same matches table.

:data:`BACKENDS` is the registry, an explicit tuple in preference order (the first is the
default, :data:`analyzer.defaults.BACKEND`). Every backend follows the contract of
:mod:`analyzer.signatures.compile` and gives exactly the same table; a test runs every
signature example through all of them.

A backend's module is imported when one of its functions is first asked for: an analysis
runs one backend, and the others cost imports it does not need (DuckDB's module and
Python's ``regex``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Final

from analyzer import defaults
from analyzer.errors import UsageError

if TYPE_CHECKING:
    import polars as pl

    from analyzer.signatures.compile import CompiledCatalogue

MatchFrame = Callable[["CompiledCatalogue", "pl.DataFrame"], "pl.DataFrame"]
MatchFiles = Callable[["CompiledCatalogue", Sequence[Path]], Iterator["pl.DataFrame"]]


@dataclass(frozen=True)
class Backend:
    """One way to run the catalogue: the module ``analyzer.signatures.backends.<name>``.

    ``match_frame`` takes a frame with ``row_id``, ``source`` and ``message``;
    ``match_files`` the case's row files (Parquet) and yields matches tables (each sorted;
    together, every match once). ``compile_error`` says why the engine rejects a signature
    regex (once translated for it), or None.
    """

    name: str

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.name}")

    @property
    def match_frame(self) -> MatchFrame:
        found: MatchFrame = self.module.match
        return found

    @property
    def match_files(self) -> MatchFiles:
        found: MatchFiles = self.module.match_files
        return found

    @property
    def compile_error(self) -> Callable[[str], str | None]:
        found: Callable[[str], str | None] = self.module.compile_error
        return found


BACKENDS: Final[tuple[Backend, ...]] = (Backend("polars"), Backend("duckdb"), Backend("python"))

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
