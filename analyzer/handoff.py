"""Handoff bundles: one case's verdict and the rows behind it, for a support engineer on
another (possibly air-gapped) machine. The format is documented in ``docs/handoff.md``.

``handoff.tar.zst`` holds ``MANIFEST.json`` (format, case id, tool version, catalogue digest,
sha256 and size of every other member), optionally ``MANIFEST.sig`` (an Ed25519 signature over
the manifest), ``report.md`` and ``findings.json`` (redacted),
``attempts.json`` (the attempt split of the full case), a *mini-case* under ``case/``
(``rows/evidence.parquet``: every matched row, every cited row and the rows of context around
the first error, messages redacted and ``extra`` dropped; their ``matches.parquet``; the host
map; the file inventory; an empty quarantine: raw lines never travel) and the extra signature
folders used, under ``signatures/<n>/``. Everything is redacted before it is written, and
the archive's bytes depend only on its contents (sorted members, no times or owners).
Recognizing and verifying a handoff is :mod:`analyzer.provenance`'s.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Final

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
from analyzer.provenance.archive import MARKER
from analyzer.provenance.layout import (
    ATTEMPTS,
    CASE_DIR,
    EVIDENCE_FILE,
    FORMAT,
    MANIFEST,
    SIGNATURE,
    SIGNATURES_DIR,
    TIMELINE,
)
from analyzer.provenance.manifest import Manifest, entries, manifest_bytes
from analyzer.schema import CANONICAL_SCHEMA

if TYPE_CHECKING:
    from analyzer.redact import Redactor

#: The format's names, re-exported for this module's callers (defined in provenance.layout).
__all__ = [
    "ATTEMPTS",
    "CASE_DIR",
    "EVIDENCE_FILE",
    "FORMAT",
    "MANIFEST",
    "SIGNATURE",
    "SIGNATURES_DIR",
]

#: Rows of context per host on each side of the first error.
DEFAULT_CONTEXT: Final = defaults.HANDOFF_CONTEXT
#: Signs the manifest's bytes: returns the ``MANIFEST.sig`` member (``--sign``).
Signer = Callable[[bytes], bytes]


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


def _mini_case(case: Case, ids: set[int], redact: Redactor, case_id: str) -> dict[str, bytes]:
    """The mini-case's members (paths relative to ``case/``): messages and captures
    redacted."""
    from analyzer.redact.case import host_map_names

    id_list = sorted(ids)
    rows = (
        pl.scan_parquet(case.rows_glob)
        .filter(pl.col("row_id").is_in(id_list))
        .sort("row_id")
        .collect()
    )
    rows = rows.with_columns(
        redact.series(rows["message"]),
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
        MATCHES_FILE: _matches_bytes(
            case.path / MATCHES_FILE, id_list, redact.keeping(host_map_names(case))
        ),
        HOSTS_FILE: (case.path / HOSTS_FILE).read_bytes(),
        FILES_FILE: (case.path / FILES_FILE).read_bytes(),
        QUARANTINE_FILE: _parquet_bytes(QUARANTINE_SCHEMA.empty_table()),
        DUPLICATES_FILE: _parquet_bytes(DUPLICATES_SCHEMA.empty_table()),
        META_FILE: (meta.model_dump_json(indent=2) + "\n").encode(),
    }


def _matches_bytes(path: Path, ids: list[int], redact: Redactor) -> bytes:
    """The matches of the chosen rows, with the original file's metadata. Their captures are
    redacted like the rows they come from, but for the names of the host map (an IP that
    resolves a culprit), which the handoff carries in ``hosts.parquet`` anyway."""
    from analyzer.signatures.matching import ARROW_SCHEMA, META_KEY, matches_meta

    sink = io.BytesIO()
    matches = pl.read_parquet(path).filter(pl.col("row_id").is_in(ids))
    matches.with_columns(redact.captures(matches["captures"])).write_parquet(
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


def pack(members: dict[str, bytes], manifest: Manifest, signer: Signer | None = None) -> bytes:
    """The archive: culprit's skippable zstd frame (so a handoff cut short is still known
    for one), then the tar: MANIFEST.json first, MANIFEST.sig when ``signer`` is given, then
    every member in name order."""
    head = [(MANIFEST, manifest_bytes(manifest))]
    if signer is not None:
        head.append((SIGNATURE, signer(head[0][1])))
    return MARKER + tar_zst([*head, *sorted(members.items())])


def build(
    case: Case,
    findings: Findings,
    report: str,
    attempts: Sequence[Attempt],
    *,
    redact: Redactor,
    case_id: str,
    signature_folders: Sequence[Path],
    context: int = DEFAULT_CONTEXT,
    signer: Signer | None = None,
    timeline: str | None = None,
) -> tuple[bytes, Manifest, set[int]]:
    """The handoff archive of an analyzed case (``findings`` already redacted), its manifest
    signed by ``signer`` when given; ``timeline`` is the ``timeline.svg`` report.md links."""
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
    if timeline is not None:
        members[TIMELINE] = timeline.encode()
    members |= {f"{CASE_DIR}/{k}": v for k, v in _mini_case(case, ids, redact, case_id).items()}
    members |= _signature_members(signature_folders)
    manifest = Manifest(
        format=FORMAT,
        case_id=case_id,
        tool_version=__version__,
        bundle_id=findings.bundle.id,
        catalogue_digest=findings.catalogue_digest,
        signature_folders=[f"{SIGNATURES_DIR}/{n}" for n in range(len(signature_folders))],
        members=entries(members),
    )
    return pack(members, manifest, signer), manifest, ids


# -- reading ----------------------------------------------------------------------------------


def unpack(members: dict[str, bytes], target: Path, signature_folders: Sequence[str] = ()) -> None:
    """Write verified members under ``target`` (their names were checked by
    :mod:`analyzer.provenance`), and every signature folder, empty ones too."""
    if target.exists():
        shutil.rmtree(target)
    for folder in signature_folders:
        (target / folder).mkdir(parents=True, exist_ok=True)
    for name, data in members.items():
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)


def attempts_of(members: dict[str, bytes]) -> list[Attempt]:
    return [Attempt(**a) for a in json.loads(members[ATTEMPTS])]


def scratch() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="culprit-handoff-")
