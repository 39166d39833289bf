"""One shard of an ingest or of a match: a deterministic slice of the work, and its output.

Shard ``k/N`` (0 <= k < N) of an ingest reads a slice of the bundle's files into a *part*
directory; shard ``k/N`` of a match matches a slice of a case's row files. Every shard computes
the same slices from the same listing, so N processes anywhere (a Kubernetes indexed Job, a
Slurm array, Ray tasks) need no coordinator, and :mod:`analyzer.engine.merge` then combines the
parts into what one process would have written.

Plain files on disk are dealt out by size (largest first, each to the lightest shard), so one
huge Cloud Logging export does not land beside another; everything else (archives and what
they hold, links, refused entries) goes by file id, round robin. Each shard still numbers
every member of the bundle, so a file gets the same ``file_id`` and ``row_id`` whichever
shard reads it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from analyzer import __version__
from analyzer.bundle import Bundle, BundleLimits, Member
from analyzer.case.inputs import ReadOptions
from analyzer.case.layout import MATCHES_FILE, META_FILE, PART_META_FILE, InputInfo
from analyzer.case.meta import ingest_settings
from analyzer.case.store import Case, read_model
from analyzer.case.writer import CaseWriter
from analyzer.engine.remote import localize
from analyzer.errors import CaseError, UsageError
from analyzer.ingest.pipeline.progress import NullProgress, Progress
from analyzer.ingest.pipeline.run import IngestRun
from analyzer.signatures.backends import Backend
from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.matching import match_files, row_files

PART_FORMAT: Final = "culprit-part/1"
_SPEC: Final = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``index`` counts from 0, as a Kubernetes completion index
    does)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise UsageError(f"shard {self.index}/{self.count}: need 0 <= k < N and N >= 1")

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """``"k/N"`` -> ``Shard(k, N)``.

        Raises:
            UsageError: not of the form k/N with 0 <= k < N.
        """
        found = _SPEC.fullmatch(spec.strip())
        if found is None:
            raise UsageError(f"--shard {spec!r}: expected k/N, e.g. 0/4 (k counts from 0)")
        return cls(int(found.group(1)), int(found.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def deal(sizes: Sequence[tuple[str, int]], count: int) -> dict[str, int]:
    """Which shard each item goes to: largest first, each to the shard with the fewest bytes
    so far (ties: the lower shard). Deterministic for a given list."""
    loads = [(0, shard) for shard in range(count)]
    owner: dict[str, int] = {}
    for name, size in sorted(sizes, key=lambda item: (-item[1], item[0])):
        load, shard = heapq.heappop(loads)
        owner[name] = shard
        heapq.heappush(loads, (load + size, shard))
    return owner


def ownership(bundle: Bundle, shard: Shard) -> Callable[[Member, int], bool]:
    """Whether ``shard`` reads a member, given the file id it gets."""
    plain = deal(bundle.plain_file_sizes(), shard.count)

    def owns(member: Member, file_id: int) -> bool:
        if member.disk_path is not None and member.path in plain:
            return plain[member.path] == shard.index
        return file_id % shard.count == shard.index

    return owns


class PartMeta(BaseModel):
    """``part.json``: what a shard wrote, and what its merge must agree on."""

    model_config = ConfigDict(extra="forbid")

    format: str = PART_FORMAT
    kind: Literal["ingest", "match"]
    shard: str
    tool_version: str
    created_at: dt.datetime
    #: ingest: the bundle's identity and the options (every part of one case agrees on them).
    inputs: list[InputInfo] = []
    fingerprint: str | None = None
    settings: dict[str, Any] = {}
    #: match: which case (sha256 of its case.json) and how it was matched.
    case_digest: str | None = None
    backend: str | None = None
    catalogue_digest: str | None = None
    signatures: int | None = None
    rows_scanned: int | None = None
    matches: int | None = None
    row_files: list[str] = []

    @property
    def slice(self) -> Shard:
        return Shard.parse(self.shard)


@dataclass(frozen=True)
class IngestJob:
    """What an ingest reads and how (picklable: Ray ships it to its workers)."""

    inputs: tuple[str, ...]
    options: ReadOptions
    limits: BundleLimits
    reader: str | None = None
    #: Where remote inputs are mirrored (``--scratch``); not
    #: a setting of the case: the case is the same wherever its scratch was.
    scratch: Path | None = None

    @property
    def settings(self) -> dict[str, Any]:
        return ingest_settings(self.options, self.limits, self.reader)


def ingest_shard(
    job: IngestJob,
    shard: Shard,
    out: Path,
    *,
    jobs: int = 1,
    progress: Progress | None = None,
) -> PartMeta:
    """Read shard ``shard`` of the bundle into the part directory ``out``.

    The bundle-wide decode cap applies to what this shard decodes.

    Raises:
        BundleError: an input is missing, or the shard's files exceed the decode cap.
        CaseError: the part cannot be written.
    """
    with localize(
        job.inputs, job.limits, partial(owned_files, shard=shard), scratch=job.scratch
    ) as prepared:
        bundle = prepared.bundle
        writer = CaseWriter(out)
        meta = PartMeta(
            kind="ingest",
            shard=str(shard),
            tool_version=__version__,
            created_at=dt.datetime.now(tz=dt.UTC),
            inputs=prepared.inputs,
            fingerprint=prepared.fingerprint,
            settings=job.settings,
        )
        try:
            IngestRun(
                bundle,
                writer,
                job.options,
                job.reader,
                progress or NullProgress(),
                jobs=jobs,
                owns=ownership(bundle, shard),
            ).run()
            writer.commit_part(meta.model_dump_json(indent=2) + "\n")
        except BaseException:
            writer.abort()
            raise
    return meta


def owned_files(bundle: Bundle, shard: Shard) -> list[str]:
    """Bundle paths of the plain files ``shard`` reads."""
    return [
        path
        for path, owner in deal(bundle.plain_file_sizes(), shard.count).items()
        if owner == shard.index
    ]


def case_digest(case: Case) -> str:
    """Identity of one ingest of a case: the sha256 of its ``case.json``."""
    return hashlib.sha256((case.path / META_FILE).read_bytes()).hexdigest()


def match_shard(
    case: Case, catalogue: Catalogue, backend: Backend, shard: Shard, out: Path
) -> PartMeta:
    """Match ``catalogue`` over shard ``shard`` of the case's row files; write ``out``
    (``part.json`` and ``matches.parquet``).

    Raises:
        SignatureError: a regex does not compile in the backend's engine.
        CaseError: the part cannot be written.
    """
    files = row_files(case)
    owner = deal([(f.name, f.stat().st_size) for f in files], shard.count)
    mine = [f for f in files if owner[f.name] == shard.index]
    try:
        out.mkdir(parents=True, exist_ok=True)
        # part.json is written last: until then, what is here is not a part.
        (out / PART_META_FILE).unlink(missing_ok=True)
    except OSError as exc:
        raise CaseError(f"cannot create the part directory: {exc}", path=str(out)) from None
    result = match_files(case, mine, catalogue, backend, out / MATCHES_FILE)
    meta = PartMeta(
        kind="match",
        shard=str(shard),
        tool_version=__version__,
        created_at=dt.datetime.now(tz=dt.UTC),
        case_digest=case_digest(case),
        backend=backend.name,
        catalogue_digest=result.catalogue_digest,
        signatures=result.signatures,
        rows_scanned=result.rows_scanned,
        matches=result.matches,
        row_files=[f.name for f in mine],
    )
    (out / PART_META_FILE).write_text(meta.model_dump_json(indent=2) + "\n")
    return meta


def read_part(path: Path) -> PartMeta:
    """The ``part.json`` of a shard's output.

    Raises:
        CaseError: not a part directory, or written by an incompatible version.
    """
    meta_file = path / PART_META_FILE
    if not meta_file.is_file():
        raise CaseError(
            "not a shard's output (no part.json; written by `--shard k/N`)", path=str(path)
        )
    return read_model(meta_file, PartMeta, "part", PART_FORMAT)
