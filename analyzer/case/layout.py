"""Names and metadata of a case directory.

```
CASE/
  case.json            CaseMeta (written last: its presence means the case is complete)
  files.parquet        inventory: one row per bundle member
  quarantine.parquet   what could not become a row, or became one only after a repair
  duplicates.parquet   entries dropped as duplicates of an earlier row (Cloud Logging insertId)
  hosts.parquet        every alias of every host, with the row that proved it
  rows/part-*.parquet  canonical rows, zstd, ~128k-row groups
  matches.parquet      signature matches (``culprit match``; absent until then)
  templates.parquet    log templates: id, text, rows, hosts, first row (the first analysis)
  template_hosts.parquet  rows per template x host x time bucket
  template_rows.parquet   the template id of every row
```
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

CASE_FORMAT: Final = "culprit-case/1"
META_FILE: Final = "case.json"
FILES_FILE: Final = "files.parquet"
QUARANTINE_FILE: Final = "quarantine.parquet"
DUPLICATES_FILE: Final = "duplicates.parquet"
HOSTS_FILE: Final = "hosts.parquet"
ROWS_DIR: Final = "rows"
#: Written by ``culprit match``: one row per (row, signature) match, and the matched rows'
#: context through the ``matches`` query view.
MATCHES_FILE: Final = "matches.parquet"
#: Written with the matches: one row per log template (analyzer.signatures.templates).
TEMPLATES_FILE: Final = "templates.parquet"
#: Rows per template x host x time bucket, with the first and last row of each cell.
TEMPLATE_HOSTS_FILE: Final = "template_hosts.parquet"
#: The template id of every row, with its time and host (row_id, template_id, ts, host).
TEMPLATE_ROWS_FILE: Final = "template_rows.parquet"

# A shard's output (``culprit ingest --shard``/``culprit match --shard``): ``part.json`` says
# what it is; an ingest part also holds files, quarantine and rows like a case, plus the
# de-duplication keys and host aliases the merge needs; a match part holds matches.parquet.
PART_META_FILE: Final = "part.json"
PART_KEYS_FILE: Final = "dedup-keys.parquet"
PART_ALIASES_FILE: Final = "host-aliases.parquet"

FILES_SCHEMA: Final = pa.schema(
    [
        ("file_id", pa.int32()),
        ("path", pa.string()),
        ("status", pa.string()),
        ("reader", pa.string()),
        ("recognized", pa.bool_()),
        ("sniff_score", pa.float32()),
        ("compression", pa.string()),
        ("bytes", pa.int64()),
        ("decoded_bytes", pa.int64()),
        ("sha256", pa.string()),
        ("mtime", pa.timestamp("s", tz="UTC")),
        ("on_disk", pa.bool_()),
        ("records", pa.int64()),
        ("rows", pa.int64()),
        ("folded", pa.int64()),
        ("blank", pa.int64()),
        ("quarantined", pa.int64()),
        ("repaired", pa.int64()),
        ("duplicates", pa.int64()),
        ("out_of_range", pa.int64()),
        ("ts_min", pa.timestamp("ns", tz="UTC")),
        ("ts_max", pa.timestamp("ns", tz="UTC")),
        ("year_from", pa.string()),
        ("detail", pa.string()),
    ]
)

QUARANTINE_SCHEMA: Final = pa.schema(
    [
        ("file_id", pa.int32()),
        ("path", pa.string()),
        ("line", pa.int32()),
        ("offset", pa.int64()),
        ("kind", pa.string()),
        ("reason", pa.string()),
        ("raw", pa.binary()),
    ]
)

DUPLICATES_SCHEMA: Final = pa.schema(
    [
        ("file_id", pa.int32()),
        ("line", pa.int32()),
        ("offset", pa.int64()),
        ("insert_id", pa.string()),
        ("kept_row_id", pa.int64()),
    ]
)


class InputInfo(BaseModel):
    """One input of the bundle as given on the command line."""

    model_config = ConfigDict(extra="forbid")

    path: str
    kind: str
    bytes: int


class BundleInfo(BaseModel):
    """What was ingested: inputs and two identities of them."""

    model_config = ConfigDict(extra="forbid")

    inputs: list[InputInfo]
    #: From names, sizes and modification times (cheap; decides a no-op re-ingest).
    fingerprint: str
    #: sha256 over every on-disk input file (decides a no-op when only timestamps changed).
    content_hash: str


class Counts(BaseModel):
    """Totals over the whole case."""

    model_config = ConfigDict(extra="forbid")

    files: int = 0
    files_read: int = 0
    files_unrecognized: int = 0
    files_refused: int = 0
    files_partial: int = 0
    records: int = 0
    rows: int = 0
    folded: int = 0
    blank: int = 0
    quarantined: int = 0
    repaired: int = 0
    duplicates: int = 0
    #: Rows whose time the case cannot place (``ts_quality = out_of_range``; they are rows).
    out_of_range: int = 0


class CaseMeta(BaseModel):
    """``case.json``. ``created_at`` is the only field that differs between two ingests of
    the same bundle with the same options and tool version."""

    model_config = ConfigDict(extra="forbid")

    format: str = CASE_FORMAT
    tool_version: str
    created_at: dt.datetime
    bundle: BundleInfo
    options: dict[str, Any]
    counts: Counts
    first_ts: dt.datetime | None = None
    last_ts: dt.datetime | None = None


def meta_path(case: Path) -> Path:
    """Where ``case.json`` lives."""
    return case / META_FILE
