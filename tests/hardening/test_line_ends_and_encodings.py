"""Issue #24, items 5 and 6 and the decoding items of its "minor" list, end to end through
``api.ingest`` (and ``api.analyze`` for the citation): inputs a real bundle holds, built here.

* 6: a file whose lines end in a lone CR was one record (100 lines, 1 row; the citation of an
  error on line 73 said line 1 and the first line's time). Now one row per line, with its own
  line, offset and time; LF and CRLF files with progress-bar CRs keep their lines.
* 5: one malformed element of a gcloud JSON array swallowed the rest of the array (49
  elements uncounted) or, for a stray ``}``, produced bogus rows from the nested objects. Now
  that element is quarantined with its line and every other element is a row.
* minor: NUL bytes at the start of a text file (copytruncate) made it binary; UTF-16 with a
  BOM was refused as binary. Now the NULs are skipped (and counted in a quarantine note) and
  UTF-16 is decoded.

Every case checks that nothing is lost (:func:`tests.helpers.check_accounting`: records =
rows + folded + blank + quarantined, per file and in ``case.json``) and, for line-framed
files, that the records are the lines counted without culprit's code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer import api
from tests.helpers import check_accounting, line_records, ns, read_table

Ingest = Callable[..., Path]

#: A line the catalogue knows as a root cause (signatures/cuda/cublas-status-error.toml).
CUBLAS = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
    "`cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F)`"
)


def _stamp(index: int) -> str:
    """One line a minute from 10:00, so line n is dated n - 1 minutes after 10:00."""
    return f"2024-05-01T{10 + index // 60:02d}:{index % 60:02d}:00Z"


def _log_lines(count: int = 100, error_line: int = 73) -> list[str]:
    lines = [f"{_stamp(i)} worker-0 step {i + 1} done" for i in range(count)]
    lines[error_line - 1] = f"{_stamp(error_line - 1)} worker-0 {CUBLAS}"
    return lines


def _ingest_one(tmp_path: Path, ingest_case: Ingest, name: str, data: bytes) -> Any:
    bundle = tmp_path / "bundle"
    bundle.mkdir(exist_ok=True)
    (bundle / name).write_bytes(data)
    case = ingest_case(bundle, jobs=1)
    files = check_accounting(case)
    assert files.height == 1
    rows = read_table(case, "rows")
    rows = rows.sort("line") if rows.height else rows
    quarantine = read_table(case, "quarantine")
    return files.row(0, named=True), rows, quarantine


# -- 6: lone CR line ends -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ending", "tail"),
    [
        pytest.param(b"\r", b"", id="cr-only"),
        # A tool that ends its last line with CRLF: lone CRs still clearly end the lines.
        pytest.param(b"\r", b"\n", id="cr-then-final-lf"),
    ],
)
def test_lone_cr_line_ends_give_one_row_per_line(
    tmp_path: Path, ingest_case: Ingest, ending: bytes, tail: bytes
) -> None:
    lines = _log_lines()
    data = ending.join(line.encode() for line in lines) + ending + tail
    record, rows, _ = _ingest_one(tmp_path, ingest_case, "train.log", data)
    assert record["status"] == "read"
    assert record["records"] == record["rows"] == 100 == line_records(data)
    assert rows["line"].to_list() == list(range(1, 101))
    for row in rows.iter_rows(named=True):
        line = lines[row["line"] - 1]
        # Offsets point at the line's own bytes, and each row has its own time.
        assert data[row["offset"] :].startswith(line.encode())
        assert row["message"] in line
        assert row["ts"] is not None
    error = rows.filter(pl.col("line") == 73).row(0, named=True)
    assert CUBLAS in error["message"]
    assert rows.filter(pl.col("line") == 73)["ts"].dt.epoch("ns").item() == ns(_stamp(72))


def test_the_citation_of_an_error_in_a_lone_cr_file_is_its_own_line(tmp_path: Path) -> None:
    """Before: the whole file was row 1, so the first error was cited as line 1 at 10:00."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "train.log").write_bytes(b"\r".join(x.encode() for x in _log_lines()) + b"\r")
    result = api.analyze([bundle], tmp_path / "out", api.AnalyzeSettings(jobs=1))
    first = result.findings.verdict.first_error
    assert first is not None
    assert (first.citation.path, first.citation.line) == ("train.log", 73)
    assert first.ts is not None
    assert first.ts.isoformat() == "2024-05-01T11:12:00+00:00"
    assert CUBLAS in first.message


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_progress_bar_returns_stay_inside_their_line(
    tmp_path: Path, ingest_case: Ingest, newline: bytes
) -> None:
    """tqdm redraws its bar after a ``\\r``, dozens of times per line: an LF or CRLF file keeps
    its lines as they are, the redraws inside them."""
    bar = b"".join(b"\r epoch 1: %3d%%|####| %d/40" % (i * 100 // 40, i) for i in range(41))
    lines = [b"2024-05-01T10:00:00Z start", bar, b"2024-05-01T10:00:09Z epoch 1 done"]
    data = newline.join(lines) + newline
    record, rows, _ = _ingest_one(tmp_path, ingest_case, "train.log", data)
    assert record["records"] == 3 == line_records(data)
    assert rows["line"].to_list()[-1] == 3
    assert rows.filter(pl.col("line") == 3)["message"].item().endswith("epoch 1 done")


# -- 5: a malformed element of a gcloud array -------------------------------------------------


def _entries(count: int = 50) -> list[dict[str, Any]]:
    return [
        {
            "insertId": f"id-{i:03d}",
            "logName": "projects/p/logs/stdout",
            "resource": {"type": "k8s_container", "labels": {"pod_name": f"pod-{i % 4}"}},
            "timestamp": f"2024-05-01T10:00:{i:02d}Z",
            "severity": "INFO",
            "textPayload": f"entry {i}",
        }
        for i in range(count)
    ]


def _damage(text: str, how: str) -> str:
    """Break element 1 (``entry 1``) of a gcloud array the way a damaged export does."""
    head, sep, rest = text.partition('"textPayload": "entry 1"')
    assert sep
    if how == "missing-close":  # the element's "}" and "," are gone (the next "{" stays)
        close = rest.index("}")
        start = rest.index("{", close)
        line_start = rest.rfind("\n", close, start)
        return head + sep + rest[:close] + rest[start if line_start < 0 else line_start :]
    if how == "missing-brace":  # only the "}" is gone, the "," stays
        close = rest.index("}")
        return head + sep + rest[:close] + rest[close + 1 :]
    if how == "stray-brace":
        close = rest.index("}")
        return head + sep + rest[: close + 1] + "}" + rest[close + 1 :]
    if how == "unterminated-string":
        return head + sep[:-1] + rest
    raise AssertionError(how)


@pytest.mark.parametrize("indent", [2, None], ids=["gcloud", "compact"])
@pytest.mark.parametrize(
    "how", ["missing-close", "missing-brace", "stray-brace", "unterminated-string"]
)
def test_one_malformed_element_is_quarantined_and_the_rest_read(
    tmp_path: Path, ingest_case: Ingest, how: str, indent: int | None
) -> None:
    text = _damage(json.dumps(_entries(), indent=indent), how)
    data = text.encode()
    record, rows, quarantine = _ingest_one(tmp_path, ingest_case, "export.json", data)
    assert record["reader"] == "cloud_logging"
    assert record["status"] == "read"
    dropped = quarantine.filter(pl.col("kind") == "dropped")
    assert dropped.height == 1
    entry = dropped.row(0, named=True)
    messages = rows["message"].to_list()
    if how == "stray-brace":
        # Element 1 is whole; the "}" after it is what is quarantined, on its own line.
        assert sorted(messages) == sorted(f"entry {i}" for i in range(50))
        assert record["records"] == 51
        assert entry["raw"] == b"}"
        assert data[entry["offset"] : entry["offset"] + 1] == b"}"
    else:
        assert sorted(messages) == sorted(f"entry {i}" for i in range(50) if i != 1)
        assert record["records"] == 50
        assert "malformed JSON element" in entry["reason"]
        # The quarantined element is element 1, cited at the line and offset of its "{".
        assert data[entry["offset"] :].startswith(b"{")
        assert b'"id-001"' in entry["raw"]
    assert entry["line"] == data[: entry["offset"]].count(b"\n") + 1
    # Every row leads back to its element.
    for row in rows.iter_rows(named=True):
        assert data[row["offset"] :].startswith(b"{")
        assert data[: row["offset"]].count(b"\n") + 1 == row["line"]


# -- minor: NUL bytes at the start, UTF-16 with a BOM ----------------------------------------


@pytest.mark.parametrize("nuls", [1, 5000, 3 << 20], ids=["one", "5000", "3MiB"])
def test_nul_bytes_at_the_start_are_skipped_not_fatal(
    tmp_path: Path, ingest_case: Ingest, nuls: int
) -> None:
    """copytruncate: the writer goes on at its old offset, the file starts with a hole."""
    lines = _log_lines(20, error_line=7)
    body = "\n".join(lines).encode() + b"\n"
    data = b"\x00" * nuls + body
    record, rows, quarantine = _ingest_one(tmp_path, ingest_case, "live.log", data)
    assert record["status"] == "read"
    assert record["records"] == record["rows"] == 20 == line_records(data)
    assert rows["line"].to_list() == list(range(1, 21))
    for row in rows.iter_rows(named=True):
        assert data[row["offset"] :].startswith(lines[row["line"] - 1].encode())
    (note,) = quarantine.filter(pl.col("kind") == "kept").iter_rows(named=True)
    assert note["line"] == 1
    assert f"{nuls:,} NUL bytes at the start" in note["reason"]


def test_a_file_still_binary_after_its_leading_nuls_is_refused(
    tmp_path: Path, ingest_case: Ingest
) -> None:
    record, rows, _ = _ingest_one(tmp_path, ingest_case, "core", b"\x00" * 64 + b"\x7fELF\x00\x01")
    assert record["status"] == "binary"
    assert rows.height == 0


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_a_bom_is_decoded(tmp_path: Path, ingest_case: Ingest, codec: str) -> None:
    """Windows exports (PowerShell ``Out-File``, Event Viewer): UTF-16 with a BOM, CRLF."""
    lines = _log_lines(30, error_line=12)
    lines[3] = f"{_stamp(3)} worker-0 température élevée 温度过高"
    text = "\r\n".join(lines) + "\r\n"
    bom = {"utf-16": b"", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[codec]
    data = bom + text.encode(codec)
    record, rows, quarantine = _ingest_one(tmp_path, ingest_case, "events.log", data)
    assert record["status"] == "read"
    assert record["records"] == record["rows"] == 30 == line_records(data)
    assert rows["line"].to_list() == list(range(1, 31))
    assert (
        rows.filter(pl.col("line") == 4)["message"].item().endswith("température élevée 温度过高")
    )
    assert CUBLAS in rows.filter(pl.col("line") == 12)["message"].item()
    assert quarantine.height == 0
