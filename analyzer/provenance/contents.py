"""Each member of a handoff is what its name says, and the ids the manifest carries are the
ones inside: ``findings.json``, ``case/case.json`` and ``case/matches.parquet`` name the same
bundle, catalogue and tool version as the manifest, and every cited or matched row is packed.

This runs after the sha256 checks, so it only fails on a handoff whose manifest was rewritten
along with its members (or by a culprit that packs differently): the error names the member,
and no such member reaches the re-diagnosis (where it would fail without saying which)."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import Any, Final
from xml.etree import ElementTree

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import TypeAdapter, ValidationError

from analyzer.case.layout import (
    CASE_FORMAT,
    DUPLICATES_SCHEMA,
    FILES_SCHEMA,
    QUARANTINE_SCHEMA,
    CaseMeta,
)
from analyzer.diagnose.attempts import Attempt
from analyzer.diagnose.findings import Findings
from analyzer.errors import HandoffError
from analyzer.hosts import HOSTS_SCHEMA
from analyzer.provenance.layout import (
    ATTEMPTS,
    CASE_META,
    DUPLICATES,
    EVIDENCE,
    FILES,
    FINDINGS,
    HOSTS,
    MATCHES,
    QUARANTINE,
    REPORT,
    TIMELINE,
)
from analyzer.provenance.manifest import Manifest
from analyzer.schema import CANONICAL_SCHEMA
from analyzer.signatures.matching import ARROW_SCHEMA, META_KEY


def _polars(schema: pa.Schema) -> pl.Schema:
    frame = pl.from_arrow(schema.empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


#: The columns (and types they must cast to) of each Parquet member.
TABLES: Final[dict[str, pl.Schema]] = {
    EVIDENCE: _polars(CANONICAL_SCHEMA),
    MATCHES: _polars(ARROW_SCHEMA),
    HOSTS: pl.Schema(HOSTS_SCHEMA),
    FILES: _polars(FILES_SCHEMA),
    QUARANTINE: _polars(QUARANTINE_SCHEMA),
    DUPLICATES: _polars(DUPLICATES_SCHEMA),
}


@dataclass(frozen=True)
class Contents:
    """The parsed members the re-diagnosis and its comparison need."""

    findings: Findings
    attempts: list[Attempt]
    meta: CaseMeta


def check_contents(manifest: Manifest, members: dict[str, bytes], where: str) -> Contents:
    """Parse and cross-check the members (see the module's docstring).

    Raises:
        HandoffError: naming the member that is not what its name says, or whose ids differ
            from the manifest's.
    """
    try:
        members[REPORT].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HandoffError(f"member {REPORT} is not UTF-8 text: {exc.reason}", path=where) from None
    if TIMELINE in members:
        _check_picture(members[TIMELINE], where)
    findings = _model(members, FINDINGS, TypeAdapter(Findings), where)
    attempts = _model(members, ATTEMPTS, TypeAdapter(list[Attempt]), where)
    meta = _model(members, CASE_META, TypeAdapter(CaseMeta), where)
    tables = {name: _table(members[name], name, schema, where) for name, schema in TABLES.items()}
    _same(FINDINGS, "bundle.id", findings.bundle.id, manifest.bundle_id, where)
    _same(FINDINGS, "catalogue_digest", findings.catalogue_digest, manifest.catalogue_digest, where)
    _same(FINDINGS, "tool_version", findings.tool_version, manifest.tool_version, where)
    _same(CASE_META, "format", meta.format, CASE_FORMAT, where)
    _same(CASE_META, "bundle.content_hash", meta.bundle.content_hash, manifest.bundle_id, where)
    _same(CASE_META, "options.handoff", meta.options.get("handoff"), manifest.case_id, where)
    matched = _matches_meta(members[MATCHES], where)
    digest, version = matched.get("catalogue_digest"), matched.get("tool_version")
    _same(MATCHES, "catalogue_digest", digest, manifest.catalogue_digest, where)
    _same(MATCHES, "tool_version", version, manifest.tool_version, where)
    packed = tables[EVIDENCE]["row_id"]
    unpacked = tables[MATCHES].filter(~pl.col("row_id").is_in(packed.implode()))
    if unpacked.height:
        raise HandoffError(
            f"member {MATCHES}: {unpacked.height} matches name rows {EVIDENCE} does not hold",
            path=where,
        )
    missing = sorted(_cited(findings) - set(packed.to_list()))
    if missing:
        raise HandoffError(
            f"member {FINDINGS} cites row {missing[0]}, which {EVIDENCE} does not hold",
            path=where,
        )
    return Contents(findings, attempts, meta)


#: What a packed picture may not hold: it is opened in browsers, so nothing that runs or
#: loads (scripts, handlers, links out, embedded documents) and no DTD (entity expansion).
_UNSAFE_SVG: Final = re.compile(
    rb"<!DOCTYPE|<!ENTITY|<script|<foreignObject|\son[a-z]+\s*=|href\s*=\s*[\"'](?!#)",
    re.IGNORECASE,
)


def _check_picture(data: bytes, where: str) -> None:
    """``timeline.svg`` is plain SVG: UTF-8, well-formed, an ``svg`` root, nothing active."""
    unsafe = _UNSAFE_SVG.search(data)
    if unsafe is not None:
        raise HandoffError(
            f"member {TIMELINE} holds {unsafe.group(0).decode(errors='replace')!r}, which a "
            "picture of culprit never does",
            path=where,
        )
    try:
        root = ElementTree.fromstring(data.decode("utf-8"))
    except (UnicodeDecodeError, ElementTree.ParseError) as exc:
        raise HandoffError(f"member {TIMELINE} is not an SVG document: {exc}", path=where) from None
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        raise HandoffError(f"member {TIMELINE} is not an SVG document: root {root.tag}", path=where)


def _model(members: dict[str, bytes], name: str, adapter: TypeAdapter[Any], where: str) -> Any:
    try:
        return adapter.validate_json(members[name])
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(the document)"
        message = f"member {name} is not valid: {field}: {first['msg']}"
        raise HandoffError(message, path=where) from None


def _table(data: bytes, name: str, schema: pl.Schema, where: str) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(io.BytesIO(data))
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HandoffError(f"member {name} is not a Parquet file: {first}", path=where) from None
    if frame.columns != list(schema):
        raise HandoffError(
            f"member {name} has columns {frame.columns}, not {list(schema)}", path=where
        )
    try:
        return frame.cast(schema, strict=True)
    except (pl.exceptions.PolarsError, pa.ArrowException) as exc:
        message = f"member {name} has a column of the wrong type: {str(exc).splitlines()[0]}"
        raise HandoffError(message, path=where) from None


def _matches_meta(data: bytes, where: str) -> dict[str, Any]:
    raw = (pq.read_metadata(io.BytesIO(data)).metadata or {}).get(META_KEY.encode())
    try:
        found = json.loads(raw) if raw else {}
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise HandoffError(f"member {MATCHES}: its {META_KEY} metadata is not JSON", path=where)
    return found


def _same(member: str, field: str, found: object, expected: object, where: str) -> None:
    if found != expected:
        raise HandoffError(
            f"member {member}: {field} is {found!r}, but the manifest says {expected!r}",
            path=where,
        )


def _cited(findings: Findings) -> set[int]:
    """Row ids of every row ``findings`` quotes."""
    ids: set[int] = set()
    for verdict in findings.attempts:
        rows = verdict.evidence + verdict.timeline + verdict.leads
        ids.update(row.citation.row_id for row in rows)
        if verdict.first_error is not None:
            ids.add(verdict.first_error.citation.row_id)
    return ids
