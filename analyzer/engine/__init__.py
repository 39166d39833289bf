"""Where the work runs: this process (``local``) or Ray tasks (``ray``).

Both produce the same case and the same matches; diagnosis never knows which ran.
:mod:`analyzer.engine.shards` and :mod:`analyzer.engine.merge` are the framework-free pieces
any scheduler can run; the engines only decide who runs them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final, Protocol

from analyzer.case.layout import CaseMeta
from analyzer.case.store import Case
from analyzer.engine.shards import IngestJob
from analyzer.errors import UsageError
from analyzer.ingest.pipeline.progress import Progress
from analyzer.signatures.backends import Backend
from analyzer.signatures.catalog import Catalogue

#: The engines ``--engine`` accepts.
ENGINES: Final = ("local", "ray")


class Engine(Protocol):
    """Ingests a bundle into a case and matches a case; nothing else."""

    @property
    def name(self) -> str:
        """What ``--engine`` calls it."""

    def ingest(self, job: IngestJob, target: Path, *, jobs: int, progress: Progress) -> CaseMeta:
        """Write the case ``target`` from the bundle of ``job``."""

    def match(self, case: Case, catalogue: Catalogue, backend: Backend) -> None:
        """Write ``case``'s matches.parquet."""

    def session(self) -> AbstractContextManager[None]:
        """Keep the engine's resources (a Ray instance) up across several calls."""


def engine_named(
    name: str,
    *,
    address: str | None = None,
    workers: int | None = None,
    shards: int | None = None,
) -> Engine:
    """The engine called ``name``.

    Args:
        address: a Ray cluster to join (``ray`` only; a local Ray instance without it).
        workers: CPUs of the local Ray instance (``ray`` only, without ``address``).
        shards: how many pieces the work is cut into (``ray`` only; default one per CPU).

    Raises:
        UsageError: unknown engine, options the engine does not take, or Ray is not installed.
    """
    if name == "local":
        if address is not None or workers is not None or shards is not None:
            raise UsageError("--address, --workers and --shards go with --engine ray")
        from analyzer.engine.local import LocalEngine

        return LocalEngine()
    if name == "ray":
        from analyzer.engine.ray import RayEngine

        return RayEngine(address=address, workers=workers, shards=shards)
    raise UsageError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
