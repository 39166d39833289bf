"""Combine the parts N shards wrote into what one process would have written.

Ingest parts become a case: their row files are hard-linked into it (copied only across file
systems), and the bundle-wide steps run on small tables: de-duplication on the parts'
Cloud Logging keys, host resolution on the rows' host columns and the aliases readers found,
year placement on stamps. Match parts become the case's ``matches.parquet``: only the matches
move. Either way the parts are left as they were, so a merge can be run again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl
import pyarrow.parquet as pq

from analyzer.case.layout import MATCHES_FILE, QUARANTINE_FILE, CaseMeta
from analyzer.case.meta import build_meta
from analyzer.case.store import open_case
from analyzer.case.writer import CaseWriter
from analyzer.engine.shards import PartMeta, case_digest, read_part
from analyzer.errors import CaseError, UsageError
from analyzer.signatures.compile import empty_matches
from analyzer.signatures.matching import matches_file_meta, row_files, write_matches


@dataclass(frozen=True)
class MergeResult:
    """What :func:`merge` made: a case from ingest parts, or a case's matches from match
    parts."""

    kind: Literal["ingest", "match"]
    case: Path
    parts: int
    meta: CaseMeta
    #: match parts: how many matches the case now has.
    matches: int | None = None


def merge(parts: Sequence[Path], out: Path) -> MergeResult:
    """Merge the outputs of every shard of one ingest (into the case ``out``) or of one
    match (into ``out``'s matches).

    Raises:
        UsageError: no parts, parts of different kinds, runs or shard counts, or a shard
            missing or given twice.
        CaseError: a part is not one; match parts that were not made over the case ``out``;
            the case cannot be written.
    """
    if not parts:
        raise UsageError("merge needs the directories the shards wrote")
    metas = [(Path(path), read_part(Path(path))) for path in parts]
    kinds = {meta.kind for _, meta in metas}
    if len(kinds) != 1:
        raise UsageError("cannot merge ingest parts with match parts; merge each on its own")
    ordered = _complete(metas)
    if kinds == {"ingest"}:
        return _merge_ingest(ordered, out)
    return _merge_matches(ordered, out)


def _complete(metas: list[tuple[Path, PartMeta]]) -> list[tuple[Path, PartMeta]]:
    """The parts in shard order, once each shard 0..N-1 is there exactly once."""
    counts = {meta.slice.count for _, meta in metas}
    if len(counts) != 1:
        raise UsageError(f"the parts come from runs with different shard counts: {sorted(counts)}")
    count = counts.pop()
    by_index: dict[int, Path] = {}
    for path, meta in metas:
        index = meta.slice.index
        if index in by_index:
            raise UsageError(f"shard {index}/{count} is given twice: {by_index[index]} and {path}")
        by_index[index] = path
    missing = [str(i) for i in range(count) if i not in by_index]
    if missing:
        raise UsageError(
            f"shards {', '.join(missing)} of {count} are missing; a merge needs all of them"
        )
    return sorted(metas, key=lambda item: item[1].slice.index)


def _agree(metas: list[tuple[Path, PartMeta]], field: str, what: str) -> None:
    first_path, first = metas[0]
    for path, meta in metas[1:]:
        if getattr(meta, field) != getattr(first, field):
            raise UsageError(f"{path} and {first_path} are parts of different runs ({what})")


def _merge_ingest(metas: list[tuple[Path, PartMeta]], out: Path) -> MergeResult:
    for field, what in (
        ("tool_version", "culprit versions differ"),
        ("fingerprint", "the bundle differs"),
        ("settings", "the ingest options differ"),
        ("inputs", "the inputs differ"),
    ):
        _agree(metas, field, what)
    first = metas[0][1]
    writer = CaseWriter(out)
    try:
        for path, _ in metas:
            writer.adopt_part(path)
        # One ingest lists files and quarantine in file order; shards interleave files.
        writer.files.sort(key=lambda record: int(record["file_id"]))
        issues = pl.concat(
            [pl.read_parquet(path / QUARANTINE_FILE) for path, _ in metas], how="vertical"
        )
        writer.add_issue_table(issues.sort("file_id", maintain_order=True).to_arrow())
        fingerprint = first.fingerprint or ""
        meta = writer.commit(
            lambda files: build_meta(first.inputs, fingerprint, first.settings, files)
        )
    except BaseException:
        writer.abort()
        raise
    return MergeResult("ingest", out, len(metas), meta)


def _merge_matches(metas: list[tuple[Path, PartMeta]], out: Path) -> MergeResult:
    case = open_case(out)
    digest = case_digest(case)
    for path, meta in metas:
        if meta.case_digest != digest:
            raise CaseError(
                f"{path} was matched over another ingest of this case (or another case); "
                "run the match shards again",
                path=str(out),
            )
    for field, what in (
        ("tool_version", "culprit versions differ"),
        ("catalogue_digest", "the signature catalogues differ"),
        ("backend", "the backends differ"),
    ):
        _agree(metas, field, what)
    covered = sorted(name for _, meta in metas for name in meta.row_files)
    expected = sorted(path.name for path in row_files(case))
    if covered != expected:
        raise CaseError(
            "the match parts do not cover the case's row files exactly once; "
            "run the match shards again",
            path=str(out),
        )
    tables = [pl.read_parquet(path / MATCHES_FILE) for path, _ in metas]
    found = pl.concat(tables) if tables else empty_matches()
    found = found.sort("row_id", "signature")
    first = metas[0][1]
    rows = sum(pq.read_metadata(path).num_rows for path in row_files(case))
    write_matches(
        found,
        case.path / MATCHES_FILE,
        matches_file_meta(
            first.backend or "",
            first.catalogue_digest or "",
            first.signatures or 0,
            rows,
            found.height,
        ),
    )
    return MergeResult("match", out, len(metas), case.meta, found.height)
