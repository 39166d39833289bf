"""The ``cloud_logging`` reader on realistic exports (tests/samples/cloud_logging).

Every expected value below is derived from ../shared/reference/formats.md §1 (LogEntry grammar,
GKE labels, severity semantics, §1.7 example entries, §1.8 field derivation) and from the
sample files themselves, never from the reader's own code.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.case.inputs import FileCounts, Issue, ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.readers.cloud_logging import CloudLoggingReader
from analyzer.ingest.readers.text import TextReader
from analyzer.ingest.registry import choose_reader
from analyzer.schema import conform
from analyzer.streams import Content, ExpansionBudget
from tests.helpers import ns

SAMPLES = Path(__file__).parents[2] / "samples" / "cloud_logging"
NAMES = ("sink_stderr.jsonl", "kubelet_node.jsonl", "gcloud_events.json", "bigquery.jsonl")
ALL = (*NAMES, "explorer.csv")
READER = CloudLoggingReader()

NODE = {
    0: "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-9qzt",
    1: "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-b4mn",
    2: "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-h7xw",
    3: "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp",
}
POLLED = (
    "Polled an error from coordination service (this can be an error from this or another task)."
)
#: Entries folded into the row before them (formats.md §1.5, §5.3): in sink_stderr.jsonl the
#: traceback of pod x7k2p (lines 8-11: header, frame, source line, exception line), written
#: within 7 ms after that pod's absl F line 7, joins it (§5.3 rules 2, 3 and 5).
FOLDED = {"sink_stderr.jsonl": 4}


# -- helpers ---------------------------------------------------------------------------------


@functools.cache
def _read(name: str, chunk_bytes: int | None) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    path = SAMPLES / name
    options = ReadOptions() if chunk_bytes is None else ReadOptions(chunk_bytes=chunk_bytes)
    ctx = ReadContext(f"cloud_logging/{name}", options, mtime=ns("2026-11-30T09:00:00Z") / 1e9)
    with path.open("rb") as raw:
        frames = list(READER.read(Content(raw, ExpansionBudget(), ctx.path), ctx))
    frame = pl.concat(frames, how="vertical") if frames else pl.DataFrame()
    return frame, ctx.counts, ctx.issues


def read(name: str, chunk_bytes: int | None = None) -> pl.DataFrame:
    """The reader's frames for a sample, concatenated."""
    return _read(name, chunk_bytes)[0]


def counts(name: str) -> FileCounts:
    return _read(name, None)[1]


def canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows as the case stores them (schema applied, as the ingest pipeline does)."""
    numbered = frame.with_columns(
        row_id=pl.int_range(pl.len(), dtype=pl.Int64), file_id=pl.lit(0, dtype=pl.Int32)
    )
    result = pl.from_arrow(conform(numbered))
    assert isinstance(result, pl.DataFrame)
    return result


def by_insert_id(name: str) -> dict[str, dict[str, Any]]:
    """Canonical rows keyed by insertId (first occurrence), with ``extra`` parsed and ``ts``
    as integer nanoseconds."""
    rows = canonical(read(name)).with_columns(ts_ns=pl.col("ts").dt.epoch("ns"))
    out: dict[str, dict[str, Any]] = {}
    for row in rows.iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        out.setdefault(row["insert_id"], row)
    return out


def by_line(name: str) -> dict[int, dict[str, Any]]:
    rows = canonical(read(name)).with_columns(ts_ns=pl.col("ts").dt.epoch("ns"))
    out: dict[int, dict[str, Any]] = {}
    for row in rows.iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        assert row["line"] not in out
        out[row["line"]] = row
    return out


def independent_count(name: str) -> int:
    """Records of a sample counted without culprit's code."""
    data = (SAMPLES / name).read_bytes()
    if name.endswith(".json"):
        return len(json.loads(data))
    if name.endswith(".csv"):
        return len(list(csv.reader(io.StringIO(data.decode(), newline="")))) - 1
    return len(data.decode().splitlines())


def strings(value: object) -> list[str]:
    """Every string (keys and values) inside a decoded JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def entry_at(name: str, data: bytes, offset: int) -> dict[str, Any]:
    """The LogEntry whose record starts at ``offset`` (decoded independently)."""
    text = data.decode()
    assert len(text) == len(data), "samples are ASCII, so byte and char offsets agree"
    if name.endswith(".csv"):
        header = next(csv.reader(io.StringIO(text, newline="")))
        record = next(csv.reader(io.StringIO(text[offset:], newline="")))
        assert len(record) == len(header)
        return {column: value for column, value in zip(header, record, strict=True) if value}
    entry, _ = json.JSONDecoder().raw_decode(text, offset)
    assert isinstance(entry, dict)
    return entry


# -- sniffing and reader choice ------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_sniff_claims_every_export(name: str) -> None:
    head = (SAMPLES / name).read_bytes()[: 64 << 10]
    score = READER.sniff(head, f"cloud_logging/{name}")
    assert score >= 0.8
    assert TextReader().sniff(head, name) < score
    choice = choose_reader(head, f"cloud_logging/{name}")
    assert choice is not None
    assert choice.reader.name == "cloud_logging"
    assert choice.recognized


def test_sniff_bonus_for_gcs_object_path() -> None:
    head = (SAMPLES / "sink_stderr.jsonl").read_bytes()[:4096]
    plain = READER.sniff(head, "sink_stderr.jsonl")
    sink = READER.sniff(head, "bucket/stderr/2026/11/29/18:00:00_18:59:59_S0.json")
    assert sink > plain >= 0.8


@pytest.mark.parametrize("data", [b"[]\n", b"[ ]", b"\xef\xbb\xbf[\n]\n"])
def test_empty_gcloud_result_is_an_export_with_no_entries(data: bytes) -> None:
    choice = choose_reader(data, "gcloud/system_event.json")
    assert choice is not None and choice.reader.name == "cloud_logging" and choice.recognized
    ctx = ReadContext("gcloud/system_event.json", ReadOptions())
    frames = list(READER.read(Content(io.BytesIO(data), ExpansionBudget(), ctx.path), ctx))
    assert sum(f.height for f in frames) == 0
    assert ctx.issues == [] and ctx.counts.records == 0


def test_json_that_is_not_an_empty_array_is_not_claimed_as_empty() -> None:
    assert READER.sniff(b'["a"]', "x.json") == 0.0
    assert READER.sniff(b"[]x", "x.json") == 0.0


# -- nothing lost, provenance, chunking ----------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_every_record_is_accounted_for(name: str) -> None:
    frame, tally, issues = _read(name, None)
    assert issues == []
    assert tally.records == independent_count(name)
    assert tally.records == tally.rows + tally.folded + tally.blank + tally.dropped
    assert tally.rows == frame.height
    assert tally.dropped == tally.duplicates == tally.repaired == 0
    # Duplicates are removed later by the case writer: here every entry is a row, except the
    # continuation lines folded into the row of their record.
    assert tally.folded == FOLDED.get(name, 0)
    assert frame.height == independent_count(name) - FOLDED.get(name, 0)


@pytest.mark.parametrize("name", ALL)
def test_rows_lead_back_to_their_entry(name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    frame = read(name)
    assert frame["line"].is_sorted() and frame["offset"].is_sorted()
    for row in frame.iter_rows(named=True):
        offset, line = row["offset"], row["line"]
        assert data[:offset].count(b"\n") + 1 == line
        assert data[offset : offset + 1] == (b"{" if not name.endswith(".csv") else b"2")
        entry = entry_at(name, data, offset)
        if name.endswith(".jsonl"):
            assert data.split(b"\n")[line - 1] == data[offset:].split(b"\n", 1)[0]
        insert_id = entry.get("insertId", entry.get("insert_id"))
        assert row["insert_id"] == insert_id
        # The message comes from this entry: its first line is one of the entry's strings, or
        # "reason: message" / "methodName: status.message" built from two of them.
        first = row["message"].split("\n", 1)[0]
        blob = "\n".join(strings(entry))
        if first.startswith("{"):
            assert json.loads(row["message"]) == entry["jsonPayload"]
        else:
            assert first in blob or all(p in blob for p in first.split(": ", 1)), first


@pytest.mark.parametrize("chunk_bytes", [64, 257])
@pytest.mark.parametrize("name", ALL)
def test_chunk_size_does_not_change_rows(name: str, chunk_bytes: int) -> None:
    """Chunks this small hold one entry each, so no record is folded (records are folded
    within a chunk); every other row is the same."""
    small, tally, issues = _read(name, chunk_bytes)
    assert issues == []
    whole = counts(name)
    assert (tally.records, tally.dropped, tally.blank) == (whole.records, whole.dropped, 0)
    assert tally.rows == tally.records - tally.dropped and tally.folded == 0
    unfolded = read(name).filter(~pl.col("extra").str.contains('"lines":', literal=True))
    assert unfolded.equals(small.filter(pl.col("offset").is_in(unfolded["offset"].implode())))


@pytest.mark.parametrize("name", ALL)
def test_rows_conform_to_the_canonical_schema(name: str) -> None:
    rows = canonical(read(name))
    assert rows.height == read(name).height
    # Node logs and Kubernetes events are the kubelet source, ML Diagnostics metrics diagon,
    # whatever export they came in; container logs stay cloud_logging.
    for source, extra in rows.select(pl.col("source").cast(pl.String), "extra").iter_rows():
        log_id = json.loads(extra)["logName"].rsplit("/logs/", 1)[1]
        node = log_id in {"kubelet", "events", "node-problem-detector", "container-runtime"}
        node = node or log_id.startswith("serialconsole.googleapis.com%2F")
        resource = json.loads(extra).get("resource", {}).get("type")
        expected = (
            "kubelet"
            if node or resource == "k8s_node"
            else "diagon"
            if log_id == "ml_diagnostics_metric"
            else "cloud_logging"
        )
        assert source == expected, (log_id, resource)
    assert rows["severity"].null_count() == 0
    assert rows["ts_quality"].unique().to_list() == ["exact"]
    for extra in rows["extra"]:
        assert isinstance(json.loads(extra), dict)


# -- GCS sink: k8s_container stderr/stdout of a JobSet -------------------------------------


def test_sink_reader_name_and_jobset_identity() -> None:
    rows = by_line("sink_stderr.jsonl")
    assert {r["reader"] for r in rows.values()} == {"cloud_logging.jsonl"}
    # pod -> (host, slice = job-index, worker = job-completion-index, attempt = restart-attempt)
    expected = {
        "llm-pretrain-slice-0-0-a8c2d": (NODE[0], 0, 0, 0),
        "llm-pretrain-slice-0-1-f4t9w": (NODE[1], 0, 1, 0),
        "llm-pretrain-slice-1-2-q2m7r": (NODE[2], 1, 2, 0),
        "llm-pretrain-slice-1-3-x7k2p": (NODE[3], 1, 3, 0),
        "llm-pretrain-slice-0-0-z5v8n": (NODE[0], 0, 0, 1),
    }
    seen = {}
    for row in rows.values():
        seen[row["pod"]] = (row["host"], row["slice"], row["worker"], row["attempt"])
        assert row["container"] == "jax-tpu"
        assert row["namespace"] == "default"
        assert row["workload"] == "llm-pretrain"
    assert seen == expected
    assert len({r["host"] for r in rows.values()}) == 4


def test_sink_formats_example_a_verbatim_fields() -> None:
    """formats.md §1.7(a): the JAX coordination-service stderr line."""
    row = by_line("sink_stderr.jsonl")[6]
    assert row["insert_id"] == "9x1kq2f3z8w0ab7c"
    assert row["ts_ns"] == ns("2026-11-29T18:35:15.123891042Z") == 1795977315123891042
    assert row["ts_quality"] == "exact"
    assert row["severity"] == "ERROR"
    assert row["host"] == "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp"
    assert row["pod"] == "llm-pretrain-slice-1-3-x7k2p"
    assert (row["slice"], row["worker"], row["attempt"]) == (1, 3, 0)
    assert row["logger"] == "coordination_service_agent.cc:332"
    assert row["message"] == POLLED
    extra = row["extra"]
    assert extra["logName"] == "projects/my-tpu-proj/logs/stderr"
    assert extra["severity"] == "ERROR"
    assert extra["severity_origin"] == "payload"
    assert extra["receiveTimestamp"] == "2026-11-29T18:35:17.204318776Z"
    assert extra["payload_ts"] == "2026-11-29T18:35:15.123456Z"
    assert extra["payload_ts_quality"] == "inferred_year"
    assert extra["tid"] == "1234"
    # The entry's sub-objects are kept verbatim, with the Cloud Logging label spelling.
    assert extra["labels"]["k8s-pod/jobset_sigs_k8s_io/jobset-name"] == "llm-pretrain"
    assert extra["resource"]["type"] == "k8s_container"


def test_sink_severity_is_rederived_from_the_payload() -> None:
    """GKE marks every stderr line ERROR (§1.4); the klog/absl letter decides instead."""
    rows = by_line("sink_stderr.jsonl")
    expected = {
        # line: (severity, severity_origin, logger)
        1: ("ERROR", "stream_default", None),  # unprefixed absl banner on stderr
        2: ("INFO", "payload", "tpu_client.cc:55"),
        3: ("WARNING", "payload", "pjrt_api.cc:78"),
        4: ("INFO", "payload", "train.py:211"),
        5: (
            "ERROR",
            "payload",
            "external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:1170",
        ),
        6: ("ERROR", "payload", "coordination_service_agent.cc:332"),
        7: ("CRITICAL", "payload", "client.h:77"),  # with the traceback of lines 8-11
        15: ("INFO", "payload", "checkpoints.py:98"),
        16: ("INFO", "stream_default", None),  # print() on stdout
    }
    for line, (severity, origin, logger) in expected.items():
        row = rows[line]
        assert (row["severity"], row["extra"]["severity_origin"], row["logger"]) == (
            severity,
            origin,
            logger,
        ), line
    assert rows[16]["extra"]["logName"] == "projects/my-tpu-proj/logs/stdout"
    assert rows[16]["extra"]["severity"] == "INFO"
    assert all(rows[line]["extra"]["severity"] == "ERROR" for line in rows if line < 15)
    assert not set(rows) & {8, 9, 10, 11}


def test_sink_payload_timestamps() -> None:
    """``ts`` is the envelope timestamp; the in-line stamp goes to ``payload_ts`` with its own
    quality: absl pre-init epoch is exact, MMDD has an inferred year, tsl has no zone."""
    rows = by_line("sink_stderr.jsonl")
    expected = {
        1: ("2026-11-29T18:20:01.118904117Z", None, None),
        2: ("2026-11-29T18:20:01.119211Z", "2026-11-29T18:20:01.118342Z", "exact"),
        3: ("2026-11-29T18:20:02.250433Z", "2026-11-29T18:20:02.250117Z", "exact"),
        4: ("2026-11-29T18:20:05.513002Z", "2026-11-29T18:20:05.512771Z", "inferred_year"),
        5: ("2026-11-29T18:35:15.101422Z", "2026-11-29T18:35:15.10102Z", "inferred_tz"),
        7: ("2026-11-29T18:35:15.124019Z", "2026-11-29T18:35:15.123462Z", "inferred_year"),
        16: ("2026-11-29T18:41:07.25Z", None, None),
    }
    for line, (ts, payload_ts, quality) in expected.items():
        row = rows[line]
        assert row["ts_ns"] == ns(ts), line
        assert row["ts_quality"] == "exact"
        got = row["extra"].get("payload_ts")
        assert (ns(got) if got else None) == (ns(payload_ts) if payload_ts else None), line
        assert row["extra"].get("payload_ts_quality") == quality, line


def test_sink_messages_strip_prefix_and_one_trailing_newline() -> None:
    rows = by_line("sink_stderr.jsonl")
    assert rows[1]["message"] == (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
    )
    assert rows[4]["message"] == "completed step: 1199, seconds: 2.381"
    assert rows[5]["message"].startswith("/job:jax_worker/replica:0/task:13 has been set to ERROR")
    fatal, *traceback = rows[7]["message"].split("\n")
    assert fatal.startswith("Terminating process because the JAX distributed")
    assert fatal.endswith("this task is experiencing network issues.")
    # The traceback entries (lines 8-11) follow the F line in their stream within 7 ms: one
    # record (formats.md §5.3 rules 2, 3, 5), each entry's message on its own line.
    exception = (
        "jaxlib._jax.XlaRuntimeError: UNAVAILABLE: Failed to send RPC to coordination service."
    )
    assert traceback == [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 240, in <module>',
        "    main()",
        exception,
    ]
    assert rows[7]["extra"]["lines"] == 5
    assert rows[7]["extra"]["exception"] == exception
    assert rows[7]["insert_id"] == "9x1kq2f3z8w0ab7d"
    assert rows[7]["ts_ns"] == ns("2026-11-29T18:35:15.124019Z")
    assert not any(r["message"].endswith("\n") for r in rows.values())


def test_sink_duplicates_stay_rows_with_one_dedup_key() -> None:
    """An entry exported twice (same logName, timestamp, insertId) keeps both rows here and
    shares its ``_dedup_key``; a near-duplicate with another insertId is a different entry."""
    frame = read("sink_stderr.jsonl")
    assert "_dedup_key" in frame.columns
    keyed = frame.select("line", "insert_id", pl.col("_dedup_key").alias("key"))
    verbatim = keyed.filter(pl.col("insert_id") == "9x1kq2f3z8w0ab7c")
    assert verbatim["line"].to_list() == [6, 13]
    assert verbatim["key"].n_unique() == 1
    near = keyed.filter(pl.col("insert_id").is_in(["kq7zt1f0b2r3", "kq7zt1f0b2r4"]))
    assert near["line"].to_list() == [12, 14]
    assert near["key"].n_unique() == 2
    assert keyed["key"].n_unique() == frame.height - 1
    rows = by_line("sink_stderr.jsonl")
    same = ("ts_ns", "host", "pod", "message", "severity", "logger")
    assert [rows[6][k] for k in same] == [rows[13][k] for k in same]
    assert [rows[12][k] for k in same] == [rows[14][k] for k in same]


# -- kubelet journald payloads on k8s_node / legacy gce_instance ---------------------------


def test_kubelet_severity_from_klog_letter_then_priority() -> None:
    """§1.7(b): no entry ``severity``; the klog letter wins, else journald ``PRIORITY``."""
    rows = by_insert_id("kubelet_node.jsonl")
    expected = {
        "mf28fmdkt05bbzp7": ("ERROR", "payload", "kubelet.go:2425"),  # E line, PRIORITY 6
        "mf28fmdkt05bbzq0": ("ERROR", "priority", "kubelet"),  # no header, PRIORITY 3
        "mf28fmdkt05bbzq1": ("INFO", "payload", "kuberuntime_container.go:809"),
        "mf28fmdkt05bbzq2": ("INFO", "payload", "prober.go:107"),
        "mf28fmdkt05bbzq3": ("INFO", "priority", "kubelet"),  # no header, PRIORITY 6
        "1gq1afxg1xdtkqm": ("INFO", "payload", "kubelet_getters.go:177"),
    }
    for insert_id, (severity, origin, logger) in expected.items():
        row = rows[insert_id]
        assert (row["severity"], row["extra"]["severity_origin"], row["logger"]) == (
            severity,
            origin,
            logger,
        ), insert_id
        assert "severity" not in row["extra"], "the entry had no severity"


def test_kubelet_formats_example_b() -> None:
    row = by_insert_id("kubelet_node.jsonl")["mf28fmdkt05bbzq1"]
    assert row["host"] == "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp"
    assert row["ts_ns"] == ns("2026-11-29T18:36:02.512498Z")
    assert row["ts_quality"] == "exact"
    assert row["message"] == (
        '"Killing container with a grace period" pod="default/llm-pretrain-slice-1-3-x7k2p" '
        'podUID="0b6c2f1e-7d3a-4e5b-9c8d-1a2b3c4d5e6f" containerName="jax-tpu" '
        'containerID="containerd://9f1e0c7b..." gracePeriod=30'
    )
    assert row["extra"]["payload_ts"] == "2026-11-29T18:36:02.512339Z"
    assert row["extra"]["tid"] == "2218"
    assert row["extra"]["logName"] == "projects/my-tpu-proj/logs/kubelet"
    assert row["extra"]["jsonPayload"]["_SYSTEMD_UNIT"] == "kubelet.service"


def test_kubelet_multiline_value_and_headerless_message() -> None:
    rows = by_insert_id("kubelet_node.jsonl")
    probe = rows["mf28fmdkt05bbzq2"]["message"]
    assert probe.endswith(
        "output=<\n\tcat: can't open '/tmp/healthy': No such file or directory\n >"
    )
    assert rows["mf28fmdkt05bbzq3"]["message"] == (
        '"Shutdown manager detected new shutdown event, isNodeShuttingDownNow" event=true'
    )
    assert "payload_ts" not in rows["mf28fmdkt05bbzq3"]["extra"]


def test_kubelet_legacy_gce_instance_example() -> None:
    """The lm-logs-gcp fixture: host from ``_HOSTNAME``, MMDD year from the envelope (2021)."""
    row = by_insert_id("kubelet_node.jsonl")["1gq1afxg1xdtkqm"]
    assert row["host"] == "gke-k8s-demo-default-pool-8eece21e-z6er"
    assert row["ts_ns"] == ns("2021-04-15T06:18:20.943939Z")
    assert row["extra"]["payload_ts"] == "2021-04-15T06:18:20.943836Z"
    assert row["extra"]["payload_ts_quality"] == "inferred_year"
    assert row["message"] == (
        "status for pod kube-proxy-gke-k8s-demo-default-pool-8eece21e-z6er updated to {Running ...}"
    )
    assert row["pod"] is None
    assert row["extra"]["resource"]["labels"]["instance_id"] == "1437928523886234104"


def test_kubelet_pod_namespace_container_from_message_kv() -> None:
    """formats.md §1.8: pod/namespace/container of a kubelet line come from the MESSAGE
    key-values ``pod="ns/name"`` and ``containerName="..."``."""
    rows = by_insert_id("kubelet_node.jsonl")
    got = {
        insert_id: (
            rows[insert_id]["pod"],
            rows[insert_id]["namespace"],
            rows[insert_id]["container"],
        )
        for insert_id in ("mf28fmdkt05bbzp7", "mf28fmdkt05bbzq1", "mf28fmdkt05bbzq2")
    }
    assert got == {
        "mf28fmdkt05bbzp7": ("llm-pretrain-slice-1-3-x7k2p", "default", None),
        "mf28fmdkt05bbzq1": ("llm-pretrain-slice-1-3-x7k2p", "default", "jax-tpu"),
        "mf28fmdkt05bbzq2": ("llm-pretrain-slice-1-3-x7k2p", "default", "jax-tpu"),
    }


# -- gcloud logging read --format=json ------------------------------------------------------


def test_gcloud_array_is_read_in_file_order() -> None:
    frame = read("gcloud_events.json")
    assert frame["reader"].unique().to_list() == ["cloud_logging.json_array"]
    data = json.loads((SAMPLES / "gcloud_events.json").read_bytes())
    assert frame["insert_id"].to_list() == [e["insertId"] for e in data]
    # gcloud prints newest first: the reader keeps file order (sorting is the case's job).
    stamps = frame["ts"].dt.epoch("ns").to_list()
    assert stamps == sorted(stamps, reverse=True)
    assert frame["line"][0] == 2
    assert frame["offset"][0] == 4


def test_gcloud_kubernetes_events() -> None:
    rows = by_insert_id("gcloud_events.json")
    pulling = rows["17ahw8eg29q74y6"]  # formats.md §1.7(c), verbatim
    assert (
        pulling["message"] == 'Pulling: Pulling image "gke.gcr.io/prometheus-to-sd:v0.11.3-gke.0"'
    )
    assert pulling["logger"] == "Pulling"
    assert pulling["severity"] == "INFO"
    assert pulling["extra"]["severity_origin"] == "entry"
    assert pulling["host"] == "gke-cluster-1-default-pool-476246ab-wnl7"  # source.host
    assert pulling["pod"] == "kube-dns-56494768b7-544n6"
    assert pulling["namespace"] == "kube-system"
    assert pulling["container"] == "prometheus-to-sd"  # from spec.containers{...}
    assert pulling["workload"] is None
    assert pulling["ts_ns"] == ns("2022-06-01T14:05:30Z")

    node = rows["1m4n5b6v7c8x9z"]
    assert node["message"] == (
        "NodeNotReady: Node gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp status is now: NodeNotReady"
    )
    assert node["logger"] == "NodeNotReady"
    assert node["host"] == NODE[3]
    assert node["pod"] is None
    assert node["ts_ns"] == ns("2026-11-29T18:37:12Z")


def test_gcloud_system_events() -> None:
    """§1.7(d): audit message is ``methodName: status.message``; host from resourceName."""
    rows = by_insert_id("gcloud_events.json")
    preempted = rows["qnwer3e38dfz"]
    assert preempted["message"] == "compute.instances.preempted: Instance was preempted."
    assert preempted["host"] == "mock-instance-spot-3706-5b909138-nr65"
    assert preempted["logger"] == "compute.instances.preempted"
    assert preempted["severity"] == "INFO"
    assert preempted["ts_ns"] == ns("2023-09-16T10:42:31.325309Z")
    assert preempted["extra"]["operation"]["producer"] == "compute.instances.preempted"

    host_error = rows["-x3k9v2e1b7c4"]
    assert host_error["message"] == (
        "compute.instances.hostError: Instance terminated by Compute Engine."
    )
    assert host_error["host"] == NODE[2]
    assert host_error["ts_ns"] == ns("2026-11-29T18:33:43.967Z")
    assert host_error["extra"]["operation"]["id"] == (
        "systemevent-1656598023967-5e2aac8c11261-3553f149-42656705"
    )


def test_gcloud_serial_console_tpu_worker_and_metric() -> None:
    rows = by_insert_id("gcloud_events.json")
    serial = rows["0a1b2c3d4e5f6"]
    assert serial["host"] == "gke-tpu-v6e-serve-np-v6e-2x4-5a7c3e21-q8fd"
    assert serial["message"].endswith(
        "(vbar_control_ag) total-vm:1254020kB, anon-rss:204800kB, "
        "file-rss:11264kB, shmem-rss:0kB, UID:0 pgtables:612kB "
        "oom_score_adj:-997"
    )  # one trailing \r\n stripped
    assert serial["severity"] == "DEFAULT"  # the entry has no severity and no level prefix

    worker = rows["8h7g6f5e4d3c"]
    assert worker["host"] == "llm-v5p-vm-w-3"  # <node_id>-w-<worker_id>
    assert worker["worker"] == 3
    assert worker["severity"] == "ERROR"
    assert worker["logger"] == "tpu_runtime.cc:1432"
    assert worker["message"] == "TPU chip 2 halted: ICI link 3 is down"

    metric = rows["1k2j3h4g5f6d7"]
    assert json.loads(metric["message"]) == {
        "values": [2.381],
        "step_index": 1200,
        "hostname": "llm-pretrain-slice-1-3",
        "accelerator_type": "tpu",
    }
    assert metric["severity"] == "INFO"
    assert metric["ts_ns"] == ns("2026-11-29T18:34:59.812Z")


def test_gcloud_escaped_quotes_brackets_and_braces() -> None:
    row = by_insert_id("gcloud_events.json")["9x1kq2f3z8w0ab7z"]
    assert row["message"] == (
        'RPC failed: {"code":14,"message":"Socket closed","details":[{"@type":'
        '"type.googleapis.com/tensorflow.CoordinationServiceError","payload":"[task:3] ]}"}]} '
        "]]}} {{[[ dir=C:\\tmp\\"
    )
    assert row["severity"] == "WARNING"
    assert row["pod"] == "llm-pretrain-slice-1-3-x7k2p"
    assert row["ts_ns"] == ns("2026-11-29T18:35:15.987901Z")


# -- BigQuery sink export and Logs Explorer CSV --------------------------------------------


def test_bigquery_sanitized_labels_and_timestamps() -> None:
    rows = by_insert_id("bigquery.jsonl")
    expected = {
        # insertId: (ts, host, pod, slice, worker, attempt, severity)
        "a1s2d3f4g5h6": (
            "2026-11-29 18:20:05.513002 UTC",
            NODE[1],
            "llm-pretrain-slice-0-1-f4t9w",
            0,
            1,
            0,
            "INFO",
        ),
        "q1w2e3r4t5y6": (
            "2026-11-29 18:35:15.101422 UTC",
            NODE[0],
            "llm-pretrain-slice-0-0-a8c2d",
            0,
            0,
            0,
            "ERROR",
        ),
        "9x1kq2f3z8w0ab7c": (
            "2026-11-29 18:35:15.123891 UTC",
            NODE[3],
            "llm-pretrain-slice-1-3-x7k2p",
            1,
            3,
            0,
            "ERROR",
        ),
        "9x1kq2f3z8w0ab7d": (
            "2026-11-29 18:35:15.124019 UTC",
            NODE[3],
            "llm-pretrain-slice-1-3-x7k2p",
            1,
            3,
            0,
            "CRITICAL",
        ),
        "z9x8c7v6b5n4": (
            "2026-11-29 18:41:02.004551 UTC",
            NODE[0],
            "llm-pretrain-slice-0-0-z5v8n",
            0,
            0,
            1,
            "INFO",
        ),
    }
    assert set(rows) == set(expected)
    for insert_id, (ts, host, pod, slice_, worker, attempt, severity) in expected.items():
        row = rows[insert_id]
        got = (row["ts_ns"], row["host"], row["pod"], row["slice"], row["worker"], row["attempt"])
        assert got == (ns(ts), host, pod, slice_, worker, attempt), insert_id
        assert row["severity"] == severity
        assert row["workload"] == "llm-pretrain"
        assert row["ts_quality"] == "exact"
    assert rows["9x1kq2f3z8w0ab7c"]["message"] == POLLED


def test_explorer_csv_rows() -> None:
    rows = by_line("explorer.csv")
    assert sorted(rows) == [2, 3, 4, 7, 8]  # the multi-line record spans lines 4-6
    assert {r["reader"] for r in rows.values()} == {"cloud_logging.csv"}
    merged = rows[4]
    assert merged["message"] == (
        POLLED + "\nAdditional GRPC error information from remote target coordination_service "
        "while calling /tensorflow.CoordinationService/PollForError:\n"
        ':UNKNOWN:Error received from peer  {grpc_message:"Socket closed", grpc_status:14}'
    )
    assert merged["severity"] == "ERROR"
    assert merged["logger"] == "coordination_service_agent.cc:332"
    assert (merged["host"], merged["slice"], merged["worker"], merged["attempt"]) == (
        NODE[3],
        1,
        3,
        0,
    )
    assert merged["ts_ns"] == ns("2026-11-29T18:35:15.123999Z")
    assert rows[2]["attempt"] == 1
    assert rows[2]["pod"] == "llm-pretrain-slice-0-0-z5v8n"
    assert rows[3]["severity"] == "CRITICAL"
    assert rows[7]["extra"]["payload_ts_quality"] == "inferred_tz"
    event = rows[8]  # k8s_node event: host from involvedObject (kind Node)
    assert event["host"] == NODE[3]
    assert event["message"] == (
        "NodeNotReady: Node gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp status is now: NodeNotReady"
    )
    assert event["ts_ns"] == ns("2026-11-29T18:37:12Z")


# -- shared code: what these samples showed (see the report) ------------------------------


def test_cloud_logging_csv_longer_than_the_sniff_head_is_read_whole() -> None:
    header = "timestamp,severity,textPayload,logName"
    body = [
        f"2026-11-29T18:20:{i % 60:02d}Z,INFO,line number {i} with some padding text,"
        "projects/p/logs/stdout"
        for i in range(3000)
    ]
    data = ("\n".join([header, *body]) + "\n").encode()
    assert len(data) > 64 << 10
    ctx = ReadContext("explorer.csv")
    content = Content(io.BytesIO(data), ExpansionBudget(), ctx.path)
    content.head(64 << 10)
    count = sum(frame.height for frame in CloudLoggingReader().read(content, ctx))
    assert count == 3000
    assert ctx.counts.records == 3000 and ctx.counts.dropped == 0
