"""Every kind of bad input named in the foundation issue: rows for what is readable, and a
quarantine entry (file, line, offset, reason) or a one-line error for the rest."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer import api
from analyzer.errors import BundleError
from tests.helpers import read_table

Ingest = Callable[..., Path]


def _entry(i: int, **extra: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "insertId": f"id{i:04d}",
        "logName": "projects/p/logs/stderr",
        "resource": {"type": "k8s_container", "labels": {"pod_name": f"pod-{i % 3}"}},
        "severity": "ERROR",
        "textPayload": f"I1129 18:35:{i % 60:02d}.000000    1 train.py:211] completed step: {i}\n",
        "timestamp": f"2026-11-29T18:35:{i % 60:02d}.{i:09d}Z",
    }
    entry.update(extra)
    return entry


def _quarantine(case: Path) -> pl.DataFrame:
    return read_table(case, "quarantine")


def _file(case: Path, path: str) -> dict[str, Any]:
    files = read_table(case, "files").filter(pl.col("path") == path)
    assert files.height == 1, files
    row: dict[str, Any] = files.row(0, named=True)
    return row


def test_truncated_gzip(tmp_path: Path, ingest_case: Ingest) -> None:
    text = b"".join(
        b"I1129 18:35:%02d.000000    1 a.cc:1] line %d\n" % (i % 60, i) for i in range(5000)
    )
    packed = gzip.compress(text)
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "worker.log.gz").write_bytes(packed[: len(packed) // 2])
    case = ingest_case(bundle)
    rows = read_table(case, "rows")
    assert 0 < rows.height < 5000
    assert rows["line"].to_list() == list(range(1, rows.height + 1))
    record = _file(case, "worker.log.gz")
    assert record["status"] == "partial"
    assert record["compression"] == "gzip"
    (issue,) = _quarantine(case).filter(pl.col("kind") == "file").iter_rows(named=True)
    assert issue["path"] == "worker.log.gz"
    assert "gzip stream is truncated" in issue["reason"]
    # The damage is in the line after the last row; what it left of that line is quarantined.
    assert issue["line"] == rows.height + 1
    decoded = zlib.decompressobj(wbits=31).decompress(packed[: len(packed) // 2])
    assert rows.height == decoded.count(b"\n")
    (cut,) = _quarantine(case).filter(pl.col("kind") == "dropped").iter_rows(named=True)
    assert cut["line"] == issue["line"]
    assert cut["raw"] == decoded[decoded.rfind(b"\n") + 1 :]
    assert f"after its first {len(cut['raw']):,} bytes" in cut["reason"]


def test_json_array_cut_in_half(tmp_path: Path, ingest_case: Ingest) -> None:
    entries = [_entry(i) for i in range(20)]
    data = json.dumps(entries, indent=2).encode()
    cut = data[: len(data) // 2]
    path = tmp_path / "gcloud.json"
    path.write_bytes(cut)
    case = ingest_case(path)
    rows = read_table(case, "rows")
    complete = cut.count(b"\n  },")
    assert rows.height == complete
    assert rows["reader"].cast(pl.String).unique().to_list() == ["cloud_logging.json_array"]
    dropped = _quarantine(case).filter(pl.col("kind") == "dropped")
    (issue,) = dropped.iter_rows(named=True)
    assert "not closed" in issue["reason"]
    offset = int(issue["offset"])
    assert cut[offset : offset + 1] == b"{"
    assert issue["line"] == cut[:offset].count(b"\n") + 1
    record = _file(case, "gcloud.json")
    assert record["records"] == record["rows"] + record["quarantined"] == complete + 1


def test_jsonl_with_one_corrupt_line_in_the_middle(tmp_path: Path, ingest_case: Ingest) -> None:
    lines = [json.dumps(_entry(i)) for i in range(9)]
    lines[4] = lines[4][: len(lines[4]) // 2]
    path = tmp_path / "stderr.jsonl"
    path.write_text("\n".join(lines) + "\n")
    case = ingest_case(path)
    rows = read_table(case, "rows")
    assert rows["line"].to_list() == [1, 2, 3, 4, 6, 7, 8, 9]
    (issue,) = _quarantine(case).iter_rows(named=True)
    assert (issue["kind"], issue["line"], issue["reason"]) == ("dropped", 5, "not valid JSON")
    assert issue["offset"] == sum(len(line) + 1 for line in lines[:4])
    assert issue["raw"] == lines[4].encode()


def test_non_utf8_bytes(tmp_path: Path, ingest_case: Ingest) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "npu.log").write_bytes(
        b"I1129 18:35:15.000000    1 a.cc:1] ok\n"
        b"E1129 18:35:16.000000    1 a.cc:2] \xd6\xd0\xce\xc4 gbk text\n"
    )
    entry = json.dumps(_entry(1)).encode().replace(b"completed", b"compl\xffeted")
    (bundle / "stderr.jsonl").write_bytes(entry + b"\n")
    case = ingest_case(bundle)
    rows = read_table(case, "rows").sort("file_id", "line")
    assert rows.height == 3
    messages = rows["message"].to_list()
    assert "\ufffd" in messages[1]
    assert "compl\ufffdeted" in messages[2]
    kept = _quarantine(case).filter(pl.col("kind") == "kept").sort("path")
    assert kept.select("path", "line").rows() == [("npu.log", 2), ("stderr.jsonl", 1)]
    assert all("UTF-8" in reason for reason in kept["reason"])


def test_fifty_megabyte_single_line(tmp_path: Path, ingest_case: Ingest) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    giant = b"E1129 18:35:16.000000    1 a.cc:2] " + b"x" * (50 << 20)
    (bundle / "big.log").write_bytes(b"first\n" + giant + b"\nlast\n")
    case = ingest_case(bundle)
    rows = read_table(case, "rows").sort("line")
    assert rows["line"].to_list() == [1, 2, 3]
    assert len(rows["message"][1]) < (1 << 20)
    assert rows["severity"].cast(pl.String).to_list()[1] == "ERROR"
    (issue,) = _quarantine(case).iter_rows(named=True)
    assert issue["kind"] == "kept" and issue["line"] == 2 and issue["offset"] == 6
    assert f"{len(giant):,} bytes" in issue["reason"]


def test_fifty_megabyte_json_line_is_quarantined(tmp_path: Path, ingest_case: Ingest) -> None:
    path = tmp_path / "s.jsonl"
    big = json.dumps(_entry(2, textPayload="y" * (50 << 20)))
    path.write_text(json.dumps(_entry(1)) + "\n" + big + "\n" + json.dumps(_entry(3)) + "\n")
    case = ingest_case(path)
    assert read_table(case, "rows")["line"].to_list() == [1, 3]
    (issue,) = _quarantine(case).iter_rows(named=True)
    assert issue["kind"] == "dropped" and issue["line"] == 2
    assert "longer than --max-line-bytes" in issue["reason"]


def test_empty_file(tmp_path: Path, ingest_case: Ingest) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "empty.log").write_bytes(b"")
    (bundle / "other.log").write_bytes(b"hello\n")
    case = ingest_case(bundle)
    record = _file(case, "empty.log")
    assert (record["records"], record["rows"], record["status"]) == (0, 0, "read")
    assert _quarantine(case).height == 0


def test_csv_with_missing_columns(tmp_path: Path, ingest_case: Ingest) -> None:
    path = tmp_path / "downloaded-logs.csv"
    path.write_text(
        "severity,logName,textPayload,resource.type\n"
        'ERROR,projects/p/logs/stderr,"E1129 18:35:15.000000 1 a.cc:1] boom",k8s_container\n'
        "INFO,projects/p/logs/stderr\n"
        'INFO,projects/p/logs/stdout,"plain",k8s_container\n'
    )
    case = ingest_case(path, reader="cloud_logging")
    rows = read_table(case, "rows").sort("line")
    assert rows["line"].to_list() == [2, 4]
    issues = _quarantine(case).sort("line")
    assert issues.select("kind", "line").rows() == [("file", 1), ("dropped", 3)]
    assert "no 'timestamp' column" in issues["reason"][0]
    assert "2 fields but the header has 4" in issues["reason"][1]


def test_archive_with_dotdot_member(tmp_path: Path, ingest_case: Ingest) -> None:
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in (
            ("../../etc/cron.d/evil", b"* * * * * root sh\n"),
            ("logs/ok.log", b"fine\n"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    case = ingest_case(archive)
    files = read_table(case, "files")
    refused = files.filter(pl.col("status") == "refused")
    assert refused["path"].to_list() == ["../../etc/cron.d/evil"]
    assert "escapes the bundle" in refused["detail"][0]
    assert read_table(case, "rows")["message"].to_list() == ["fine"]
    assert not (tmp_path / "etc").exists()
    (issue,) = _quarantine(case).iter_rows(named=True)
    assert issue["kind"] == "file" and issue["path"] == "../../etc/cron.d/evil"


def test_symlink_out_of_bundle(tmp_path: Path, ingest_case: Ingest) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read me\n")
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "real.log").write_text("inside\n")
    os.symlink(secret, bundle / "escape.log")
    os.symlink(bundle / "real.log", bundle / "alias.log")
    case = ingest_case(bundle)
    files = read_table(case, "files").sort("path")
    assert files.select("path", "status").rows() == [
        ("alias.log", "link"),
        ("escape.log", "refused"),
        ("real.log", "read"),
    ]
    assert read_table(case, "rows")["message"].to_list() == ["inside"]


def test_timestamp_in_unknown_format(tmp_path: Path, ingest_case: Ingest) -> None:
    path = tmp_path / "s.jsonl"
    entry = _entry(1, timestamp="29/11/2026 18:35:15", textPayload="plain text, no prefix\n")
    path.write_text(json.dumps(_entry(0)) + "\n" + json.dumps(entry) + "\n")
    case = ingest_case(path)
    rows = read_table(case, "rows").sort("line")
    assert rows["ts"].is_null().to_list() == [False, True]
    assert rows["ts_quality"].cast(pl.String).to_list() == ["exact", "missing"]
    (issue,) = _quarantine(case).iter_rows(named=True)
    assert issue["kind"] == "kept" and issue["line"] == 2
    assert "'29/11/2026 18:35:15' is not an RFC 3339 time" in issue["reason"]


def test_missing_input_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError) as caught:
        api.ingest([tmp_path / "nope"], tmp_path / "case")
    assert str(caught.value) == f"{tmp_path / 'nope'}: no such file or directory"
    assert not (tmp_path / "case").exists()


def test_a_year_no_timestamp_can_hold_is_a_usage_error(tmp_path: Path) -> None:
    from analyzer.errors import UsageError

    (tmp_path / "b.log").write_text("I1129 18:00:00.000000    1 main.go:1] hello\n")
    with pytest.raises(UsageError, match="--year 3000: must be between 1678 and 2261"):
        api.ingest([tmp_path / "b.log"], tmp_path / "case", options=api.ReadOptions(year=3000))
