"""The ``diagon`` reader on ML Diagnostics daemon and operator logs (tests/samples/diagon).

Expected values come from ../shared/reference/formats.md §4 (daemon glog lines, connection
operator, SDK messages, ``gcloud alpha mldiagnostics`` JSON and the ``0001-01-01T00:00:00Z``
"unset" time), §5.1 (absl/glog, kubectl wrappers), failure-modes.md §1.1 (MXLA hang analyzer
codes, culprits as numeric instance IDs) and from the sample files themselves, never from the
readers' code.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from analyzer.ingest.readers.diagon_daemon import pod_from_path
from analyzer.ingest.readers.text import TextReader
from analyzer.ingest.registry import choose_reader
from tests.helpers import ns
from tests.ingest.readers.diagon_helpers import (
    API,
    DAEMON,
    DIAGON,
    LINE_NAMES,
    OPERATOR_JSON,
    lines_of,
    other_samples,
    read,
    read_sample,
    rows,
    rows_of,
    run_reader,
)

WRAPPER = re.compile(r"^(?:\[pod/[^\]]+\] )?(?:\S+Z )?")


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


@pytest.mark.parametrize("path", other_samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_families_are_left_alone(path: Path) -> None:
    """Text, Cloud Logging and kubelet samples are not Diagon dumps, even the JAX worker log
    that uses the ML Diagnostics SDK (text/python_logging.log: SDK lines are workload stdout)."""
    head = path.read_bytes()[: 64 << 10]
    relative = f"{path.parent.name}/{path.name}"
    assert DAEMON.sniff(head, relative) == 0.0
    choice = choose_reader(head, relative)
    assert choice is None or choice.reader.name != "diagon"


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


# -- nothing lost, provenance, chunking ----------------------------------------------------


@pytest.mark.parametrize("name", LINE_NAMES)
def test_every_line_is_accounted_for(name: str) -> None:
    frame, tally, issues = read_sample(name)
    data = (DIAGON / name).read_bytes()
    assert issues == []
    assert tally.records == data.count(b"\n") == len(lines_of(name))
    assert tally.records == tally.rows + tally.folded + tally.blank + tally.dropped
    assert tally.rows == frame.height == len(lines_of(name))  # one record per line here
    assert tally.dropped == tally.duplicates == tally.repaired == 0


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


@pytest.mark.parametrize("chunk_bytes", [64, 257])
@pytest.mark.parametrize("name", LINE_NAMES)
def test_chunk_size_does_not_change_rows(name: str, chunk_bytes: int) -> None:
    small, tally, issues = read_sample(name, chunk_bytes)
    assert issues == []
    assert small.equals(read(name))
    assert tally == read_sample(name)[1]


@pytest.mark.parametrize("name", LINE_NAMES)
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
