"""Summaries of a case for ``culprit case info``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from analyzer import defaults
from analyzer.case.layout import CaseMeta
from analyzer.case.store import Case


class CaseInfo(BaseModel):
    """Everything ``culprit case info`` shows, as data (rendered by the CLI)."""

    path: str
    meta: CaseMeta
    by_source: list[dict[str, Any]]
    by_severity: list[dict[str, Any]]
    by_host: list[dict[str, Any]]
    hosts: int
    quarantine: list[dict[str, Any]]
    files_needing_attention: list[dict[str, Any]]
    unbalanced_files: list[dict[str, Any]]
    #: Per file with rows whose time the case could not place: how many, and the first line.
    out_of_range: list[dict[str, Any]] = []


def _records(connection: Any, sql: str) -> list[dict[str, Any]]:
    cursor = connection.execute(sql)
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def summarize(case: Case, *, top_hosts: int = defaults.TOP_HOSTS) -> CaseInfo:
    """Counts per source/reader/severity/host, quarantine reasons and problem files."""
    with case.connect() as connection:
        by_source = _records(
            connection,
            "SELECT source::VARCHAR AS source, reader::VARCHAR AS reader, count(*) AS rows, "
            "min(ts) AS first_ts, max(ts) AS last_ts FROM rows GROUP BY ALL ORDER BY rows DESC, "
            "source, reader",
        )
        by_severity = _records(
            connection,
            "SELECT severity::VARCHAR AS severity, count(*) AS rows FROM rows GROUP BY ALL "
            "ORDER BY rows DESC, severity",
        )
        hosts = connection.execute(
            "SELECT count(DISTINCT host) FROM rows WHERE host IS NOT NULL"
        ).fetchone()
        by_host = _records(
            connection,
            "SELECT coalesce(host::VARCHAR, '(none)') AS host, count(*) AS rows, "
            "count(*) FILTER (WHERE severity IN ('ERROR','CRITICAL','ALERT','EMERGENCY')) "
            "AS errors, min(ts) AS first_ts, max(ts) AS last_ts FROM rows GROUP BY ALL "
            f"ORDER BY rows DESC, host LIMIT {int(top_hosts)}",
        )
        quarantine = _records(
            connection,
            "SELECT kind, regexp_replace(reason, '[0-9][0-9,.]*', 'N', 'g') AS reason, "
            "count(*) AS entries, min(path || ':' || line) AS example FROM quarantine "
            "GROUP BY ALL ORDER BY entries DESC, kind, reason",
        )
        attention = _records(
            connection,
            "SELECT path, status, coalesce(reader, '') AS reader, coalesce(detail, '') AS detail "
            "FROM files WHERE status NOT IN ('read', 'archive', 'collection') "
            "OR reader = 'unrecognized' "
            "ORDER BY file_id",
        )
        unbalanced = _records(
            connection,
            "SELECT path, records, rows, folded, blank, quarantined, duplicates FROM files "
            "WHERE records <> rows + folded + blank + quarantined + duplicates ORDER BY file_id",
        )
        out_of_range = _records(
            connection,
            "SELECT f.path, count(*) AS rows, min(r.line) AS first_line FROM rows r "
            "JOIN files f USING (file_id) WHERE r.ts_quality = 'out_of_range' "
            "GROUP BY ALL ORDER BY min(r.file_id)",
        )
    return CaseInfo(
        path=str(case.path),
        meta=case.meta,
        by_source=by_source,
        by_severity=by_severity,
        by_host=by_host,
        hosts=int(hosts[0]) if hosts else 0,
        quarantine=quarantine,
        files_needing_attention=attention,
        unbalanced_files=unbalanced,
        out_of_range=out_of_range,
    )
