"""Cases: ingest a bundle (or one shard of it) into a case, merge shard parts, match the
catalogue, and read a case back (summary, host map, SQL)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from analyzer import __version__, defaults
from analyzer.bundle import Bundle, BundleLimits
from analyzer.case import space
from analyzer.case.info import CaseInfo, summarize
from analyzer.case.inputs import ReadOptions
from analyzer.case.layout import CaseMeta, meta_path
from analyzer.case.lock import case_lock
from analyzer.case.store import Case, open_case
from analyzer.case.writer import check_replaceable
from analyzer.engine import Engine, engine_named
from analyzer.engine import shards as shards_mod
from analyzer.engine.merge import MergeResult
from analyzer.engine.remote import identify
from analyzer.engine.shards import IngestJob, PartMeta, Shard
from analyzer.errors import CaseError, DiskSpaceError, QueryError, UsageError
from analyzer.ingest.columns.timestamps import check_tz
from analyzer.ingest.pipeline.progress import NullProgress, Progress
from analyzer.ingest.pipeline.workers import default_jobs
from analyzer.ingest.registry import reader_named
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.matching import MatchResult


@dataclass(frozen=True)
class IngestResult:
    """What :func:`ingest` did.

    ``reused`` is true when the case already held this bundle, ingested with the same options
    by the same culprit version, and nothing was done.
    """

    case: Path
    meta: CaseMeta
    reused: bool


def ingest(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    options: ReadOptions | None = None,
    limits: BundleLimits | None = None,
    reader: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
    engine: str = defaults.ENGINE,
    address: str | None = None,
    workers: int | None = None,
    shards: int | None = None,
    scratch: str | Path | None = None,
    wait_s: float = defaults.LOCK_WAIT_S,
    space_check: bool = defaults.SPACE_CHECK,
) -> IngestResult:
    """Ingest a bundle (directories, archives, files) into the case directory ``out``.

    Args:
        inputs: what the bundle consists of.
        out: the case directory; created, or replaced when the bundle changed.
        options: reader options (year/zone for stamps without them, size caps).
        limits: decompression and nesting limits.
        reader: force this reader for every file instead of sniffing.
        force: ingest even when the case already holds this bundle.
        progress: receives progress reports.
        jobs: worker processes reading plain files (default: one per core; 1 reads in this
            process). The case is the same whatever the number.
        engine: ``local`` (default) or ``ray`` (shards as Ray tasks, then a merge; the case
            is the same); ``address``, ``workers`` and ``shards`` as for :func:`analyze`.
        scratch: where remote inputs are mirrored (default: the system's temporary
            directory).
        wait_s: how long to wait for another ingest writing ``out`` (0: refuse at once).
        space_check: refuse before writing when the estimated need exceeds the free space.

    Raises:
        BundleError: an input is missing or the bundle exceeds its total size cap.
        UsageError: an option has an unusable value.
        DiskSpaceError: not enough free space, found before writing or on the way (nothing
            half-written is left).
        CaseLockedError: another process is writing ``out``.
        CaseError: the case directory cannot be written.
    """
    job, identity = ingest_job(inputs, options, limits, reader, scratch)
    chosen = engine_named(engine, address=address, workers=workers, shards=shards)
    target = Path(out)
    check_replaceable(target)  # before the lock, which leaves a trace beside it
    with case_lock(target, wait_s=wait_s):
        return ingest_with(
            chosen,
            job,
            identity,
            target,
            force=force,
            progress=progress,
            jobs=jobs,
            space_check=space_check,
        )


def ingest_with(
    engine: Engine,
    job: IngestJob,
    identity: tuple[Bundle | None, str],
    target: Path,
    *,
    force: bool,
    progress: Progress | None,
    jobs: int | None,
    space_check: bool = defaults.SPACE_CHECK,
) -> IngestResult:
    """Ingest into ``target`` unless it already holds this bundle; the caller holds the
    case's lock (:func:`analyzer.case.lock.case_lock`)."""
    if not force:
        reused = _reuse(target, *identity, job.settings)
        if reused is not None:
            # What a killed ingest left beside the case (possibly gigabytes) goes now, not at
            # the next ingest that writes.
            shutil.rmtree(target.parent / f".{target.name}.partial", ignore_errors=True)
            return IngestResult(target, reused, True)
    processes = default_jobs() if jobs is None else max(1, jobs)
    need = _space_need(job, identity[0], target)
    if space_check:
        space.check(need)
    try:
        meta = engine.ingest(job, target, jobs=processes, progress=progress or NullProgress())
    except DiskSpaceError:
        raise
    except Exception as exc:
        # The engine has thrown its staging away already; say why in one line instead of
        # an internal error.
        if space.is_disk_full(exc):
            raise space.disk_full(need, exc) from None
        raise
    return IngestResult(target, meta, False)


def _space_need(job: IngestJob, bundle: Bundle | None, target: Path) -> space.Need:
    """What the ingest needs on disk, as far as it is known before reading (nothing for a
    remote bundle: its size is known only once it is mirrored)."""
    return space.estimate(target, 0 if bundle is None else bundle.input_bytes, job.scratch)


def ingest_job(
    inputs: Sequence[str | Path],
    options: ReadOptions | None,
    limits: BundleLimits | None,
    reader: str | None,
    scratch: str | Path | None = None,
) -> tuple[IngestJob, tuple[Bundle | None, str]]:
    """Check the options and inputs of an ingest; the job, and the bundle's identity (the
    local bundle, if it is one, and its fingerprint) listed once for the reuse check."""
    options = options or ReadOptions()
    check_tz(options.tz)
    if options.year is not None and not 1678 <= options.year <= 2261:
        # Stamps are nanoseconds since 1970 in 64 bits.
        raise UsageError(f"--year {options.year}: must be between 1678 and 2261")
    if reader is not None:
        reader_named(reader)
    if options.max_line_bytes < 1024:
        raise UsageError("--max-line-bytes must be at least 1024")
    job = IngestJob(
        tuple(str(p) for p in inputs),
        options,
        limits or BundleLimits(),
        reader,
        _scratch_dir(scratch),
    )
    # A missing input fails here, before any work starts.
    return job, identify(job.inputs, job.limits)


def _scratch_dir(scratch: str | Path | None) -> Path | None:
    """The ``--scratch`` directory, created if need be, as an absolute path.

    Raises:
        UsageError: it is not a directory, cannot be created, or cannot be written.
    """
    if scratch is None:
        return None
    path = Path(scratch).absolute()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--scratch {scratch}: not a directory") from None
    except OSError as exc:
        raise UsageError(f"--scratch {scratch}: cannot create it: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"--scratch {scratch}: not writable")
    return path


def ingest_shard(
    inputs: Sequence[str | Path],
    out: str | Path,
    shard: str,
    *,
    options: ReadOptions | None = None,
    limits: BundleLimits | None = None,
    reader: str | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
    scratch: str | Path | None = None,
    wait_s: float = defaults.LOCK_WAIT_S,
) -> PartMeta:
    """Read shard ``shard`` (``"k/N"``, k from 0) of the bundle into the part directory
    ``out``; :func:`merge` of all N parts gives the case one :func:`ingest` would.

    Raises:
        UsageError: a bad shard or option.
        BundleError, CaseError: as for :func:`ingest`.
    """
    job, _ = ingest_job(inputs, options, limits, reader, scratch)
    spec = Shard.parse(shard)
    check_replaceable(Path(out))
    with case_lock(Path(out), wait_s=wait_s):
        try:
            return shards_mod.ingest_shard(
                job,
                spec,
                Path(out),
                jobs=default_jobs() if jobs is None else max(1, jobs),
                progress=progress,
            )
        except DiskSpaceError:
            raise
        except Exception as exc:
            if space.is_disk_full(exc):
                need = space.estimate(Path(out), 0, job.scratch)
                raise space.disk_full(need, exc) from None
            raise


def match_shard(
    case: str | Path,
    shard: str,
    out: str | Path | None = None,
    *,
    backend: str = defaults.BACKEND,
    signatures: Sequence[str | Path] = (),
) -> PartMeta:
    """Match shard ``shard`` (``"k/N"``) of the case's row files into the part directory
    ``out`` (default ``CASE/parts/match-k-of-N``); :func:`merge` of all N parts writes the
    case's matches as :func:`match` would.

    Raises:
        UsageError, CaseError, SignatureError: as for :func:`match`, or a bad shard.
    """
    from analyzer.signatures.backends import backend_named

    chosen = backend_named(backend)
    spec = Shard.parse(shard)
    opened = load_case(case)
    catalogue = load_catalogue([Path(p) for p in signatures])
    target = (
        Path(out)
        if out is not None
        else opened.path / "parts" / f"match-{spec.index}-of-{spec.count}"
    )
    return shards_mod.match_shard(opened, catalogue, chosen, spec, target)


def merge(parts: Sequence[str | Path], out: str | Path) -> MergeResult:
    """Merge every shard's output of one ingest into the case ``out``, or of one match into
    the matches of the case ``out``.

    Raises:
        UsageError: parts missing, repeated or from different runs.
        CaseError: not parts; match parts of another ingest; the case cannot be written.
    """
    from analyzer.engine.merge import merge as merge_parts

    with case_lock(Path(out)):
        return merge_parts([Path(p) for p in parts], Path(out))


def _reuse(
    target: Path, bundle: Bundle | None, fingerprint: str, settings: dict[str, Any]
) -> CaseMeta | None:
    """The existing case's metadata if it already holds this bundle, else ``None``."""
    if not meta_path(target).is_file():
        return None
    try:
        case = open_case(target)
    except CaseError:
        return None
    meta = case.meta
    if meta.tool_version != __version__ or meta.options != settings:
        return None
    if meta.bundle.fingerprint == fingerprint:
        return meta
    if bundle is not None and meta.bundle.content_hash == bundle.content_hash():
        updated = meta.model_copy(
            update={"bundle": meta.bundle.model_copy(update={"fingerprint": fingerprint})}
        )
        meta_path(target).write_text(updated.model_dump_json(indent=2) + "\n")
        return updated
    return None


def load_case(case: str | Path) -> Case:
    """Open a case directory (raises :class:`~analyzer.errors.CaseError` if it is not one)."""
    return open_case(Path(case))


def case_info(case: str | Path, *, top_hosts: int = defaults.TOP_HOSTS) -> CaseInfo:
    """Summary of a case: counts per source, reader, severity and host, quarantine reasons,
    files that were not fully read."""
    return summarize(load_case(case), top_hosts=top_hosts)


def case_hosts(case: str | Path) -> pa.Table:
    """The case's host map: every alias of every host, with the file and line of the row that
    proved it (``conflict`` marks aliases rows tie to more than one host)."""
    return query(
        case,
        "SELECT h.host, h.kind, h.alias, f.path || ':' || h.line AS evidence, h.rows, h.conflict "
        "FROM hosts h LEFT JOIN files f USING (file_id) "
        "ORDER BY h.conflict, h.host, h.kind, h.alias",
    )


def query(case: str | Path, sql: str) -> pa.Table:
    """Run SQL over the case's views (``rows``, ``files``, ``quarantine``, ``duplicates``,
    ``hosts``; ``matches`` once :func:`match` ran).

    Raises:
        QueryError: the SQL does not run; the message is DuckDB's.
    """
    import duckdb

    opened = load_case(case)
    with opened.connect() as connection:
        try:
            return connection.sql(sql).to_arrow_table()
        except duckdb.Error as exc:
            message = str(exc).strip().splitlines()[0]
            raise QueryError(message) from None
        except AttributeError:
            raise QueryError("the statement returns no rows") from None


def match(
    case: str | Path,
    *,
    backend: str = defaults.BACKEND,
    signatures: Sequence[str | Path] = (),
) -> MatchResult:
    """Match the signature catalogue (plus the folders ``signatures``) over every row of the
    case and write ``CASE/matches.parquet`` (then the ``matches`` query view exists).

    Args:
        case: the case directory.
        backend: ``polars`` (default), ``duckdb`` or ``python`` (slow reference); all give
            the same table.
        signatures: extra signature folders (``<family>/<name>.toml``).

    Raises:
        UsageError: unknown backend.
        CaseError: not a case, or the matches file cannot be written.
        SignatureError: a signature file does not load, or a regex does not compile.
    """
    from analyzer.signatures.backends import backend_named
    from analyzer.signatures.matching import match_case

    chosen = backend_named(backend)
    opened = load_case(case)
    catalogue = load_catalogue([Path(p) for p in signatures])
    return match_case(opened, catalogue, chosen)
