"""Issue #24, item 1: timestamps outside the range of nanosecond timestamps.

A stamp the int64 nanoseconds of a case cannot hold wrapped around silently: 9999-12-31
became 1816-03-30, sorted before every real row and was reported as the first error, blaming
the wrong host (0001, 1677 and 2262 alike; 2600 even wrapped to 2015, inside the incident's
years). Such a row, and one implausible for the case (before 1970, after 2100, or days away
from the rest of its file), now keeps its text and line, is marked ``ts_quality =
out_of_range`` with a null ``ts``, never decides the first error, and is counted in the
inventory, ``case.json`` and the report's coverage section.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import polars as pl

from analyzer import api
from analyzer.diagnose.findings import Findings, Verdict
from analyzer.report import modelarts_zh
from tests.conftest import EXAMPLE
from tests.engine.conftest import same_case, sharded_case
from tests.helpers import check_accounting, ns, read_table

CULPRIT = "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-p4vd"
K2LP = "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp"
M9XQ = "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-m9xq"
T7HC = "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-t7hc"
HALTED = (
    "INTERNAL: Core halted unexpectedly: INTERNAL: Accelerator device halted prematurely, "
    "perhaps due to an on-device check-failure. Node 0 halted unexpectedly at tag:pc "
    "TensorCoreSequencer:1:0x1d9 (from TensorCoreSequencer:1:0x1e5): observed errors are: "
    "[Hardware] on tpu9700:pe1:1"
)


def _ingest(tmp_path: Path, files: dict[str, str]) -> Path:
    bundle = tmp_path / "bundle"
    for name, text in files.items():
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_text(text)
    case = tmp_path / "case"
    api.ingest([bundle], case)
    return case


def test_stamps_beyond_nanoseconds_and_implausible_ones_are_out_of_range(tmp_path: Path) -> None:
    good = [f"2024-05-01T00:00:{i:02d}Z node-1 step {i}" for i in range(8)]
    bad = {
        "9999-12-31T23:59:59Z node-1 placeholder": "wrapped to 1816",
        "0001-01-01T00:00:00Z node-1 year one": "wrapped to 1754",
        "1677-01-01T00:00:00Z node-1 before the int64 range": "wrapped to 2261",
        "2262-06-01T00:00:00Z node-1 after the int64 range": "wrapped to 1677",
        "2600-01-01T00:00:00Z node-1 wraps into the window": "wrapped to 2015",
        "1969-07-20T20:17:00Z node-1 before 1970": "representable, implausible",
        "2101-01-01T00:00:00Z node-1 after 2100": "representable, implausible",
        "2024-09-01T00:00:00Z node-1 months from the rest of the file": "an outlier",
    }
    lines = [*good[:3], *bad, *good[3:]]
    case = _ingest(tmp_path, {"app.log": "\n".join(lines) + "\n"})
    files = check_accounting(case)
    rows = read_table(case, "rows").sort("line")
    marked = rows.filter(pl.col("ts_quality") == "out_of_range")
    # Every bad row kept with its text and line, without a time.
    assert marked["message"].to_list() == [line.split(" ", 1)[1] for line in bad]
    assert marked["line"].to_list() == list(range(4, 4 + len(bad)))
    assert marked["ts"].null_count() == len(bad)
    kept = rows.filter(pl.col("ts_quality") != "out_of_range")
    assert kept["ts"].dt.epoch("ns").to_list() == [ns(line.split(" ")[0]) for line in good]
    # Counted in the inventory and in case.json; the file's time range is its real one.
    record = files.row(0, named=True)
    assert record["out_of_range"] == len(bad)
    assert record["rows"] == len(lines)
    assert record["ts_min"] == kept["ts"].min() and record["ts_max"] == kept["ts"].max()
    meta = json.loads((case / "case.json").read_text())
    assert meta["counts"]["out_of_range"] == len(bad)
    assert meta["first_ts"].startswith("2024-05-01T00:00:00")
    assert meta["last_ts"].startswith("2024-05-01T00:00:07")
    # culprit case info names the file and the first such line.
    info = api.case_info(case)
    assert info.out_of_range == [{"path": "app.log", "rows": len(bad), "first_line": 4}]


def test_every_reader_stamp_form_is_guarded(tmp_path: Path) -> None:
    """Epoch seconds (absl, journal), journald's microseconds, zoned and local stamps: each
    form that overflowed the int64 product or wrapped is out of range, not a wrong time."""
    journal = (
        "2026-11-29T18:19:40.000000+0000 node-a kubelet[1]: I1129 18:19:40.000000 1 a.go:1] up\n"
        "9999-12-31T23:59:59.000000+0000 node-a kubelet[1]: E1231 23:59:59.000000 1 a.go:2] x\n"
        "99999999999.000000 node-a kubelet[1]: E0101 00:00:00.000000 1 a.go:3] epoch year 5138\n"
        "1795975180.000000 node-a kubelet[1]: I1129 18:19:40.000000 1 a.go:4] epoch, fine\n"
    )
    export = [
        {"__REALTIME_TIMESTAMP": "1795975180000000", "MESSAGE": "fine", "_HOSTNAME": "node-b"},
        {"__REALTIME_TIMESTAMP": "99999999999999999", "MESSAGE": "wraps", "_HOSTNAME": "node-b"},
    ]
    local = "2026-11-29 18:19:40,123 INFO fine\n9999-12-31 23:59:59,000 ERROR far\n"
    case = _ingest(
        tmp_path,
        {
            "nodes/node-a/kubelet.log": journal,
            "nodes/node-b/journal.json": "\n".join(json.dumps(e) for e in export) + "\n",
            "app/train.log": local,
        },
    )
    files = check_accounting(case)
    rows = read_table(case, "rows").join(files.select("file_id", "path"), on="file_id")
    got = {
        (path, line): quality
        for path, line, quality in rows.select("path", "line", "ts_quality").iter_rows()
    }
    assert got == {
        ("nodes/node-a/kubelet.log", 1): "exact",
        ("nodes/node-a/kubelet.log", 2): "out_of_range",
        ("nodes/node-a/kubelet.log", 3): "out_of_range",
        ("nodes/node-a/kubelet.log", 4): "exact",
        ("nodes/node-b/journal.json", 1): "exact",
        ("nodes/node-b/journal.json", 2): "out_of_range",
        ("app/train.log", 1): "inferred_tz",
        ("app/train.log", 2): "out_of_range",
    }
    assert rows.filter(pl.col("ts").is_not_null())["ts"].dt.year().unique().to_list() == [2026]


def test_a_placeholder_stamp_does_not_give_a_file_its_year(tmp_path: Path) -> None:
    """The first dated line of a file gives its year-less lines their year: a 9999 stamp
    there gave every klog line of the file the year 1816."""
    text = (
        "9999-12-31T23:59:59.000000+0000 node-a kubelet[1]: I1231 23:59:59.000000 1 a.go:1] x\n"
        "2026-11-29T18:19:40.000000+0000 node-a kubelet[1]: I1129 18:19:40.000000 1 a.go:2] up\n"
        "Nov 29 18:19:41.000000 node-a kubelet[1]: I1129 18:19:41.000000 1 a.go:3] year-less\n"
    )
    case = _ingest(tmp_path, {"nodes/node-a/kubelet.log": text})
    rows = read_table(case, "rows").sort("line")
    assert rows["ts_quality"].to_list() == ["out_of_range", "exact", "inferred_year"]
    assert rows["ts"].dt.year().to_list() == [None, 2026, 2026]


def _stamped(start: dt.datetime, count: int, step: dt.timedelta, text: str) -> list[str]:
    return [f"{(start + i * step).strftime('%Y-%m-%dT%H:%M:%SZ')} {text} {i}" for i in range(count)]


def test_only_the_stretches_away_from_the_file_s_time_are_out_of_range(tmp_path: Path) -> None:
    """A clock reset to 1970 at boot (a cluster, not one row) is caught; a file whose rows all
    agree keeps them however old, and so does one that runs for months without a gap."""
    day = dt.timedelta(days=1)
    boot = _stamped(dt.datetime(1970, 1, 1, tzinfo=dt.UTC), 5, dt.timedelta(seconds=1), "boot")
    synced = _stamped(dt.datetime(2024, 5, 1, tzinfo=dt.UTC), 20, dt.timedelta(seconds=1), "ok")
    old = _stamped(dt.datetime(1971, 3, 1, tzinfo=dt.UTC), 6, dt.timedelta(minutes=1), "old")
    daily = _stamped(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), 90, day, "daily")
    case = _ingest(
        tmp_path,
        {
            "reset.log": "\n".join(boot + synced) + "\n",
            "old.log": "\n".join(old) + "\n",
            "daily.log": "\n".join(daily) + "\n",
        },
    )
    files = check_accounting(case)
    assert dict(files.select("path", "out_of_range").iter_rows()) == {
        "daily.log": 0,
        "old.log": 0,
        "reset.log": 5,
    }


def test_shards_mark_the_same_rows(tmp_path: Path) -> None:
    """The rule needs all of a file's rows: it runs when the case is committed, so a bundle
    read as shards and merged is judged exactly as one read in one process (worker
    processes hand their rows to the same commit)."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for k in range(4):
        lines = _stamped(dt.datetime(2024, 5, 1, tzinfo=dt.UTC), 30, dt.timedelta(seconds=1), "x")
        lines[k * 5] = f"{9999 - k}-12-31T23:59:59Z placeholder {k}"
        lines[k * 5 + 1] = "1999-01-01T00:00:00Z years away"
        (bundle / f"node-{k}.log").write_text("\n".join(lines) + "\n")
    one = api.ingest([bundle], tmp_path / "one", jobs=1).case
    assert check_accounting(one)["out_of_range"].to_list() == [2, 2, 2, 2]
    same_case(one, sharded_case(bundle, tmp_path / "shards", 2))


def test_a_tar_member_without_a_modification_time_keeps_its_times(tmp_path: Path) -> None:
    """tar writes an mtime of 0 when it has none: year-less stamps took 1969/1970 from it, a
    time now out of range. Such an mtime says nothing, like a missing one."""
    bundle = tmp_path / "bundle.tar"
    data = b"".join(
        f"I1129 18:00:{i:02d}.000000    1 main.go:1] step {i}\n".encode() for i in range(10)
    )
    with tarfile.open(bundle, "w") as tar:
        info = tarfile.TarInfo("logs/worker.log")
        info.size, info.mtime = len(data), 0
        tar.addfile(info, io.BytesIO(data))
    case = tmp_path / "case"
    api.ingest([bundle], case)
    rows = read_table(case, "rows")
    assert rows["ts_quality"].unique().to_list() == ["inferred_year"]
    this_year = dt.datetime.now(tz=dt.UTC).year  # the year nearest today, as with no mtime
    assert set(rows["ts"].dt.year().unique().to_list()) <= {this_year - 1, this_year}


def _dirty_copy(tmp_path: Path) -> Path:
    """The example bundle with rows dated 9999-12-31 and 0001-01-01 appended on hosts other
    than the culprit, in the bundle's own formats; each would be the earliest root-cause row
    (and blame its host) if its time wrapped around."""
    bundle = tmp_path / "dirty"
    shutil.copytree(EXAMPLE, bundle)
    events = bundle / "gcloud" / "node-and-system-events.json"
    entries: list[dict[str, Any]] = json.loads(events.read_text())
    (host_error,) = [e for e in entries if "hostError" in json.dumps(e)]
    for host, stamp in ((K2LP, "9999-12-31T23:59:59Z"), (M9XQ, "0001-01-01T00:00:00Z")):
        entry = json.loads(json.dumps(host_error).replace(CULPRIT, host))
        entry["insertId"] = f"bogus-{host[-4:]}"
        entry["resource"]["labels"]["instance_id"] = str(len(entries))  # each VM its own id
        entry["timestamp"] = entry["receiveTimestamp"] = stamp
        entries.append(entry)
    events.write_text(json.dumps(entries, indent=2) + "\n")
    (stderr,) = (bundle / "cloud-logging").rglob("*.json")
    lines = stderr.read_text().splitlines()
    (template,) = [json.loads(x) for x in lines if K2LP in x][:1]
    for stamp in ("9999-12-31T23:59:59.000000001Z", "0001-01-01T00:00:00Z"):
        template.update(
            insertId=f"bogus-{stamp[:4]}",
            timestamp=stamp,
            receiveTimestamp=stamp,
            textPayload=f"E1231 23:59:59.000000 1 tpu.cc:1] {HALTED}\n",
        )
        lines.append(json.dumps(template))
    stderr.write_text("\n".join(lines) + "\n")
    kubectl = next((bundle / "kubectl").glob("*.log"))  # the pod of T7HC
    with kubectl.open("a") as out:
        out.write(f"9999-12-31T23:59:59.999999999Z E1231 23:59:59.999999 1 tpu.cc:1] {HALTED}\n")
        out.write(f"0001-01-01T00:00:00.000000000Z E0101 00:00:00.000000 1 tpu.cc:1] {HALTED}\n")
    journal = bundle / "nodes" / T7HC / "kubelet.journal.txt"
    with journal.open("a") as out:
        out.write(
            f"9999-12-31T23:59:59.000000+0000 {T7HC} kernel: mce: [Hardware Error]: "
            "Machine check events logged\n"
        )
    return bundle


def _citations(verdict: Verdict) -> list[Any]:
    statements = verdict.statements + verdict.conflicts
    rows = verdict.evidence + verdict.timeline + verdict.leads
    return [
        *[c for s in statements for c in s.citations],
        *verdict.culprit.evidence,
        *[r.citation for r in rows],
    ]


def test_a_bundle_with_out_of_range_rows_keeps_its_verdict(tmp_path: Path) -> None:
    clean = api.analyze([EXAMPLE], tmp_path / "clean")
    dirty = api.analyze([_dirty_copy(tmp_path)], tmp_path / "out")
    assert clean.findings is not None and dirty.findings is not None
    before, after = clean.findings.verdict, dirty.findings.verdict
    assert after.first_error == before.first_error
    assert after.first_error is not None and after.first_error.host == CULPRIT
    assert after.culprit == before.culprit
    assert _citations(after) == _citations(before)
    assert [(v.start, v.end) for v in dirty.findings.attempts] == [
        (v.start, v.end) for v in clean.findings.attempts
    ]
    # The report counts them, file by file, in its coverage section.
    counted = {f.path: f.out_of_range for f in dirty.findings.bundle.files if f.out_of_range}
    assert counted == {
        "gcloud/node-and-system-events.json": 2,
        "cloud-logging/stderr/2026/11/29/18:00:00_18:59:59_S0.json": 2,
        "kubectl/llm-pretrain-slice-0-3-h3j9d.log": 2,
        f"nodes/{T7HC}/kubelet.journal.txt": 1,
    }
    report = dirty.report_path.read_text()
    assert "## Input coverage" in report
    assert "7 row(s) in 4 file(s) have out-of-range timestamps" in report
    assert "`kubectl/llm-pretrain-slice-0-3-h3j9d.log`: 2 row(s)" in report
    assert "Input coverage" not in clean.report_path.read_text()
    chinese = modelarts_zh.render(dirty.findings)
    assert "## 数据覆盖" in chinese and "4 个文件中有 7 行的时间戳超出范围" in chinese
    page = api.report_html(dirty.case)
    assert "<h2>Input coverage</h2>" in page and "7 row(s) in 4 file(s)" in page
    check_accounting(dirty.case)
    findings = Findings.model_validate_json(dirty.findings_path.read_text())
    assert findings.bundle.files == dirty.findings.bundle.files
