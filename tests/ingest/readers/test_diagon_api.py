"""The ``diagon_api`` reader on ``gcloud alpha mldiagnostics`` JSON (tests/samples/diagon).

Expected values come from ../shared/reference/formats.md §4 (daemon glog lines, connection
operator, SDK messages, ``gcloud alpha mldiagnostics`` JSON and the ``0001-01-01T00:00:00Z``
"unset" time), §5.1 (absl/glog, kubectl wrappers), failure-modes.md §1.1 (MXLA hang analyzer
codes, culprits as numeric instance IDs) and from the sample files themselves, never from the
readers' code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.ingest.json.document import DocumentError, load
from analyzer.ingest.readers.cloud_logging import CloudLoggingReader
from analyzer.ingest.registry import choose_reader
from tests.helpers import ns, read_table
from tests.ingest.readers.diagon_helpers import (
    API,
    DAEMON,
    DIAGON,
    DOC_NAMES,
    LINE_NAMES,
    OPERATOR_JSON,
    doc_rows,
    independent_count,
    lines_of,
    other_samples,
    read,
    read_sample,
    row_list,
    rows,
    rows_of,
    run_reader,
)

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


# -- sniffing and reader choice ------------------------------------------------------------


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


@pytest.mark.parametrize("path", other_samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_families_are_left_alone(path: Path) -> None:
    """Text, Cloud Logging and kubelet samples are not Diagon dumps, even the JAX worker log
    that uses the ML Diagnostics SDK (text/python_logging.log: SDK lines are workload stdout)."""
    head = path.read_bytes()[: 64 << 10]
    relative = f"{path.parent.name}/{path.name}"
    assert API.sniff(head, relative) == 0.0
    choice = choose_reader(head, relative)
    assert choice is None or choice.reader.name != "diagon_api"


# -- nothing lost, provenance, chunking ----------------------------------------------------


@pytest.mark.parametrize("name", DOC_NAMES)
def test_every_object_is_accounted_for(name: str) -> None:
    frame, tally, issues = read_sample(name)
    assert issues == []
    assert tally.records == independent_count(name)
    assert tally.records == tally.rows + tally.folded + tally.blank + tally.dropped
    assert tally.rows == frame.height == independent_count(name)
    assert tally.dropped == tally.folded == tally.blank == tally.repaired == 0


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


@pytest.mark.parametrize("name", DOC_NAMES)
def test_rows_conform_to_the_canonical_schema(name: str) -> None:
    got = rows(name)
    assert {r["source"] for r in got.values()} == {"diagon"}
    for row in got.values():
        assert row["severity"] is not None
        assert row["ts"] is not None and row["ts_quality"] != "missing"
        assert row["host"] is None, "nothing in these samples names a node"
        assert not row["message"].endswith("\n")


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
