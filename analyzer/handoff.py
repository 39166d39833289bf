"""Handoff bundles: one case's verdict and the rows behind it, for a support engineer on
another (possibly air-gapped) machine. The format is documented in ``docs/handoff.md``.

``handoff.tar.zst`` holds ``MANIFEST.json`` (format, case id, tool version, catalogue digest,
sha256 and size of every other member), ``report.md`` and ``findings.json`` (redacted),
``attempts.json`` (the attempt split of the full case), a *mini-case* under ``case/``
(``rows/evidence.parquet``: every matched row, every cited row and the rows of context around
the first error, messages redacted and ``extra`` dropped; their ``matches.parquet``; the host
map; the file inventory; an empty quarantine: raw lines never travel) and the extra signature
folders used, under ``signatures/<n>/``. Everything is redacted before it is written, and
the archive's bytes depend only on its contents (sorted members, no times or owners).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from analyzer import __version__, defaults
from analyzer.case.layout import (
    DUPLICATES_FILE,
    DUPLICATES_SCHEMA,
    FILES_FILE,
    HOSTS_FILE,
    MATCHES_FILE,
    META_FILE,
    QUARANTINE_FILE,
    QUARANTINE_SCHEMA,
    ROWS_DIR,
    BundleInfo,
    InputInfo,
)
from analyzer.case.store import Case
from analyzer.diagnose.attempts import Attempt
from analyzer.diagnose.findings import Findings
from analyzer.errors import HandoffError
from analyzer.schema import CANONICAL_SCHEMA

FORMAT: Final = "culprit-handoff/1"
MANIFEST: Final = "MANIFEST.json"
ATTEMPTS: Final = "attempts.json"
CASE_DIR: Final = "case"
SIGNATURES_DIR: Final = "signatures"
EVIDENCE_FILE: Final = "evidence.parquet"
#: Rows of context per host on each side of the first error.
DEFAULT_CONTEXT: Final = defaults.HANDOFF_CONTEXT
#: A member larger than this is refused when reading (a handoff is small by design).
MAX_MEMBER_BYTES: Final = 1 << 30


@dataclass(frozen=True)
class Manifest:
    format: str
    case_id: str
    tool_version: str
    bundle_id: str
    catalogue_digest: str
    signature_folders: list[str]
    members: dict[str, dict[str, Any]]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- choosing the rows ------------------------------------------------------------------------


def evidence_row_ids(
    case: Case, findings: Findings, attempts: Sequence[Attempt], cited: set[int], context: int
) -> set[int]:
    """Every row the re-diagnosis needs: matched rows (matches.parquet, noise aside), cited
    rows, ``context`` rows per host on each side of the verdict's first error, each host's
    first and last row per attempt (and last workload row), each pod's first and last row,
    and each node's last ML Diagnostics daemon row."""
    from analyzer.diagnose.attempts import assign_labelled
    from analyzer.diagnose.draft import workload_rows

    matched = (
        pl.scan_parquet(case.path / MATCHES_FILE)
        .filter(pl.col("role") != "noise")
        .select("row_id")
        .unique()
        .collect()["row_id"]
        .to_list()
    )
    rows = pl.scan_parquet(case.rows_glob).select(
        "row_id", "ts", "host", "pod", "workload", "attempt", "source"
    )
    timed = rows.filter(pl.col("ts").is_not_null())
    ids = set(matched) | cited
    placed = assign_labelled(timed, list(attempts))
    bounds = placed.group_by("attempt_index", "host").agg(
        pl.col("row_id").sort_by("ts", "row_id").first().alias("a"),
        pl.col("row_id").sort_by("ts", "row_id").last().alias("b"),
    )
    workload_last = (
        placed.filter(workload_rows())
        .group_by("attempt_index", "host")
        .agg(pl.col("row_id").sort_by("ts", "row_id").last().alias("a"))
    )
    pods = (
        timed.filter(pl.col("pod").is_not_null())
        .group_by("workload", "pod")
        .agg(
            pl.col("row_id").sort_by("ts", "row_id").first().alias("a"),
            pl.col("row_id").sort_by("ts", "row_id").last().alias("b"),
        )
    )
    daemon = (
        timed.filter(pl.col("source") == "diagon")
        .group_by("host")
        .agg(pl.col("row_id").sort_by("ts", "row_id").last().alias("a"))
    )
    for table in pl.collect_all([bounds, workload_last, pods, daemon]):
        for column in ("a", "b"):
            if column in table.columns:
                ids.update(table[column].drop_nulls().to_list())
    first = findings.verdict.first_error
    if first is not None and first.ts is not None and context > 0:
        moment = pl.lit(first.ts).cast(pl.Datetime("ns", "UTC"))
        before = (
            timed.filter(pl.col("ts") <= moment)
            .sort("ts", "row_id", descending=True)
            .group_by("host", maintain_order=True)
            .head(context)
        )
        after = (
            timed.filter(pl.col("ts") > moment)
            .sort("ts", "row_id")
            .group_by("host", maintain_order=True)
            .head(context)
        )
        for table in pl.collect_all([before, after]):
            ids.update(table["row_id"].to_list())
    return ids


# -- writing ----------------------------------------------------------------------------------


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _mini_case(
    case: Case, ids: set[int], redact: Callable[[str], str], case_id: str
) -> dict[str, bytes]:
    """The mini-case's members (paths relative to ``case/``)."""
    id_list = sorted(ids)
    rows = (
        pl.scan_parquet(case.rows_glob)
        .filter(pl.col("row_id").is_in(id_list))
        .sort("row_id")
        .collect()
    )
    rows = rows.with_columns(
        pl.col("message").map_elements(redact, return_dtype=pl.String),
        pl.lit(None, dtype=pl.String).alias("extra"),
    )
    table = rows.to_arrow().cast(CANONICAL_SCHEMA)
    meta = case.meta.model_copy(
        update={
            "bundle": BundleInfo(
                inputs=[
                    InputInfo(path=Path(i.path).name, kind=i.kind, bytes=i.bytes)
                    for i in case.meta.bundle.inputs
                ],
                fingerprint=case.meta.bundle.fingerprint,
                content_hash=case.meta.bundle.content_hash,
            ),
            "options": {"handoff": case_id},
        }
    )
    return {
        f"{ROWS_DIR}/{EVIDENCE_FILE}": _parquet_bytes(table),
        MATCHES_FILE: _matches_bytes(case.path / MATCHES_FILE, id_list),
        HOSTS_FILE: (case.path / HOSTS_FILE).read_bytes(),
        FILES_FILE: (case.path / FILES_FILE).read_bytes(),
        QUARANTINE_FILE: _parquet_bytes(QUARANTINE_SCHEMA.empty_table()),
        DUPLICATES_FILE: _parquet_bytes(DUPLICATES_SCHEMA.empty_table()),
        META_FILE: (meta.model_dump_json(indent=2) + "\n").encode(),
    }


def _matches_bytes(path: Path, ids: list[int]) -> bytes:
    """The matches of the chosen rows, with the original file's metadata."""
    from analyzer.signatures.matching import ARROW_SCHEMA, META_KEY, matches_meta

    sink = io.BytesIO()
    pl.read_parquet(path).filter(pl.col("row_id").is_in(ids)).write_parquet(
        sink,
        compression="zstd",
        arrow_schema=ARROW_SCHEMA,
        metadata={META_KEY: json.dumps(matches_meta(path))},
    )
    return sink.getvalue()


def _signature_members(folders: Sequence[Path]) -> dict[str, bytes]:
    members = {}
    for number, folder in enumerate(folders):
        for path in sorted(folder.rglob("*.toml")):
            relative = path.relative_to(folder).as_posix()
            members[f"{SIGNATURES_DIR}/{number}/{relative}"] = path.read_bytes()
    return members


def tar_zst(entries: Sequence[tuple[str, bytes]], *, level: int = 10) -> bytes:
    """A zstd-compressed (with checksum) tar of ``entries`` in the order given, whose bytes
    depend only on names and contents (no times, owners; mode 0644)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True)
    return compressor.compress(buffer.getvalue())


def pack(members: dict[str, bytes], manifest: Manifest) -> bytes:
    """The archive: MANIFEST.json first, then every member in name order."""
    head = (MANIFEST, json.dumps(asdict(manifest), indent=2, sort_keys=True).encode())
    return tar_zst([head, *sorted(members.items())])


def build(
    case: Case,
    findings: Findings,
    report: str,
    attempts: Sequence[Attempt],
    *,
    redact: Callable[[str], str],
    case_id: str,
    signature_folders: Sequence[Path],
    context: int = DEFAULT_CONTEXT,
) -> tuple[bytes, Manifest, set[int]]:
    """The handoff archive of an analyzed case (``findings`` already redacted)."""
    cited = {
        c.row_id
        for v in findings.attempts
        for row in v.evidence + v.timeline + v.leads
        for c in [row.citation]
    }
    ids = evidence_row_ids(case, findings, attempts, cited, context)
    members: dict[str, bytes] = {
        "report.md": report.encode(),
        "findings.json": (findings.model_dump_json(indent=2) + "\n").encode(),
        ATTEMPTS: (json.dumps([asdict(a) for a in attempts], indent=2) + "\n").encode(),
    }
    members |= {f"{CASE_DIR}/{k}": v for k, v in _mini_case(case, ids, redact, case_id).items()}
    members |= _signature_members(signature_folders)
    manifest = Manifest(
        format=FORMAT,
        case_id=case_id,
        tool_version=__version__,
        bundle_id=findings.bundle.id,
        catalogue_digest=findings.catalogue_digest,
        signature_folders=[f"{SIGNATURES_DIR}/{n}" for n in range(len(signature_folders))],
        members={
            name: {"sha256": _sha256(data), "bytes": len(data)}
            for name, data in sorted(members.items())
        },
    )
    return pack(members, manifest), manifest, ids


# -- reading ----------------------------------------------------------------------------------


def is_handoff(path: Path) -> bool:
    """Whether ``path`` looks like a handoff archive (a .tar.zst starting with MANIFEST.json)."""
    if not path.is_file() or not path.name.endswith(".tar.zst"):
        return False
    try:
        with path.open("rb") as raw:
            head = zstandard.ZstdDecompressor().stream_reader(raw).read(512)
    except (OSError, zstandard.ZstdError):
        return False
    # A tar header starts with the member's name, NUL-padded; pack() puts the manifest first.
    return head.startswith(MANIFEST.encode() + b"\0")


def _safe(name: str) -> bool:
    pure = PurePosixPath(name)
    return bool(name) and not pure.is_absolute() and ".." not in pure.parts


def read(path: Path) -> tuple[Manifest, dict[str, bytes]]:
    """Every member of the handoff file ``path``, verified (see :func:`parse`).

    Raises:
        HandoffError: as for :func:`parse`, or the file cannot be read.
    """
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise HandoffError(f"cannot read the archive: {exc}", path=str(path)) from None
    return parse(blob, str(path))


def parse(blob: bytes, where: str) -> tuple[Manifest, dict[str, bytes]]:
    """Every member of a handoff archive, verified against its manifest.

    Raises:
        HandoffError: not a handoff, truncated or corrupt, a member missing, extra, unsafe,
            or whose bytes differ from the manifest's sha256.
    """
    try:
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)).read()
    except zstandard.ZstdError as exc:
        raise HandoffError(f"cannot read the archive: {exc}", path=where) from None
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for info in archive:
                if not info.isfile() or not _safe(info.name):
                    raise HandoffError(f"member {info.name!r} is not a plain file", path=where)
                if info.size > MAX_MEMBER_BYTES:
                    raise HandoffError(f"member {info.name!r} is too large", path=where)
                handle = archive.extractfile(info)
                assert handle is not None
                members[info.name] = handle.read()
    except tarfile.TarError as exc:
        raise HandoffError(f"the archive is truncated or corrupt: {exc}", path=where) from None
    if MANIFEST not in members:
        raise HandoffError(f"not a culprit handoff (no {MANIFEST})", path=where)
    try:
        manifest = Manifest(**json.loads(members.pop(MANIFEST)))
    except (ValueError, TypeError) as exc:
        raise HandoffError(f"{MANIFEST} is not valid: {exc}", path=where) from None
    if manifest.format != FORMAT:
        raise HandoffError(f"handoff format {manifest.format!r} is not {FORMAT!r}", path=where)
    expected, present = set(manifest.members), set(members)
    for name in sorted(expected - present):
        raise HandoffError(f"member {name} is missing", path=where)
    for name in sorted(present - expected):
        raise HandoffError(f"member {name} is not in the manifest", path=where)
    for name in sorted(expected):
        if _sha256(members[name]) != manifest.members[name]["sha256"]:
            raise HandoffError(
                f"member {name} does not match its sha256 in the manifest (tampered or damaged)",
                path=where,
            )
    return manifest, members


def unpack(members: dict[str, bytes], target: Path) -> None:
    """Write verified members under ``target`` (names were checked by :func:`read`)."""
    if target.exists():
        shutil.rmtree(target)
    for name, data in members.items():
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)


def attempts_of(members: dict[str, bytes]) -> list[Attempt]:
    return [Attempt(**a) for a in json.loads(members[ATTEMPTS])]


def scratch() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="culprit-handoff-")
