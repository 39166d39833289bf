"""Nothing lost, everything traceable: over every sample file and the bundled example,

* each file's records equal an independent count of its lines / JSON elements / CSV records,
  and ``records == rows + folded + blank + quarantined + duplicates``;
* each row's ``line`` and ``offset`` lead back to the exact input bytes it came from.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.conftest import EXAMPLE, SAMPLES
from tests.helpers import check_accounting, line_records, read_table

Ingest = Callable[..., Path]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CRI_PARTIAL = re.compile(r"^\S+ (?:stdout|stderr) P (.*)$")
BOM = b"\xef\xbb\xbf"


def bundles() -> list[Path]:
    found = [EXAMPLE]
    if SAMPLES.is_dir():
        found += sorted(p for p in SAMPLES.iterdir() if p.is_dir())
    return found


def independent_count(data: bytes, reader: str) -> int:
    """Records of a file counted without culprit's code."""
    body = data.removeprefix(BOM)
    if reader.startswith("cloud_logging") and body.lstrip()[:1] == b"[":
        return len(json.loads(body))
    if reader == "cloud_logging" and body.lstrip().startswith(b"{\n"):
        # Pretty-printed entries one after another (commas between them or not).
        return len(_concatenated_objects(body.decode()))
    if reader == "cloud_logging" and body.lstrip()[:1] not in (b"{", b"["):
        return len(list(csv.reader(io.StringIO(body.decode(), newline="")))) - 1
    if reader == "kubelet" and body.startswith(b"__CURSOR="):
        return body.count(b"__CURSOR=")  # journal export: one record per entry
    if reader == "diagon_api":
        # gcloud mldiagnostics output: every ML run, monitored event and analyzer report.
        document = json.loads(body)
        items = document if isinstance(document, list) else [document]
        return sum(1 + len(item.get("analyzerReports", [])) for item in items)
    if reader == "modelarts_api":
        return modelarts_api_records(json.loads(body))
    return line_records(data)


def _concatenated_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found: list[Any] = []
    at = 0
    while True:
        at = len(text) - len(text[at:].lstrip(" \t\r\n,"))
        if at >= len(text):
            return found
        value, at = decoder.raw_decode(text, at)
        found.append(value)


def modelarts_api_records(document: dict[str, Any]) -> int:
    """ModelArts API JSON: the job, its task statuses, running and recover records; each
    event; each stage of each running record."""
    if "metadata" in document:
        status = document.get("status") or {}
        running = status.get("running_records") or []
        recovers = sum(len(r.get("recover_records") or []) for r in running)
        return 1 + len(status.get("task_statuses") or []) + len(running) + recovers
    if "events" in document:
        return len(document["events"])
    return sum(len(r.get("stages") or []) for r in document["running_records"])


@pytest.mark.parametrize("bundle", bundles(), ids=lambda p: p.name)
def test_every_record_is_accounted_for(bundle: Path, ingest_case: Ingest) -> None:
    case = ingest_case(bundle)
    files = check_accounting(case).filter(pl.col("status") == "read")
    assert files.height > 0
    for record in files.iter_rows(named=True):
        data = (bundle / record["path"]).read_bytes()
        assert record["records"] == independent_count(data, record["reader"]), record["path"]


@pytest.mark.parametrize("bundle", bundles(), ids=lambda p: p.name)
def test_rows_lead_back_to_their_bytes(bundle: Path, ingest_case: Ingest) -> None:
    case = ingest_case(bundle)
    files = {r["file_id"]: r for r in read_table(case, "files").iter_rows(named=True)}
    rows = read_table(case, "rows")
    picked = rows.sample(n=min(rows.height, 300), seed=7) if rows.height else rows
    cache: dict[int, bytes] = {}
    for row in picked.iter_rows(named=True):
        path = files[row["file_id"]]["path"]
        data = cache.setdefault(row["file_id"], (bundle / path).read_bytes())
        offset, line = row["offset"], row["line"]
        assert data[:offset].count(b"\n") + 1 == line, (path, line)
        reader = row["reader"]
        if reader == "cloud_logging.jsonl":
            entry = json.loads(data[offset:].split(b"\n", 1)[0])
            assert entry.get("insertId") == row["insert_id"]
        elif reader == "cloud_logging.json_array":
            entry, _ = json.JSONDecoder().raw_decode(data[offset:].decode())
            assert entry.get("insertId") == row["insert_id"]
        elif reader.startswith("modelarts_api."):
            assert data[offset : offset + 1] == b"{", (path, line)
            json.JSONDecoder().raw_decode(data[offset:].decode())
        elif reader.startswith("modelarts."):
            raw = data[offset:].split(b"\n", 1)[0].decode("utf-8", "replace")
            first = row["message"].split("\n", 1)[0]
            # CANN error-code rows keep their code; logrus rows are the quoted msg.
            assert re.sub(r"^E[0-9A-Z]\d{4}: ", "", first) in raw, (path, line, raw, first)
        elif reader.startswith("diagon_api."):
            assert data[offset : offset + 1] == b"{", (path, line)
        elif reader.startswith(("text.", "diagon.")):
            raw = ANSI.sub("", data[offset:].split(b"\n", 1)[0].decode("utf-8", "replace"))
            raw = raw.rstrip("\r")
            first = row["message"].split("\n", 1)[0]
            partial = CRI_PARTIAL.match(raw)
            if partial:  # a CRI partial line: the row's text goes on with the next line
                assert first.startswith(partial.group(1)), (path, line, raw, first)
            else:
                assert raw.endswith(first), (path, line, raw, first)


def test_random_rows_are_stable_across_runs(ingest_case: Ingest) -> None:
    first = read_table(ingest_case(EXAMPLE), "rows")
    second = read_table(ingest_case(EXAMPLE), "rows")
    assert first.equals(second)
