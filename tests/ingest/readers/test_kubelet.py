"""The kubelet reader on node logs (tests/samples/kubelet), per formats.md §2."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import polars as pl
import pytest

from analyzer.case.inputs import FileCounts, Issue, ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.hints import path_host
from analyzer.ingest.readers.kubelet import KubeletReader
from analyzer.ingest.readers.text import TextReader
from analyzer.ingest.registry import choose_reader
from analyzer.streams import Content, ExpansionBudget
from tests.helpers import ns

SAMPLES = Path(__file__).parents[2] / "samples" / "kubelet"
NAMES = (
    "kubelet.log",
    "journal-short.txt",
    "journal-short-iso.txt",
    "journal.json",
    "journal.export",
)
READER = KubeletReader()
MTIME = 1796000000.0  # 2026-12-01, a day after the logs


@functools.cache
def _read(
    name: str, chunk: int | None = None, year: int | None = None
) -> tuple[pl.DataFrame, FileCounts, tuple[Issue, ...]]:
    options = ReadOptions(year=year) if chunk is None else ReadOptions(chunk_bytes=chunk, year=year)
    ctx = ReadContext(f"nodes/{name}", options, mtime=MTIME)
    with (SAMPLES / name).open("rb") as raw:
        frames = list(READER.read(Content(raw, ExpansionBudget(), ctx.path), ctx))
    frame = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    frame = frame.with_columns(pl.col("ts").dt.epoch("ns").alias("ts_ns"))
    return frame, ctx.counts, tuple(ctx.issues)


def rows(name: str) -> list[dict[str, object]]:
    return _read(name)[0].to_dicts()


@pytest.mark.parametrize("name", NAMES)
def test_sniff_and_choice(name: str) -> None:
    head = (SAMPLES / name).read_bytes()[: 64 << 10]
    assert READER.sniff(head, f"nodes/{name}") >= 0.65
    choice = choose_reader(head, f"nodes/{name}")
    assert choice is not None and choice.reader.name == "kubelet"


def test_jax_logs_and_cloud_logging_are_not_claimed() -> None:
    samples = Path(__file__).parents[2] / "samples"
    for path in [*(samples / "text").glob("*.log"), *(samples / "cloud_logging").glob("*")]:
        if path.name == "glog_with_header.log":  # a kubelet klog file, rightly claimed
            continue
        assert READER.sniff(path.read_bytes()[: 64 << 10], str(path)) == 0.0, path.name


@pytest.mark.parametrize("name", NAMES)
def test_nothing_lost_and_provenance(name: str) -> None:
    frame, counts, _ = _read(name)
    data = (SAMPLES / name).read_bytes()
    if name == "journal.export":
        expected = data.count(b"__CURSOR=")
    else:
        expected = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    assert counts.records == expected
    assert counts.records == counts.rows + counts.folded + counts.blank + counts.dropped
    for row in frame.iter_rows(named=True):
        assert data[: row["offset"]].count(b"\n") + 1 == row["line"]
        assert row["offset"] == 0 or data[row["offset"] - 1 : row["offset"]] == b"\n"


@pytest.mark.parametrize(
    "name", ["kubelet.log", "journal-short.txt", "journal-short-iso.txt", "journal.json"]
)
def test_chunking_does_not_change_rows(name: str) -> None:
    assert _read(name, 64)[0].equals(_read(name)[0])


def test_klog_file_header_gives_host_and_year() -> None:
    got = rows("kubelet.log")
    assert {r["host"] for r in got} == {"gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp"}
    kill = next(r for r in got if r["logger"] == "kuberuntime_container.go:809")
    assert kill["reader"] == "kubelet.klog"
    assert kill["ts_ns"] == ns("2026-11-29T18:36:02.512339Z")
    assert kill["ts_quality"] == "inferred_year"
    assert (kill["pod"], kill["namespace"], kill["container"]) == (
        "llm-pretrain-slice-1-3-x7k2p",
        "default",
        "jax-tpu",
    )
    assert kill["workload"] == "llm-pretrain-slice"
    extra = json.loads(str(kill["extra"]))
    assert extra["podUID"] == "0b6c2f1e-7d3a-4e5b-9c8d-1a2b3c4d5e6f"
    assert extra["containerID"] == "containerd://9f1e0c7b"
    probe = next(r for r in got if r["logger"] == "prober.go:107")
    assert str(probe["message"]).endswith("No such file or directory\n >")  # the key=< block folds
    admit = next(r for r in got if r["severity"] == "ERROR")
    assert json.loads(str(admit["extra"]))["err"].startswith("Allocate failed")


def test_journal_short_host_ident_and_inner_klog() -> None:
    got = rows("journal-short.txt")
    hosts = {r["host"] for r in got if r["reader"] == "kubelet.journal"}
    assert hosts == {"gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-m9xq"}
    kill = next(r for r in got if r["logger"] == "kuberuntime_container.go:709")
    assert str(kill["message"]).startswith('"Killing container with a grace period"')
    assert kill["ts_quality"] == "inferred_year"
    assert kill["ts_ns"] == ns("2026-11-29T18:34:45Z")  # the journal's own (second) precision
    extra = json.loads(str(kill["extra"]))
    assert extra["ident"] == "kubelet"
    assert extra["payload_ts"] == "2026-11-29T18:34:45.000152Z"  # the kubelet's klog stamp
    assert extra["podUID"] == "27aff94d-e0d9-43d1-84d6-9ab000aa57e2"
    oom = next(r for r in got if r["logger"] == "kernel")
    assert oom["severity"] == "ERROR"  # kernel OOM kill lines are errors by rule (§2.8)
    crash = next(r for r in got if r["logger"] == "pod_workers.go:1301")
    assert crash["severity"] == "ERROR" and crash["pod"] == "llm-pretrain-slice-0-1-b2n8c"
    markers = [r["message"] for r in got if r["reader"] == "kubelet.plain"]
    assert str(markers[0]).startswith("-- Logs begin at")
    assert "-- Boot 3f2a9c1d1e4b4c1f8d3a3f2a9c1d1e4b --" in markers
    november_9 = next(r for r in got if r["logger"] == "nodeshutdown_manager_linux.go:262")
    assert november_9["ts_ns"] == ns("2026-11-09T17:45:37Z")


def test_journal_iso_and_unix_forms_are_exact() -> None:
    got = rows("journal-short-iso.txt")
    assert [r["ts_ns"] for r in got] == [
        ns("2026-11-29T18:34:44Z"),
        ns("2026-11-29T18:34:45.000152Z"),
        1795977285_123456000,
    ]
    assert {r["ts_quality"] for r in got} == {"exact"}
    assert {r["host"] for r in got} == {"gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-t7hc"}
    assert [r["severity"] for r in got] == ["INFO", "ERROR", "WARNING"]


def test_journal_json_fields_and_message_forms() -> None:
    frame, counts, issues = _read("journal.json")
    got = frame.to_dicts()
    assert counts.blank == 1
    assert [r["ts_ns"] for r in got] == [1795977362512498000 + i * 1_000_000 for i in range(5)]
    assert {r["ts_quality"] for r in got} == {"exact"}
    assert {r["host"] for r in got} == {"gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-p4vd"}
    assert got[0]["logger"] == "kuberuntime_container.go:809" and got[0]["severity"] == "INFO"
    assert (got[1]["pod"], got[1]["namespace"], got[1]["container"]) == (
        "worker-0",
        "soperator",
        "slurmd",
    )
    assert got[1]["logger"] == "kubelet"  # no klog header: the identifier stands in
    assert got[2]["message"] == "bad byte \ufffd here"  # a byte-array MESSAGE, decoded
    assert got[2]["severity"] == "INFO"  # the klog letter inside beats PRIORITY 3
    assert got[3]["message"] == "" and got[3]["severity"] == "WARNING"
    assert got[4]["message"] == "first value\nsecond value"
    kept = [(i.kind, i.line) for i in issues]
    assert kept == [("kept", 4), ("kept", 5)]


def test_journal_export_with_binary_message() -> None:
    frame, counts, issues = _read("journal.export")
    got = frame.to_dicts()
    assert counts.records == counts.rows == 2
    assert got[0]["line"] == 1 and got[1]["line"] == 11
    assert got[0]["logger"] == "kubelet.go:2425" and got[0]["severity"] == "ERROR"
    assert got[0]["pod"] == "llm-pretrain-slice-0-0-x7k2p"
    assert "\ufffd tail" in str(got[0]["message"])
    assert got[1]["severity"] == "ERROR"  # kernel OOM
    assert [(i.kind, i.line) for i in issues] == [("kept", 1)]
    data = (SAMPLES / "journal.export").read_bytes()
    assert data[got[1]["offset"] :].startswith(b"__CURSOR=s=2")


def test_year_option_and_no_year_anywhere() -> None:
    # No header, no dated line: the file's modification time anchors the year...
    plain, _, _ = _read("journal-short-iso.txt")
    assert plain is not None
    text = b'I1129 18:36:02.512339    2218 kubelet.go:1] "no year here"\n'
    ctx = ReadContext("kubelet.log", ReadOptions(), mtime=MTIME)
    import io

    (frame,) = list(READER.read(Content(io.BytesIO(text), ExpansionBudget(), "k"), ctx))
    assert frame["ts"].dt.year().to_list() == [2026]
    assert frame["ts_quality"].to_list() == ["inferred_year"]
    # ...and --year overrides it.
    ctx = ReadContext("kubelet.log", ReadOptions(year=2024), mtime=MTIME)
    (frame,) = list(READER.read(Content(io.BytesIO(text), ExpansionBudget(), "k"), ctx))
    assert frame["ts"].dt.year().to_list() == [2024]


def test_path_host() -> None:
    assert path_host("bundle/nodes/gke-a-b-c-1234/kubelet.log") == "gke-a-b-c-1234"
    assert path_host("logs/kubelet-gke-pool-7f2a.log") == "gke-pool-7f2a"
    assert path_host("tpu-v4-8-w-3/journal.txt") == "tpu-v4-8-w-3"
    assert path_host("logs/kubelet.log") is None


def test_a_journal_of_other_units_is_a_node_journal() -> None:
    head = (
        b"Jun 12 05:24:27 kube-master systemd[1]: Starting Lightweight Kubernetes...\n"
        b"Jun 12 05:24:28 kube-master k3s[112088]: containerd: exit status 2\n"
        b"Jun 12 05:24:28 kube-master systemd[1]: k3s.service: Main process exited, "
        b"code=exited, status=1/FAILURE\n"
        b"Jun 12 05:24:28 kube-master systemd[1]: k3s.service: Failed with result 'exit-code'.\n"
    )
    assert READER.sniff(head, "k3s.log") > TextReader().sniff(head, "k3s.log")
    choice = choose_reader(head, "k3s.log")
    assert choice is not None and choice.reader.name == "kubelet"


def test_lines_after_a_timestamp_wrapper_are_not_journal_lines() -> None:
    head = b"".join(b"2026-11-29T18:20:01.118904117Z stdout F step %d\n" % i for i in range(10))
    assert READER.sniff(head, "pod.log") == 0.0
