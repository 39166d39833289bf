"""The ``diagon`` and ``diagon_api`` readers on ML Diagnostics dumps (tests/samples/diagon).

Expected values come from ../shared/reference/formats.md §4 (daemon glog lines, connection
operator, SDK messages, ``gcloud alpha mldiagnostics`` JSON and the ``0001-01-01T00:00:00Z``
"unset" time), §5.1 (absl/glog, kubectl wrappers), failure-modes.md §1.1 (MXLA hang analyzer
codes, culprits as numeric instance IDs) and from the sample files themselves, never from the
readers' code.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.ingest.base import FileCounts, Issue, ReadContext, ReadOptions
from analyzer.ingest.cloud_logging import CloudLoggingReader
from analyzer.ingest.detect import choose_reader
from analyzer.ingest.diagon import DiagonApiReader, DiagonDaemonReader, pod_from_path
from analyzer.ingest.extra import compact_json
from analyzer.ingest.jsondoc import DocumentError, load
from analyzer.ingest.text import TextReader
from analyzer.schema import conform
from analyzer.streams import Content, ExpansionBudget
from tests.helpers import ns, read_table

SAMPLES = Path(__file__).parent.parent / "samples"
DIAGON = SAMPLES / "diagon"
DAEMON = DiagonDaemonReader()
API = DiagonApiReader()
LINE_NAMES = (
    "daemon_prefix.log",
    "diagon-daemon-q7m4x.log",
    "operator_console.log",
    "mldiagnostics-connection-operator-6c9f8d7b5-q2w4x.log",
)
DOC_NAMES = ("ml_runs.json", "monitored_events.json")
OPERATOR_JSON = "mldiagnostics-connection-operator-6c9f8d7b5-q2w4x.log"
#: When the samples were "copied off the cluster" (mtime): the day after the incident.
MTIME = "2026-11-30T09:00:00Z"
WRAPPER = re.compile(r"^(?:\[pod/[^\]]+\] )?(?:\S+Z )?")

RUN1 = "llm-pretrain-tpu-v5p-train-default-jobset-llm-pretrain-20261129-180102"
RUN0 = "llm-pretrain-tpu-v5p-train-default-jobset-llm-pretrain-20261128-091544"
RUNS = "projects/my-tpu-proj/locations/us-east5/machineLearningRuns"
ICI_DETAILS = (
    "ICI Link issues detected in 1437928523886234104, 1844488193021748650: This indicates "
    "networking issues on ICI links connected between TPU processors."
)
ICI_ACTION = (
    "Contact Google team for further diagnosis. Potential action could be to Outkast affected "
    "nodes, but there could be other causes that need further investigation."
)
DOC_URL = "https://docs.cloud.google.com/tpu/docs/ml-diagnostics/workload-monitoring"


# -- helpers ---------------------------------------------------------------------------------


def run_reader(
    reader: DiagonDaemonReader | DiagonApiReader,
    data: bytes,
    path: str,
    options: ReadOptions | None = None,
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    """Read ``data`` as the pipeline does (sniff-sized head first), without the pipeline."""
    ctx = ReadContext(path, options or ReadOptions(), mtime=ns(MTIME) / 1e9)
    content = Content(io.BytesIO(data), ExpansionBudget(), path)
    content.head(64 << 10)
    frames = list(reader.read(content, ctx))
    frame = pl.concat(frames, how="vertical") if frames else pl.DataFrame()
    return frame, ctx.counts, ctx.issues


@functools.cache
def _read(
    name: str, chunk_bytes: int | None = None
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    reader = API if name.endswith(".json") else DAEMON
    options = ReadOptions() if chunk_bytes is None else ReadOptions(chunk_bytes=chunk_bytes)
    return run_reader(reader, (DIAGON / name).read_bytes(), f"diagon/{name}", options)


def read(name: str, chunk_bytes: int | None = None) -> pl.DataFrame:
    return _read(name, chunk_bytes)[0]


def row_list(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Canonical rows (schema applied) in order, ``extra`` parsed, ``ts`` as ns."""
    if frame.height == 0:
        return []
    numbered = frame.with_columns(
        row_id=pl.int_range(pl.len(), dtype=pl.Int64), file_id=pl.lit(0, dtype=pl.Int32)
    )
    canonical = pl.from_arrow(conform(numbered))
    assert isinstance(canonical, pl.DataFrame)
    out = []
    for row in canonical.with_columns(ts_ns=pl.col("ts").dt.epoch("ns")).iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        out.append(row)
    return out


def rows_of(frame: pl.DataFrame) -> dict[int, dict[str, Any]]:
    """:func:`row_list` keyed by line (one row per line in these inputs)."""
    out: dict[int, dict[str, Any]] = {}
    for row in row_list(frame):
        assert row["line"] not in out
        out[row["line"]] = row
    return out


def rows(name: str) -> dict[int, dict[str, Any]]:
    return rows_of(read(name))


def lines_of(name: str) -> list[str]:
    return (DIAGON / name).read_text().split("\n")[:-1]


def doc_rows(data: bytes | str, path: str = "diagon/doc.json") -> list[dict[str, Any]]:
    """Rows of an inline gcloud document, in order, with ``extra`` parsed."""
    raw = data.encode() if isinstance(data, str) else data
    frame, tally, _ = run_reader(API, raw, path)
    assert tally.records == tally.rows + tally.dropped
    return row_list(frame)


def independent_count(name: str) -> int:
    """Records of a gcloud document counted without culprit's code: every run, every event
    and every analyzer report is one."""
    document = json.loads((DIAGON / name).read_bytes())
    items = document if isinstance(document, list) else [document]
    return sum(1 + len(item.get("analyzerReports", [])) for item in items)


# -- sniffing and reader choice ------------------------------------------------------------


@pytest.mark.parametrize("name", LINE_NAMES)
def test_sniff_claims_daemon_and_operator_logs(name: str) -> None:
    head = (DIAGON / name).read_bytes()[: 64 << 10]
    score = DAEMON.sniff(head, f"diagon/{name}")
    assert score >= 0.7
    assert TextReader().sniff(head, f"diagon/{name}") < score
    assert API.sniff(head, f"diagon/{name}") == 0.0
    choice = choose_reader(head, f"diagon/{name}")
    assert choice is not None and choice.recognized
    assert choice.reader.name == "diagon"


@pytest.mark.parametrize("name", DOC_NAMES)
def test_sniff_claims_gcloud_documents(name: str) -> None:
    head = (DIAGON / name).read_bytes()[: 64 << 10]
    assert API.sniff(head, f"diagon/{name}") >= 0.9
    # The path names Diagon, but a JSON document is not a log of lines.
    assert DAEMON.sniff(head, f"diagon/{name}") == 0.0
    assert CloudLoggingReader().sniff(head, name) == 0.0
    choice = choose_reader(head, f"diagon/{name}")
    assert choice is not None and choice.recognized
    assert choice.reader.name == "diagon_api"


def _other_samples() -> list[Path]:
    return sorted(
        path
        for folder in ("text", "cloud_logging", "kubelet")
        if (SAMPLES / folder).is_dir()
        for path in (SAMPLES / folder).iterdir()
        if path.is_file()
    )


@pytest.mark.parametrize("path", _other_samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_families_are_left_alone(path: Path) -> None:
    """Text, Cloud Logging and kubelet samples are not Diagon dumps, even the JAX worker log
    that uses the ML Diagnostics SDK (text/python_logging.log: SDK lines are workload stdout)."""
    head = path.read_bytes()[: 64 << 10]
    relative = f"{path.parent.name}/{path.name}"
    assert DAEMON.sniff(head, relative) == 0.0
    assert API.sniff(head, relative) == 0.0
    choice = choose_reader(head, relative)
    assert choice is None or choice.reader.name not in ("diagon", "diagon_api")


def test_sniff_needs_a_diagon_marker() -> None:
    absl = b"I1129 18:35:15.123456       1 stream_client.cc:88] connected\n" * 4
    assert DAEMON.sniff(absl, "logs/worker.log") == 0.0
    # The same lines under a Diagon path, or with a daemon lifecycle string, are claimed.
    assert DAEMON.sniff(absl, "gke-mldiagnostics/daemon.log") >= 0.7
    daemon = (
        absl + b"I1129 18:35:45.201902       1 heartbeat.cc:61] Sending DaemonHeartbeatRequest\n"
    )
    assert DAEMON.sniff(daemon, "logs/node.log") >= 0.7
    labelled = b"2026-11-29T18:10:02Z\tINFO\tsetup\tworkload label managed-mldiagnostics-gke=true\n"
    assert DAEMON.sniff(labelled, "operator.log") >= 0.7


def test_sniff_sdk_lines_count_only_when_they_are_most_of_the_file() -> None:
    sdk = (
        b"WARNING:google_cloud_mldiagnostics.core.global_manager:GKE_DIAGON_IDENTIFIER "
        b"environment variable not set.\n"
        b"INFO:google_cloud_mldiagnostics.core.global_manager:SIGTERM received (signum: 15). "
        b"Start diagon sdk shutdown...\n"
    )
    assert DAEMON.sniff(sdk, "sidecar.log") >= 0.7
    worker = sdk + b"I1129 18:20:05.512771 140231558416192 train.py:211] completed step\n" * 3
    assert DAEMON.sniff(worker, "worker.log") == 0.0


def test_api_sniff_refuses_other_json() -> None:
    entry = (
        b'{"insertId":"a","logName":"projects/p/logs/ml_diagnostics_metric","resource":'
        b'{"type":"generic_node","labels":{"node_id":"run"}},"jsonPayload":{"values":[1]},'
        b'"textPayload":"projects/p/locations/l/machineLearningRuns/r runPhase"}\n'
    )
    assert API.sniff(entry, "diagon/metrics.json") == 0.0
    modelarts = (
        b'{"kind": "job", "metadata": {"id": "95f661bd-1527-41b8-971c-eca55e513254", '
        b'"name": "llm-pretrain-910b-16n"}, "status": {"phase": "Failed", "tasks": ["worker-0"]}}'
    )
    assert API.sniff(modelarts, "modelarts/job.json") == 0.0
    zap = (DIAGON / OPERATOR_JSON).read_bytes()
    assert API.sniff(zap, OPERATOR_JSON) == 0.0
    assert API.sniff(b"I1129 18:35:15.123456 1 a.cc:1] runPhase\n", "x.log") == 0.0
    pretty = b'{\n  "foo": 1\n}\n'
    assert DAEMON.sniff(pretty, "diagon/other.json") == 0.0


# -- nothing lost, provenance, chunking ----------------------------------------------------


@pytest.mark.parametrize("name", LINE_NAMES)
def test_every_line_is_accounted_for(name: str) -> None:
    frame, tally, issues = _read(name)
    data = (DIAGON / name).read_bytes()
    assert issues == []
    assert tally.records == data.count(b"\n") == len(lines_of(name))
    assert tally.records == tally.rows + tally.folded + tally.blank + tally.dropped
    assert tally.rows == frame.height == len(lines_of(name))  # one record per line here
    assert tally.dropped == tally.duplicates == tally.repaired == 0


@pytest.mark.parametrize("name", DOC_NAMES)
def test_every_object_is_accounted_for(name: str) -> None:
    frame, tally, issues = _read(name)
    assert issues == []
    assert tally.records == independent_count(name)
    assert tally.records == tally.rows + tally.folded + tally.blank + tally.dropped
    assert tally.rows == frame.height == independent_count(name)
    assert tally.dropped == tally.folded == tally.blank == tally.repaired == 0


@pytest.mark.parametrize("name", LINE_NAMES)
def test_line_rows_lead_back_to_their_line(name: str) -> None:
    data = (DIAGON / name).read_bytes()
    lines = lines_of(name)
    frame = read(name)
    assert frame["line"].is_sorted() and frame["offset"].is_sorted()
    for row in frame.iter_rows(named=True):
        offset, line = row["offset"], row["line"]
        assert data[:offset].count(b"\n") + 1 == line
        assert offset == 0 or data[offset - 1 : offset] == b"\n"
        assert data[offset:].split(b"\n", 1)[0].decode() == lines[line - 1]
        first = row["message"].split("\n", 1)[0]
        assert first in lines[line - 1], (line, first)


@pytest.mark.parametrize("name", DOC_NAMES)
def test_document_rows_start_at_their_object(name: str) -> None:
    """Each row's offset is the ``{`` of the JSON object it came from, on its line."""
    data = (DIAGON / name).read_bytes()
    text = data.decode()
    assert len(text) == len(data), "samples are ASCII, so byte and char offsets agree"
    frame = read(name)
    assert frame["line"].is_sorted() and frame["offset"].is_sorted()
    for row in rows_of(frame).values():
        offset, line = row["offset"], row["line"]
        assert data[offset : offset + 1] == b"{"
        assert data[:offset].count(b"\n") + 1 == line
        obj, _ = json.JSONDecoder().raw_decode(text, offset)
        kind = row["reader"].removeprefix("diagon_api.")
        if kind == "analyzer_report":
            assert obj["analyzer"] == row["logger"]
            assert row["message"].startswith(obj["details"])
            assert obj["detectionState"] == row["extra"]["detectionState"]
        else:
            assert obj["name"] == row["extra"]["name"]
            assert "analyzerReports" not in row["extra"]


@pytest.mark.parametrize("chunk_bytes", [64, 257])
@pytest.mark.parametrize("name", LINE_NAMES)
def test_chunk_size_does_not_change_rows(name: str, chunk_bytes: int) -> None:
    small, tally, issues = _read(name, chunk_bytes)
    assert issues == []
    assert small.equals(read(name))
    assert tally == _read(name)[1]


@pytest.mark.parametrize("name", LINE_NAMES + DOC_NAMES)
def test_rows_conform_to_the_canonical_schema(name: str) -> None:
    got = rows(name)
    assert {r["source"] for r in got.values()} == {"diagon"}
    for row in got.values():
        assert row["severity"] is not None
        assert row["ts"] is not None and row["ts_quality"] != "missing"
        assert row["host"] is None, "nothing in these samples names a node"
        assert not row["message"].endswith("\n")


# -- daemon logs (formats.md §4.1: glog lines, [B] strings) --------------------------------


def test_daemon_prefix_rows() -> None:
    got = rows("daemon_prefix.log")
    a, b, w = "diagon-daemon-7xk2p", "diagon-daemon-b9r4t", "llm-pretrain-slice-0-0-a8c2d"
    expected = {
        # line: (pod, ts, payload_ts, severity, logger, diagon_event)
        1: (
            a,
            "2026-11-29T18:20:00.512377401Z",
            "2026-11-29T18:20:00.512004Z",
            "INFO",
            "main.cc:41",
            None,
        ),
        2: (
            a,
            "2026-11-29T18:20:00.734512881Z",
            "2026-11-29T18:20:00.734118Z",
            "INFO",
            "stream_client.cc:88",
            "stream",
        ),
        3: (
            a,
            "2026-11-29T18:20:00.801774310Z",
            "2026-11-29T18:20:00.801377Z",
            "INFO",
            "daemon.cc:142",
            "registration",
        ),
        4: (
            a,
            "2026-11-29T18:20:30.802288015Z",
            "2026-11-29T18:20:30.801902Z",
            "INFO",
            "heartbeat.cc:61",
            "heartbeat",
        ),
        14: (
            b,
            "2026-11-29T18:22:36.914187266Z",
            "2026-11-29T18:22:36.913801Z",
            "WARNING",
            "heartbeat.cc:75",
            "heartbeat",
        ),
        15: (
            b,
            "2026-11-29T18:22:36.914420950Z",
            "2026-11-29T18:22:36.914032Z",
            "WARNING",
            "stream_client.cc:131",
            "reconnect",
        ),
        16: (
            b,
            "2026-11-29T18:22:41.915873012Z",
            "2026-11-29T18:22:41.915480Z",
            "INFO",
            "stream_client.cc:97",
            "reconnect",
        ),
        17: (
            b,
            "2026-11-29T18:22:42.121309744Z",
            "2026-11-29T18:22:42.120954Z",
            "INFO",
            "stream_client.cc:88",
            "stream",
        ),
        18: (
            b,
            "2026-11-29T18:22:42.188706519Z",
            "2026-11-29T18:22:42.188310Z",
            "INFO",
            "daemon.cc:142",
            "registration",
        ),
        20: (
            w,
            "2026-11-29T18:20:04.118532Z",
            None,
            "WARNING",
            "google_cloud_mldiagnostics.core.global_manager",
            "identity",
        ),
        21: (
            w,
            "2026-11-29T18:41:07.250118Z",
            None,
            "INFO",
            "google_cloud_mldiagnostics.core.global_manager",
            "shutdown",
        ),
        22: (
            w,
            "2026-11-29T18:41:07.391720Z",
            None,
            "INFO",
            "google_cloud_mldiagnostics.core.global_manager",
            "shutdown",
        ),
    }
    for line, (pod, ts, payload_ts, severity, logger, event) in expected.items():
        row = got[line]
        assert (row["pod"], row["severity"], row["logger"]) == (pod, severity, logger), line
        assert row["container"] == ("workload" if pod == w else "diagon-daemon")
        assert (row["ts_ns"], row["ts_quality"]) == (ns(ts), "exact"), line
        payload = row["extra"].get("payload_ts")
        assert (ns(payload) if payload else None) == (ns(payload_ts) if payload_ts else None)
        assert row["extra"].get("diagon_event") == event, line
        assert row["reader"] == ("diagon.python" if pod == w else "diagon.absl")
        assert row["host"] is None and row["namespace"] is None
    assert got[2]["message"] == "Stream established."
    assert got[3]["message"] == "Received successful DaemonRegistrationResponse from backend"
    assert got[4]["message"] == "Sending DaemonHeartbeatRequest"
    assert got[4]["extra"]["tid"] == "1"
    assert got[14]["message"] == "DaemonHeartbeatRequest failed: UNAVAILABLE: Socket closed"
    assert got[20]["message"] == "GKE_DIAGON_IDENTIFIER environment variable not set."
    assert got[21]["message"] == "SIGTERM received (signum: 15). Start diagon sdk shutdown..."
    assert got[22]["message"] == "Diagon SDK graceful shutdown complete due to SIGTERM. Exiting."


def test_heartbeat_gap_is_visible_per_pod() -> None:
    """Heartbeats are liveness (formats.md §4): pod b9r4t goes quiet for ~95 s before its
    heartbeat fails and it reconnects; pod 7xk2p keeps its 30 s cadence."""
    got = rows("daemon_prefix.log").values()
    beats: dict[str, list[int]] = {}
    for row in got:
        if row["message"] == "Sending DaemonHeartbeatRequest":
            assert row["extra"]["diagon_event"] == "heartbeat"
            beats.setdefault(row["pod"], []).append(row["ts_ns"])
    gaps = {pod: [b - a for a, b in itertools.pairwise(ts)] for pod, ts in beats.items()}
    assert len(beats["diagon-daemon-7xk2p"]) == 5
    assert all(29e9 < gap < 31e9 for gap in gaps["diagon-daemon-7xk2p"])
    assert max(gaps["diagon-daemon-b9r4t"]) == ns("2026-11-29T18:23:12.189158202Z") - ns(
        "2026-11-29T18:21:01.290954391Z"
    )
    events = [r["extra"].get("diagon_event") for r in got if r["pod"] == "diagon-daemon-b9r4t"]
    assert events == [
        None,
        "stream",
        "registration",
        "heartbeat",
        "heartbeat",
        "heartbeat",
        "reconnect",
        "reconnect",
        "stream",
        "registration",
        "heartbeat",
    ]


def test_jax_coordination_heartbeats_are_not_diagon_events() -> None:
    """A JAX worker line about the coordination service's heartbeat (formats.md §5.1) in a
    Diagon dump is not a daemon heartbeat."""
    data = (
        b"I1129 18:35:45.201902       1 heartbeat.cc:61] Sending DaemonHeartbeatRequest\n"
        b"E1129 18:35:15.123456    1234 coordination_service_agent.cc:332] /job:jax_worker/"
        b"replica:0/task:13 heartbeat timeout.\n"
    )
    frame, _, _ = run_reader(DAEMON, data, "diagon/mixed.log")
    got = rows_of(frame)
    assert got[1]["extra"]["diagon_event"] == "heartbeat"
    assert "diagon_event" not in got[2]["extra"]
    assert got[2]["severity"] == "ERROR"


def test_plain_daemon_log_takes_its_pod_from_the_file_name() -> None:
    got = rows("diagon-daemon-q7m4x.log")
    assert sorted(got) == list(range(1, 13))
    for row in got.values():
        assert row["pod"] == "diagon-daemon-q7m4x"
        assert row["container"] is None
        assert row["ts_quality"] == "inferred_year"
        assert row["reader"] == "diagon.absl"
    assert got[1]["ts_ns"] == ns("2026-11-29T18:20:02.118004Z")
    assert got[12]["ts_ns"] == ns("2026-11-29T18:23:41.188771Z")
    # A lifecycle line keeps its own level: the stream loss is an E line, tagged, still ERROR.
    lost = got[7]
    assert (lost["severity"], lost["extra"]["diagon_event"]) == ("ERROR", "stream")
    assert lost["message"] == "Stream closed with status UNAVAILABLE: Connection reset by peer"
    assert [got[n]["extra"].get("diagon_event") for n in range(1, 13)] == [
        None,
        "stream",
        "registration",
        "heartbeat",
        "heartbeat",
        "heartbeat",
        "stream",
        "heartbeat",
        "reconnect",
        "stream",
        "registration",
        "heartbeat",
    ]
    assert [got[n]["severity"] for n in (6, 7, 8, 9)] == ["INFO", "ERROR", "WARNING", "INFO"]


def test_glog_file_header_names_the_host() -> None:
    data = (
        b"Log file created at: 2026/11/29 18:20:00\n"
        b"Running on machine: gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp\n"
        b"I1129 18:20:02.340118       1 stream_client.cc:88] Stream established.\n"
    )
    frame, tally, _ = run_reader(DAEMON, data, "diagon/diagon-daemon.INFO")
    got = rows_of(frame)
    assert tally.records == tally.rows == 3
    assert {r["host"] for r in got.values()} == {"gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp"}
    assert got[3]["ts_ns"] == ns("2026-11-29T18:20:02.340118Z")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("diagon/diagon-daemon-q7m4x.log", ("diagon-daemon-q7m4x", None, None)),
        ("dump/diagon-daemon-q7m4x.log.gz", ("diagon-daemon-q7m4x", None, None)),
        ("dump/diagon-daemon-q7m4x/previous.txt", ("diagon-daemon-q7m4x", None, None)),
        (
            "node/var/log/pods/gke-mldiagnostics_diagon-daemon-q7m4x_"
            "0b6c2f1e-7d3a-4e5b-9c8d-1a2b3c4d5e6f/diagon-daemon/0.log",
            ("diagon-daemon-q7m4x", "diagon-daemon", "gke-mldiagnostics"),
        ),
        (
            "node/var/log/containers/diagon-daemon-q7m4x_gke-mldiagnostics_diagon-daemon-"
            + "a" * 64
            + ".log",
            ("diagon-daemon-q7m4x", "diagon-daemon", "gke-mldiagnostics"),
        ),
        ("diagon/operator_console.log", (None, None, None)),
        ("diagon/daemon.log", (None, None, None)),
        ("diagon/kubelet-trace.log", (None, None, None)),  # 'trace' has vowels: not a suffix
    ],
)
def test_pod_from_path(path: str, expected: tuple[str | None, ...]) -> None:
    assert pod_from_path(path) == expected


def test_kubelet_pod_log_path_gives_namespace_and_container() -> None:
    path = (
        "node/var/log/pods/gke-mldiagnostics_diagon-daemon-q7m4x_"
        "0b6c2f1e-7d3a-4e5b-9c8d-1a2b3c4d5e6f/diagon-daemon/0.log"
    )
    data = (DIAGON / "diagon-daemon-q7m4x.log").read_bytes()
    frame, _, _ = run_reader(DAEMON, data, path)
    got = rows_of(frame)
    assert {(r["pod"], r["container"], r["namespace"]) for r in got.values()} == {
        ("diagon-daemon-q7m4x", "diagon-daemon", "gke-mldiagnostics")
    }


# -- connection operator: zap console and JSON (formats.md §4.1) ---------------------------


def test_operator_console_rows() -> None:
    got = rows("operator_console.log")
    lines = lines_of("operator_console.log")
    expected = {
        # line: (ts, severity, logger, reader)
        1: ("2026-11-29T18:10:02.381Z", "INFO", "setup", "diagon.zap"),
        2: ("2026-11-29T18:10:02.382Z", "INFO", "controller-runtime.metrics", "diagon.zap"),
        3: ("2026-11-29T18:10:02.382Z", "INFO", None, "diagon.zap"),
        4: ("2026-11-29T18:10:02.383912Z", "INFO", "leaderelection.go:254", "diagon.absl"),
        9: ("2026-11-29T18:35:40.120Z", "INFO", None, "diagon.zap"),
        10: (
            "2026-11-29T18:35:40.121Z",
            "INFO",
            "controllers.MLDiagnosticsConnection",
            "diagon.zap",
        ),
        11: ("2026-11-29T18:35:55.130Z", "ERROR", None, "diagon.zap"),
        12: ("2026-11-29T18:41:10Z", "INFO", None, "diagon.zap"),
        13: ("2026-11-29T18:41:10Z", "INFO", None, "diagon.zap"),
    }
    for line, (ts, severity, logger, reader) in expected.items():
        row = got[line]
        assert (row["ts_ns"], row["severity"], row["logger"], row["reader"]) == (
            ns(ts),
            severity,
            logger,
            reader,
        ), line
        assert row["ts_quality"] == ("inferred_year" if reader == "diagon.absl" else "exact")
    assert got[1]["message"] == "starting manager"
    assert got[3]["message"] == 'starting server\t{"name": "health probe", "addr": "[::]:8081"}'
    # A one-word message with fields is not a logger name.
    assert got[9]["message"] == lines[8].split("\t", 2)[2]
    assert got[9]["message"].startswith('Reconciling\t{"controller": "mldiagnosticsconnection"')
    assert got[10]["message"].startswith("Triggering capture\t{")
    assert got[11]["message"] == lines[10].split("\t", 2)[2]
    assert "connect: connection refused" in got[11]["message"]
    assert got[13]["extra"] == {"diagon_event": "shutdown"}
    assert "diagon_event" not in got[12]["extra"]


def test_operator_json_lines_keep_the_line_as_message() -> None:
    got = rows(OPERATOR_JSON)
    lines = lines_of(OPERATOR_JSON)
    for line, row in got.items():
        if row["reader"] == "diagon.zap":
            assert row["message"] == lines[line - 1]
            assert json.loads(row["message"])["level"] in ("info", "error", "dpanic")
        assert row["pod"] == "mldiagnostics-connection-operator-6c9f8d7b5-q2w4x"
    expected = {
        # line: (ts ns, severity, logger)
        1: (1795975802381234000, "INFO", "setup"),
        2: (1795975802382300000, "INFO", "controller-runtime.metrics"),
        3: (1795975802382410000, "INFO", None),
        5: (1795975802401400000, "INFO", None),
        7: (1795977340121000000, "ERROR", "controllers.MLDiagnosticsConnection"),  # dpanic
        8: (1795977355130077000, "ERROR", None),
        9: (1795977670000000000, "INFO", None),
    }
    for line, (ts, severity, logger) in expected.items():
        row = got[line]
        assert (row["ts_ns"], row["severity"], row["logger"], row["ts_quality"]) == (
            ts,
            severity,
            logger,
            "exact",
        ), line
    assert ns("2026-11-29T18:10:02.381234Z") == 1795975802381234000
    assert got[4]["reader"] == "diagon.absl"
    assert got[4]["logger"] == "leaderelection.go:254"
    assert got[9]["extra"]["diagon_event"] == "shutdown"
    assert json.loads(got[8]["message"])["error"].endswith("connect: connection refused")


def test_zap_console_epoch_in_scientific_notation() -> None:
    """Go's %v of a float64, as zap's console encoder writes epoch stamps: the decimal point
    is moved in the text, so the digits the line has are kept exactly."""
    data = (
        b"1.7959758023812342e+09\tINFO\tsetup\tstarting manager\n"
        b"1.7959758023812342e+09\tDPANIC\tcontroller-runtime\todd number of arguments\n"
        b"[pod/mldiagnostics-connection-operator-6c9f8d7b5-q2w4x/controller] "
        b"2026-11-29T18:10:02.999999999Z 1.795975802e+09\tWARN\tsetup\tdiagon: slow start\n"
    )
    frame, tally, issues = run_reader(DAEMON, data, "diagon/operator.log")
    got = rows_of(frame)
    assert (tally.records, tally.rows, issues) == (3, 3, [])
    assert got[1]["ts_ns"] == 1795975802381234200
    assert (got[1]["ts_quality"], got[1]["logger"], got[1]["message"]) == (
        "exact",
        "setup",
        "starting manager",
    )
    assert got[2]["severity"] == "ERROR"
    wrapped = got[3]
    assert wrapped["ts_ns"] == ns("2026-11-29T18:10:02.999999999Z")
    assert ns(wrapped["extra"]["payload_ts"]) == 1795975802000000000
    assert (wrapped["severity"], wrapped["pod"], wrapped["container"]) == (
        "WARNING",
        "mldiagnostics-connection-operator-6c9f8d7b5-q2w4x",
        "controller",
    )


def test_zap_json_with_rfc3339_stamps() -> None:
    data = (
        b'{"level":"warn","ts":"2026-11-29T18:35:15.123+0000","logger":"mldc","msg":"retry",'
        b'"MLDiagnosticsConnection":{"name":"c"}}\n'
        b'{"level":"info","ts":"2026-11-29T18:35:16Z","msg":"Reconciling"}\n'
    )
    frame, _, _ = run_reader(DAEMON, data, "operator.log")
    got = rows_of(frame)
    assert (got[1]["ts_ns"], got[1]["severity"], got[1]["logger"]) == (
        ns("2026-11-29T18:35:15.123Z"),
        "WARNING",
        "mldc",
    )
    assert got[1]["message"] == data.split(b"\n")[0].decode()
    assert (got[2]["ts_ns"], got[2]["logger"]) == (ns("2026-11-29T18:35:16Z"), None)
    assert DAEMON.sniff(data, "operator.log") >= 0.7


# -- gcloud mldiagnostics documents ---------------------------------------------------------


def test_ml_run_rows() -> None:
    got = rows("ml_runs.json")
    assert sorted(got) == [2, 42]
    active, done = got[2], got[42]
    for row in (active, done):
        assert row["reader"] == "diagon_api.ml_run"
        assert (row["workload"], row["namespace"], row["host"]) == ("llm-pretrain", "default", None)
        assert (row["severity"], row["ts_quality"], row["logger"]) == ("INFO", "exact", None)
        assert row["extra"]["workload_kind"] == "JobSet"
        assert (
            row["extra"]["cluster"]
            == "projects/my-tpu-proj/locations/us-east5/clusters/tpu-v5p-train"
        )
    assert active["ts_ns"] == ns("2026-11-29T18:01:02.118342561Z")
    assert active["extra"]["run_id"] == RUN1
    assert active["extra"]["name"] == f"{RUNS}/{RUN1}"
    assert active["extra"]["runPhase"] == "ACTIVE"
    # '0001-01-01T00:00:00Z' means "not set": an explicit null, never year 1.
    assert "endTime" in active["extra"] and active["extra"]["endTime"] is None
    assert active["extra"]["updateTime"] == "2026-11-29T18:41:07.391720114Z"
    assert active["extra"]["configs"]["hardwareConfigs"]["device_type"] == "TPU v5p"
    assert active["message"] == f"ML run {RUNS}/{RUN1} (llm-pretrain) runPhase ACTIVE"
    assert done["ts_ns"] == ns("2026-11-28T09:15:44.902117338Z")
    assert done["extra"]["endTime"] == "2026-11-28T17:02:19.554008120Z"
    assert done["extra"]["run_id"] == RUN0
    assert done["extra"]["runPhase"] == "COMPLETED"


def test_monitored_event_rows() -> None:
    got = rows("monitored_events.json")
    assert sorted(got) == [2, 4, 15, 27, 29, 40]
    kinds = {line: row["reader"].removeprefix("diagon_api.") for line, row in got.items()}
    assert kinds == {
        2: "monitored_event",
        4: "analyzer_report",
        15: "analyzer_report",
        27: "monitored_event",
        29: "analyzer_report",
        40: "analyzer_report",
    }
    perf, hang = got[2], got[27]
    assert perf["message"] == (
        "PERFORMANCE_DEGRADATION: Performance degradation - 2026-11-29T18:28:00Z"
    )
    assert (perf["ts_ns"], perf["ts_quality"]) == (ns("2026-11-29T18:28:00Z"), "exact")
    assert perf["extra"]["endTime"] == "2026-11-29T18:33:00Z"
    assert (perf["extra"]["run_id"], perf["extra"]["event_id"]) == (RUN1, "perf-3c9a51e2")
    assert perf["extra"]["analyzer_reports"] == 2
    assert perf["logger"] == "PERFORMANCE_DEGRADATION"
    assert perf["workload"] == RUN1
    assert hang["message"] == "HANG: Hang - 2026-11-29T18:35:15Z"
    assert hang["extra"]["endTime"] is None  # the unset sentinel
    assert hang["extra"]["event_id"] == "hang-7d41c2e0"
    for row in (perf, hang):
        assert (row["severity"], row["host"]) == ("WARNING", None)
        assert "code" not in row["extra"]


def test_analyzer_report_rows() -> None:
    got = rows("monitored_events.json")
    ici, thermal, mxla, memory = got[4], got[15], got[29], got[40]
    # DETECTED -> ERROR, anything else -> INFO; reports take their event's start time.
    assert [r["severity"] for r in (ici, thermal, mxla, memory)] == [
        "ERROR",
        "INFO",
        "ERROR",
        "INFO",
    ]
    assert [r["logger"] for r in (ici, thermal, mxla, memory)] == [
        "ICI Link Analyzer",
        "Thermal Analyzer",
        "MXLA Hang Analyzer",
        "Host Memory Analyzer",
    ]
    for row, start in ((ici, "2026-11-29T18:28:00Z"), (thermal, "2026-11-29T18:28:00Z")):
        assert (row["ts_ns"], row["ts_quality"]) == (ns(start), "inherited")
    assert (mxla["ts_ns"], memory["ts_ns"]) == (ns("2026-11-29T18:35:15Z"),) * 2
    # The report's own text, verbatim, then its recommended actions.
    assert ici["message"] == f"{ICI_DETAILS}\nRecommended action: {ICI_ACTION}"
    assert ici["extra"]["details"] == ICI_DETAILS
    assert ici["extra"]["recommendedActions"] == [
        {"description": ICI_ACTION, "documentationUrl": DOC_URL}
    ]
    # Culprits are numeric instance IDs: kept as strings, never turned into a host.
    assert ici["extra"]["instance_ids"] == ["1437928523886234104", "1844488193021748650"]
    assert mxla["extra"]["instance_ids"] == ["1844488193021748650"]
    assert mxla["extra"]["code"] == "UNRECOVERABLE_ERROR"
    assert "Potential cause: UNRECOVERABLE_ERROR." in mxla["message"]
    assert {r["host"] for r in got.values()} == {None}
    for row in (thermal, memory):
        assert row["extra"]["detectionState"] == "NOT_DETECTED"
        assert "instance_ids" not in row["extra"] and "code" not in row["extra"]
    assert thermal["message"] == "No thermal issues detected on the TPU hosts of this workload."
    for row in (ici, thermal, mxla, memory):
        assert row["extra"]["run_id"] == RUN1
        assert row["workload"] == RUN1
        assert row["extra"]["event_name"].startswith(f"{RUNS}/{RUN1}/monitoredEvents/")


def test_formats_md_describe_sample_verbatim() -> None:
    """The verbatim ``monitored-events describe`` sample (formats.md §4.1), a single object:
    the ``<instance_ids>`` placeholder names no instance."""
    doc = """{
  "analyzerReports": [
    {
      "analyzer": "ICI Link Analyzer",
      "detectionState": "DETECTED",
      "details": "ICI Link issues detected in <instance_ids>: This indicates networking issues on ICI links connected between TPU processors.",
      "recommendedActions": [
        {"description": "Contact Google team for further diagnosis. Potential action could be to Outkast affected nodes, but there could be other causes that need further investigation.",
         "documentationUrl": "https://docs.cloud.google.com/tpu/docs/ml-diagnostics/workload-monitoring"}
      ]
    }
  ],
  "displayName": "Performance degradation - 2026-05-01T12:00:00Z",
  "endTime": "2026-05-01T12:10:00Z",
  "name": "projects/PROJECT_ID/locations/us-central1/machineLearningRuns/my-run-123/monitoredEvents/abc-123-def-456",
  "startTime": "2026-05-01T12:00:00Z",
  "type": "PERFORMANCE_DEGRADATION"
}
"""
    assert API.sniff(doc.encode(), "event.json") >= 0.9
    event, report = doc_rows(doc)
    start = doc.index('{\n      "analyzer"')
    assert (event["line"], event["offset"], report["line"], report["offset"]) == (1, 0, 3, start)
    assert (event["extra"]["run_id"], event["extra"]["event_id"]) == (
        "my-run-123",
        "abc-123-def-456",
    )
    assert report["message"].startswith("ICI Link issues detected in <instance_ids>: ")
    assert "instance_ids" not in report["extra"]
    assert (report["severity"], report["host"]) == ("ERROR", None)


def test_gcloud_reference_samples() -> None:
    """The slimmer ``describe`` sample and the ``machine-learning-run list`` sample of the
    gcloud reference (formats.md §4.1), each read as a document of its own."""
    slim = (
        '{"analyzerInsightFound": true, "displayName": "performance-degradation-event", '
        '"name": "projects/PROJECT_ID/locations/us-central1/machineLearningRuns/my-run-123/'
        'monitoredEvents/abc-123-def-456", "startTime": "2026-05-01T12:00:00Z", '
        '"type": "PERFORMANCE_DEGRADATION"}'
    )
    (event,) = doc_rows(slim)
    assert event["reader"] == "diagon_api.monitored_event"
    assert event["extra"]["analyzerInsightFound"] is True
    assert "endTime" not in event["extra"]
    run = {
        "artifacts": {"gcsPath": "gs://diagon-prod-data"},
        "createTime": "2026-02-05T16:25:28.367865234Z",
        "displayName": "updated-gcloud-cli-run",
        "endTime": "0001-01-01T00:00:00Z",
        "etag": "2a9dad60-a18b-4680-b63d-d0e16214713c",
        "labels": {"on_demand_xprof": "enabled"},
        "name": "projects/PROJECT_ID/locations/us-central1/machineLearningRuns/my-run",
        "orchestrator": "GKE",
        "runPhase": "ACTIVE",
        "runSet": "group-gcloud-cli",
        "tools": [{"xprof": {}}],
        "updateTime": "2026-02-05T16:32:35.885684490Z",
        "workloadDetails": {
            "gke": {
                "cluster": "projects/PROJECT_ID/locations/us-central1/clusters/mldiag-prod-cluster",
                "id": "mldiag-prod-demo-jobset",
                "kind": "JobSet",
                "namespace": "diagon",
            }
        },
    }
    (row,) = doc_rows(json.dumps(run, indent=2))
    assert (row["workload"], row["namespace"]) == ("mldiag-prod-demo-jobset", "diagon")
    assert row["extra"]["run_id"] == "my-run"
    assert row["extra"]["endTime"] is None
    assert row["ts_ns"] == ns("2026-02-05T16:25:28.367865234Z")


def test_hang_codes_from_fields_and_text() -> None:
    """failure-modes.md §1.1: the code may sit in its own field, in the text, or be the
    "cause is not determined" sentence (UNKNOWN)."""
    doc = {
        "name": f"{RUNS}/{RUN1}/monitoredEvents/hang-1",
        "type": "HANG",
        "startTime": "2026-11-29T18:35:15Z",
        "analyzerReports": [
            {
                "analyzer": "MXLA Hang Analyzer",
                "detectionState": "DETECTED",
                "cause": "FINGERPRINT_MISMATCH",
                "details": "Hosts compiled different programs; see also DATA_INPUT_STALL.",
            },
            {
                "analyzer": "MXLA Hang Analyzer",
                "detectionState": "DETECTED",
                "details": "The MXLA hang was detected but a potential cause is not determined",
            },
            {"analyzer": "MXLA Hang Analyzer", "detectionState": "DETECTED", "code": "UNKNOWN"},
            {
                "analyzer": "MXLA Hang Analyzer",
                "detectionState": "DETECTED",
                "details": "PROGRAM_NOT_QUEUED on some workers.",
            },
            {
                "analyzer": "ICI Link Analyzer",
                "detectionState": "NOT_DETECTED",
                "details": "UNKNOWN: status of peers could not be read.",
            },
        ],
    }
    _, mismatch, unknown, coded, queued, plain = doc_rows(json.dumps(doc))
    assert mismatch["extra"]["code"] == "FINGERPRINT_MISMATCH"
    assert mismatch["extra"]["codes"] == ["FINGERPRINT_MISMATCH", "DATA_INPUT_STALL"]
    assert unknown["extra"]["code"] == "UNKNOWN"
    assert coded["extra"]["code"] == "UNKNOWN"
    assert coded["message"] == "MXLA Hang Analyzer: DETECTED"
    assert queued["extra"]["code"] == "PROGRAM_NOT_QUEUED"
    # A bare UNKNOWN in free text (a gRPC status, say) is not a hang code.
    assert "code" not in plain["extra"]


def test_instance_ids_that_name_no_node_stay_ids() -> None:
    """A list field of instance IDs (strings or numbers) is extracted; no row anywhere names
    these instances, so the host stays null."""
    doc = {
        "name": f"{RUNS}/{RUN1}/monitoredEvents/hang-2",
        "type": "HANG",
        "analyzerReports": [
            {
                "analyzer": "MXLA Hang Analyzer",
                "detectionState": "DETECTED",
                "code": "UNRECOVERABLE_ERROR",
                "details": "Some workers have halted with an unrecoverable error.",
                "culpritInstanceIds": ["5550001112223334445", 5550001112223334446],
                "recommendedActions": [
                    {
                        "description": "Inspect instance 5550001112223334447.",
                        "documentationUrl": DOC_URL,
                    }
                ],
            }
        ],
    }
    _, report = doc_rows(json.dumps(doc))
    assert report["extra"]["instance_ids"] == [
        "5550001112223334445",
        "5550001112223334446",
        "5550001112223334447",
    ]
    assert report["host"] is None
    assert report["extra"]["code"] == "UNRECOVERABLE_ERROR"
    assert "node_names" not in report["extra"]


def test_a_node_name_field_gives_the_host() -> None:
    doc = {
        "name": f"{RUNS}/{RUN1}/monitoredEvents/hang-3",
        "analyzerReports": [
            {
                "analyzer": "Thermal Analyzer",
                "detectionState": "DETECTED",
                "details": "Thermal throttling on 1437928523886234104.",
                "nodeName": "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp",
            },
            {
                "analyzer": "Thermal Analyzer",
                "detectionState": "DETECTED",
                "nodes": ["gke-a-1", "gke-a-2"],
            },
        ],
    }
    _, one, two = doc_rows(json.dumps(doc))
    assert one["host"] == "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-k2lp"
    assert one["extra"]["instance_ids"] == ["1437928523886234104"]
    assert two["host"] is None  # two nodes: no single host
    assert two["extra"]["node_names"] == ["gke-a-1", "gke-a-2"]


def test_missing_fields_do_not_crash() -> None:
    doc = """[
  {"runPhase": "FAILED", "errorDetails": "workload deleted"},
  {"analyzerReports": [{}, {"detectionState": "DETECTED"}]},
  {"name": "projects/p/locations/l/machineLearningRuns/r/monitoredEvents/e"},
  {"name": "projects/p/locations/l/machineLearningRuns/r2", "workloadDetails": {"gke": null}}
]
"""
    frame, tally, issues = run_reader(API, doc.encode(), "diagon/partial.json")
    assert (tally.records, tally.rows, tally.dropped, issues) == (6, 6, 0, [])
    run, event, empty, detected, bare, run2 = row_list(frame)
    assert (run["severity"], run["ts"], run["ts_quality"]) == ("ERROR", None, "missing")
    assert run["message"] == "ML run (unnamed) runPhase FAILED\nerrorDetails: workload deleted"
    assert (event["message"], event["ts"], event["workload"]) == (
        "monitored event (unnamed)",
        None,
        None,
    )
    assert (empty["message"], empty["severity"]) == ("analyzer report", "INFO")
    assert (detected["message"], detected["severity"]) == ("DETECTED", "ERROR")
    assert bare["extra"]["run_id"] == "r"
    assert (
        bare["message"]
        == "monitored event projects/p/locations/l/machineLearningRuns/r/monitoredEvents/e"
    )
    assert (run2["workload"], run2["namespace"]) == ("r2", None)
    assert (
        run2["message"] == "ML run projects/p/locations/l/machineLearningRuns/r2 runPhase unknown"
    )
    for row in (run, event, empty, detected, bare, run2):
        assert row["line"] == doc[: row["offset"]].count("\n") + 1
        assert doc[row["offset"]] == "{"


def test_invalid_document_is_one_quarantined_record() -> None:
    doc = (
        b'[\n  {"name": "projects/p/locations/l/machineLearningRuns/r", "runPhase": "ACTIVE",\n'
        b'   "createTime": ]\n'
    )
    with pytest.raises(DocumentError) as caught:
        load(doc)
    frame, tally, issues = run_reader(API, doc, "diagon/bad.json")
    assert frame.height == 0
    assert (tally.records, tally.rows, tally.dropped) == (1, 0, 1)
    (issue,) = issues
    assert issue.kind == "dropped"
    assert (issue.line, issue.offset) == (caught.value.line, caught.value.offset)
    # Independently: the parser stopped at the ']' where a value was expected.
    assert (issue.line, issue.offset) == (3, doc.index(b"]"))
    assert "not valid JSON" in issue.reason
    assert issue.raw is not None and issue.raw.startswith(b"[\n")


def test_truncated_document_is_quarantined() -> None:
    data = (DIAGON / "monitored_events.json").read_bytes()
    cut = data[: len(data) // 2]
    frame, tally, issues = run_reader(API, cut, "diagon/cut.json")
    assert (frame.height, tally.records, tally.dropped) == (0, 1, 1)
    (issue,) = issues
    assert issue.offset == len(cut)
    assert issue.line == cut.count(b"\n") + 1


def test_elements_that_are_not_runs_or_events_are_quarantined() -> None:
    doc = '[42, {"foo": 1},\n {"analyzerReports": ["x", {"analyzer": "A"}]}]'
    frame, tally, issues = run_reader(API, doc.encode(), "diagon/odd.json")
    assert (tally.records, tally.rows, tally.dropped) == (5, 2, 3)
    assert tally.records == tally.rows + tally.dropped
    assert [(i.kind, i.line, i.offset) for i in issues] == [
        ("dropped", 1, 0),  # 42: a scalar has no position of its own; its array's is cited
        ("dropped", 1, doc.index('{"foo"')),
        ("dropped", 2, doc.index('["x"')),
    ]
    assert issues[1].raw == b'{"foo": 1}'
    event, report = row_list(frame)
    assert event["offset"] == doc.index('{"analyzerReports"')
    assert (report["offset"], report["logger"]) == (doc.index('{"analyzer": "A"}'), "A")


def test_scalar_document_and_empty_documents() -> None:
    _, tally, issues = run_reader(API, b'  "runPhase"\n', "diagon/s.json")
    assert (tally.records, tally.dropped) == (1, 1)
    assert (issues[0].line, issues[0].offset) == (1, 2)
    for empty in (b"[]\n", b"", b"  \n"):
        frame, tally, issues = run_reader(API, empty, "diagon/e.json")
        assert (frame.height, tally.records, issues) == (0, 0, [])


def test_raw_api_list_response_is_unwrapped() -> None:
    events = json.loads((DIAGON / "monitored_events.json").read_text())
    doc = json.dumps({"monitoredEvents": events, "nextPageToken": "abc"}, indent=2)
    frame, tally, issues = run_reader(API, doc.encode(), "diagon/raw.json")
    assert (tally.records, tally.rows, issues) == (6, 6, [])
    assert API.sniff(doc.encode(), "raw.json") >= 0.9
    for row in row_list(frame):
        assert doc[row["offset"]] == "{"


def test_bom_and_non_ascii_keep_byte_offsets() -> None:
    doc = (
        "\ufeff[\n"
        '  {"displayName": "训练 run", "name": "projects/p/locations/l/machineLearningRuns/r",\n'
        '   "runPhase": "ACTIVE"},\n'
        '  {"displayName": "事件", "name": "projects/p/locations/l/machineLearningRuns/r/'
        'monitoredEvents/e", "analyzerReports": [{"analyzer": "Thermal Analyzer"}]}\n'
        "]\n"
    ).encode()
    frame, _, _ = run_reader(API, doc, "diagon/bom.json")
    got = row_list(frame)
    assert len(got) == 3
    for row in got:
        assert doc[row["offset"] : row["offset"] + 1] == b"{"
        assert doc[: row["offset"]].count(b"\n") + 1 == row["line"]
    assert (
        got[0]["message"]
        == "ML run projects/p/locations/l/machineLearningRuns/r (训练 run) runPhase ACTIVE"
    )
    assert got[2]["offset"] == doc.index(b'{"analyzer"')


def test_bad_time_is_noted_and_the_row_kept() -> None:
    doc = '[{"name": "projects/p/locations/l/machineLearningRuns/r", "createTime": "yesterday"}]'
    frame, tally, issues = run_reader(API, doc.encode(), "diagon/t.json")
    assert (tally.rows, tally.repaired) == (1, 1)
    (issue,) = issues
    assert (issue.kind, issue.line, issue.offset) == ("kept", 1, 1)
    assert "'yesterday'" in issue.reason
    (row,) = rows_of(frame).values()
    assert row["ts"] is None


# -- through the whole ingest --------------------------------------------------------------


def test_ingest_picks_the_diagon_readers(ingest_case: Any) -> None:
    paths = [DIAGON / name for name in LINE_NAMES + DOC_NAMES]
    case = ingest_case(paths)
    files = read_table(case, "files")
    by_name = {
        Path(p).name: r for p, r in zip(files["path"], files.iter_rows(named=True), strict=True)
    }
    for name in LINE_NAMES:
        assert by_name[name]["reader"] == "diagon"
        assert by_name[name]["rows"] == len(lines_of(name))
    for name in DOC_NAMES:
        assert by_name[name]["reader"] == "diagon_api"
        assert by_name[name]["rows"] == by_name[name]["records"] == independent_count(name)
    assert sum(by_name[name]["quarantined"] for name in by_name) == 0
    stored = read_table(case, "rows")
    assert set(stored["source"].cast(pl.String).unique()) == {"diagon"}
    assert set(stored["reader"].cast(pl.String).unique()) == {
        "diagon.absl",
        "diagon.python",
        "diagon.zap",
        "diagon_api.ml_run",
        "diagon_api.monitored_event",
        "diagon_api.analyzer_report",
    }


# -- shared code: what these samples showed (see the report) ------------------------------


def test_go_stack_trace_folds_into_the_zap_error() -> None:
    data = (
        b'2026-11-29T18:35:55.130Z\tERROR\tReconciler error\t{"controller": "mldiagnosticsconnection", "error": "boom"}\n'
        b"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).reconcileHandler\n"
        b"\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.19.1/pkg/internal/controller/controller.go:316\n"
        b"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem\n"
        b"\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.19.1/pkg/internal/controller/controller.go:263\n"
        b"2026-11-29T18:41:10Z\tINFO\tStopping and waiting for non leader election runnables\n"
    )
    frame, tally, _ = run_reader(DAEMON, data, "diagon/operator_console.log")
    assert sorted(rows_of(frame)) == [1, 6]
    assert (tally.rows, tally.folded) == (2, 4)


def test_compact_json_members_are_spliced() -> None:
    frame = pl.DataFrame({"a": ["x"], "m": ['{"k":1,"j":"y"}']})
    got = frame.select(
        compact_json([("a", pl.col("a"), "text"), ("attrs", pl.col("m"), "members")])
    ).item()
    assert json.loads(got) == {"a": "x", "k": 1, "j": "y"}


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
