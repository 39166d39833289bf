"""Ray: the shard functions as Ray tasks, then the same merge, in the driver.

Tasks receive a job description and a shard number, and return the small ``part.json``; rows
never travel through Ray's object store. The parts go to a scratch directory beside the case,
so every worker must see the bundle and the case at the same paths (one machine, or a shared
file system such as a Filestore/GCS FUSE volume mounted in every Ray pod).

Ray is optional (``pip install 'culprit[ray]'``); nothing here is imported without it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.case.layout import CaseMeta
from analyzer.case.store import Case, open_case
from analyzer.engine.merge import merge
from analyzer.engine.shards import IngestJob, Shard, ingest_shard, match_shard
from analyzer.errors import AnalyzerError, UsageError
from analyzer.ingest.pipeline.progress import Progress
from analyzer.signatures.backends import Backend, backend_named
from analyzer.signatures.catalog import Catalogue


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "--engine ray needs Ray: pip install 'culprit[ray]' (or use --engine local)"
        ) from None
    return ray


@dataclass(frozen=True)
class RayEngine:
    """Run shards as Ray tasks (one CPU each) on the cluster at ``address``, or on a local
    Ray instance with ``workers`` CPUs."""

    address: str | None = None
    workers: int | None = None
    shards: int | None = None
    name: str = "ray"
    #: Whether a session is open and whether this engine started the Ray instance.
    _state: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.address is not None and self.workers is not None:
            raise UsageError(
                "--workers sizes a local Ray instance; a cluster (--address) has its own"
            )
        for value, option in ((self.workers, "--workers"), (self.shards, "--shards")):
            if value is not None and value < 1:
                raise UsageError(f"{option} must be at least 1")

    def ingest(self, job: IngestJob, target: Path, *, jobs: int, progress: Progress) -> CaseMeta:
        with self._cluster() as ray, _scratch(target) as scratch:
            count = self._count(ray)
            task = ray.remote(num_cpus=1)(_ingest_task)
            calls = [
                task.remote(job, index, count, str(scratch / f"ingest-{index}"))
                for index in range(count)
            ]
            parts = _gather_ingest(ray, calls, progress)
            return merge(parts, target).meta

    def match(self, case: Case, catalogue: Catalogue, backend: Backend) -> None:
        with self._cluster() as ray, _scratch(case.path) as scratch:
            count = self._count(ray)
            task = ray.remote(num_cpus=1)(_match_task)
            calls = [
                task.remote(
                    str(case.path),
                    catalogue,
                    backend.name,
                    index,
                    count,
                    str(scratch / f"match-{index}"),
                )
                for index in range(count)
            ]
            parts = _gather(ray, calls)
            merge(parts, case.path)

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Keep a Ray instance this engine starts up until the end of the block (it is
        started at the first ingest or match, not before: a case that needs neither costs
        no start-up)."""
        ray = _import_ray()  # fail before any work when Ray is missing
        self._state["session"] = True
        try:
            yield
        finally:
            self._state["session"] = False
            if self._state.pop("started", False):
                ray.shutdown()

    @contextlib.contextmanager
    def _cluster(self) -> Iterator[Any]:
        """Ray, connected: to ``address``, to an instance this process already joined, or to
        a local instance started here (stopped at the end of the call or of the session)."""
        ray = _import_ray()
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                num_cpus=self.workers,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
            self._state["started"] = True
        try:
            yield ray
        finally:
            if not self._state.get("session") and self._state.pop("started", False):
                ray.shutdown()

    def _count(self, ray: Any) -> int:
        if self.shards is not None:
            return self.shards
        return max(1, int(ray.cluster_resources().get("CPU", 1)))


@contextlib.contextmanager
def _scratch(near: Path) -> Iterator[Path]:
    """A directory beside ``near`` for the parts, removed afterwards."""
    path = near.parent / f".{near.name}.ray-parts"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def _task_errors(ray: Any) -> Iterator[None]:
    """A task's culprit error is raised as itself, not wrapped in Ray's."""
    try:
        yield
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, AnalyzerError):
            raise cause from None
        raise


def _gather(ray: Any, calls: Sequence[Any]) -> list[Path]:
    """The part directories the tasks wrote."""
    with _task_errors(ray):
        done: list[str] = ray.get(list(calls))
    return [Path(path) for path in done]


def _gather_ingest(ray: Any, calls: Sequence[Any], progress: Progress) -> list[Path]:
    """The part directories the ingest tasks wrote, in shard order; ``progress`` advances
    by each shard's bytes as the shard finishes (the workers' own progress cannot reach
    the driver's terminal, so a shard is the unit the bar can see)."""
    progress.start(None)
    shard_of = {call: index for index, call in enumerate(calls)}
    parts: dict[int, Path] = {}
    waiting = list(calls)
    with _task_errors(ray):
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            for call in ready:
                out, consumed = ray.get(call)
                index = shard_of[call]
                parts[index] = Path(out)
                progress.file(f"shard {len(parts)}/{len(calls)} done")
                progress.advance(consumed)
    return [parts[index] for index in range(len(calls))]


class _Consumed:
    """Counts the bytes a shard consumed (a :class:`Progress` that draws nothing)."""

    def __init__(self) -> None:
        self.bytes = 0

    def start(self, total: int | None) -> None:
        return None

    def file(self, path: str) -> None:
        return None

    def advance(self, stored_bytes: int) -> None:
        self.bytes += stored_bytes


def _ingest_task(job: IngestJob, index: int, count: int, out: str) -> tuple[str, int]:
    consumed = _Consumed()
    ingest_shard(job, Shard(index, count), Path(out), jobs=1, progress=consumed)
    return out, consumed.bytes


def _match_task(
    case: str, catalogue: Catalogue, backend: str, index: int, count: int, out: str
) -> str:
    shard = Shard(index, count)
    match_shard(open_case(Path(case)), catalogue, backend_named(backend), shard, Path(out))
    return out
