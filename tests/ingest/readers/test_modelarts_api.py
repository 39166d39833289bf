"""The ``modelarts_api`` reader on the training-job API responses of a ModelArts dump
(tests/samples/modelarts).

Expected values come from ../shared/reference/formats.md §3 (ShowTrainingJobDetails §3.1,
ListTrainingJobEvents §3.2, ListTrainingJobStages §3.3, time zones §3.6) and from the
sample files themselves; never from the reader's code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.registry import READERS, choose_reader
from tests.helpers import ns
from tests.ingest.readers.modelarts_helpers import (
    API_READER,
    DETAILS,
    DOCUMENTS,
    EVENTS,
    JOB,
    LOG_READER,
    SAMPLES,
    STAGES,
    canonical,
    other_samples,
    read_sample,
    run,
)

# -- helpers ---------------------------------------------------------------------------------


def api_records(document: Any) -> int:
    """Records of an API document counted without culprit's code (see the reader's doc)."""
    if "metadata" in document or "status" in document:
        status = document.get("status") or {}
        running = status.get("running_records") or []
        recovers = sum(len(r.get("recover_records") or []) for r in running)
        return 1 + len(status.get("task_statuses") or []) + len(running) + recovers
    if "events" in document:
        return len(document["events"])
    return sum(len(r.get("stages") or []) for r in document["running_records"])


def object_at(data: bytes, offset: int) -> dict[str, Any]:
    """The JSON object whose ``{`` is at byte ``offset`` (decoded independently)."""
    assert data[offset : offset + 1] == b"{"
    value, _ = json.JSONDecoder().raw_decode(data[offset:].decode())
    assert isinstance(value, dict)
    return value


# -- file names, sniffing and reader choice ------------------------------------------------


@pytest.mark.parametrize("name", DOCUMENTS)
def test_sniff_claims_api_documents(name: str) -> None:
    head = (SAMPLES / name).read_bytes()[: 64 << 10]
    assert API_READER.sniff(head, f"dump/{name}") >= 0.9
    assert LOG_READER.sniff(head, f"dump/{name}") == 0.0
    choice = choose_reader(head, f"dump/{name}")
    assert choice is not None and choice.recognized
    assert choice.reader.name == "modelarts_api"


def test_api_sniff_rejects_other_json() -> None:
    others = (
        # a Cloud Logging entry (mentions "status" and "metadata" in its payload)
        b'{"insertId":"a","logName":"projects/p/logs/events","resource":{"type":"k8s_pod"},'
        b'"jsonPayload":{"metadata":{},"status":{"running_records":[]}}}',
        # the other ModelArts events API: k8s-style items (§3.2 "don't confuse the two")
        b'{"apiVersion":"v1","kind":"EventList","metadata":{},"items":[{"type":"Warning",'
        b'"firstTimestamp":"2026-11-29T10:00:00Z","reason":"Failed","message":"x"}]}',
        # the log preview API
        b'{"content": "[ModelArts Service Log] ...", "current_size": 126548, "full_size": 9}',
        b'[{"events": []}]',
        b"",
    )
    for head in others:
        assert API_READER.sniff(head, "x.json") == 0.0, head


@pytest.mark.parametrize("path", other_samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_samples_are_not_claimed(path: Path) -> None:
    """Plain JAX/absl logs, Cloud Logging exports (and every other family) stay theirs."""
    head = path.read_bytes()[: 64 << 10]
    relative = f"{path.parent.name}/{path.name}"
    assert API_READER.sniff(head, relative) == 0.0
    choice = choose_reader(head, relative)
    assert choice is None or choice.reader.name != "modelarts_api"


def test_reader_is_registered_before_the_text_fallback() -> None:
    names = [reader.name for reader in READERS]
    assert names.index("modelarts_api") < names.index("text")


# -- API documents: nothing lost, provenance ----------------------------------------------------


@pytest.mark.parametrize(("name", "expected"), [(DETAILS, 9), (EVENTS, 6), (STAGES, 8)])
def test_every_api_record_is_accounted_for(name: str, expected: int) -> None:
    frame, counts, issues = read_sample(name)
    assert issues == []
    assert counts.records == api_records(json.loads((SAMPLES / name).read_bytes())) == expected
    assert counts.records == counts.rows + counts.dropped == frame.height
    assert counts.folded == counts.blank == counts.dropped == 0


@pytest.mark.parametrize("name", DOCUMENTS)
def test_api_rows_lead_back_to_their_object(name: str) -> None:
    """The bytes at each row's offset start the JSON object whose fields the row carries."""
    data = (SAMPLES / name).read_bytes()
    frame = read_sample(name)[0]
    assert frame["offset"].is_sorted()
    for row in canonical(frame):
        offset, line = row["offset"], row["line"]
        assert data[:offset].count(b"\n") + 1 == line
        obj = object_at(data, offset)
        kind = row["reader"].removeprefix("modelarts_api.")
        if kind == "job":
            assert obj["metadata"]["id"] == row["workload"]
            assert obj["status"]["phase"] in row["message"]
        elif kind == "task_status":
            assert obj["task"] == row["extra"]["task"] == f"worker-{row['worker']}"
            assert obj["exit_code"] == row["extra"]["exit_code"]
            assert not obj["message"] or row["message"].endswith(": " + obj["message"])
        elif kind == "running_record":
            assert (obj["start_at"], obj["end_at"]) == (
                row["extra"]["start_at"],
                row["extra"]["end_at"],
            )
            assert obj["end_reason"] in row["message"]
        elif kind == "recover_record":
            assert obj["fault_scenario"] == row["extra"]["fault_scenario"]
            assert obj["reason"] in row["message"]
        elif kind == "event":
            assert obj["message"] == row["message"]
            assert obj["time"] == row["extra"]["time"]
        else:
            assert kind == "stage"
            assert (obj["name"], obj["stage_order"]) == (
                row["extra"]["name"],
                row["extra"]["stage_order"],
            )
            assert obj["en_message"] in row["message"]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_api_rows_do_not_depend_on_chunk_size(name: str) -> None:
    assert read_sample(name, 64)[0].equals(read_sample(name)[0])


def test_rows_conform_to_the_canonical_schema() -> None:
    for name in DOCUMENTS:
        for row in canonical(read_sample(name)[0]):
            assert row["source"] == "modelarts"
            assert row["severity"] is not None
            assert (row["ts"] is None) == (row["ts_quality"] == "missing")
            assert not row["message"].endswith("\n")


# -- ShowTrainingJobDetails (§3.1) --------------------------------------------------------------


def api_rows(name: str) -> list[dict[str, Any]]:
    return canonical(read_sample(name)[0])


def test_job_details_rows() -> None:
    got = api_rows(DETAILS)
    kinds = [row["reader"] for row in got]
    assert kinds == [
        "modelarts_api.job",
        *["modelarts_api.task_status"] * 4,
        "modelarts_api.running_record",
        "modelarts_api.recover_record",
        "modelarts_api.running_record",
        "modelarts_api.recover_record",
    ]
    end = ns("2026-11-29T18:37:02+08:00")  # start_time (ms) + duration (ms)
    job = got[0]
    assert (job["line"], job["offset"]) == (1, 0)
    assert job["message"] == (
        f"Training job llm-pretrain-910b-4n ({JOB}) phase Failed (secondary phase Failed) "
        "after 5022 s"
    )
    assert (job["ts_ns"], job["ts_quality"], job["severity"]) == (end, "exact", "ERROR")
    assert (job["workload"], job["worker"], job["host"], job["attempt"]) == (JOB, None, None, None)
    assert job["extra"]["status"]["secondary_phase"] == "Failed"
    assert job["extra"]["metadata"]["create_time"] == 1795943545678
    assert "task_statuses" not in job["extra"]["status"]
    tasks = {row["worker"]: row for row in got[1:5]}
    assert tasks[0]["message"] == (
        "Task worker-0 exited with code 1: Training process exited abnormally: EI0002 The wait "
        "execution of the Notify register times out (remote rank [13])."
    )
    assert tasks[1]["message"] == (
        "Task worker-1 exited with code 1: NPU chip fault on device 5 (ERR00100 PTA call acl api "
        "failed); the node was isolated."
    )
    assert tasks[3]["message"] == "Task worker-3 exited with code 0"
    assert [tasks[w]["severity"] for w in range(4)] == ["ERROR", "ERROR", "ERROR", "INFO"]
    assert [tasks[w]["extra"]["exit_code"] for w in range(4)] == [1, 1, 137, 0]
    assert (tasks[0]["extra"]["code"], tasks[1]["extra"]["code"]) == ("EI0002", "ERR00100")
    for row in tasks.values():
        assert (row["ts_ns"], row["ts_quality"]) == (end, "inherited")
        assert (row["workload"], row["host"], row["attempt"]) == (JOB, None, None)


def test_job_details_running_and_recover_records() -> None:
    got = api_rows(DETAILS)
    first, first_recover, second, second_recover = got[5:9]
    assert first["message"] == (
        "Running record 1 of 2 (init_or_rescheduled); ended: Error found in the log of worker-0: "
        "EI0002 notify wait timeout; related task worker-0; recovery pod_reschedule"
    )
    # running records are in seconds; the row is stamped at the end of the attempt
    assert (first["ts_ns"], first["ts_quality"]) == (ns("2026-11-29T18:35:40+08:00"), "exact")
    assert (first["severity"], first["worker"], first["attempt"]) == ("INFO", 0, 0)
    assert first["extra"]["xpu_start_at"] == 1795943655
    assert first_recover["message"] == (
        "Recovery pod_reschedule after error_in_log on worker-0: success; reason: EI0002 notify "
        "wait timeout in worker-0 log, remote rank [13] heartbeat lost"
    )
    assert (first_recover["ts_ns"], first_recover["severity"]) == (
        ns("2026-11-29T18:35:40+08:00"),
        "INFO",
    )
    assert (first_recover["worker"], first_recover["attempt"]) == (0, 0)
    assert (second["ts_ns"], second["worker"], second["attempt"]) == (
        ns("2026-11-29T18:37:02+08:00"),
        1,
        1,
    )
    assert second_recover["message"] == (
        "Recovery job_reschedule_with_taint after chip_fault on worker-1: failed; reason: Device "
        "5 of node 172.16.24.52 reported an uncorrectable error"
    )
    # recover_start_at is "also the fault time"
    assert (second_recover["ts_ns"], second_recover["severity"]) == (
        ns("2026-11-29T18:37:00+08:00"),
        "ERROR",
    )
    assert (second_recover["extra"]["fault_scenario"], second_recover["extra"]["recover"]) == (
        "chip_fault",
        "job_reschedule_with_taint",
    )
    assert (second_recover["worker"], second_recover["attempt"]) == (1, 1)


def test_job_with_missing_fields() -> None:
    """Bad input: fields missing everywhere. Rows still come out, with nulls."""
    no_status = json.dumps({"kind": "job", "metadata": {"id": JOB, "create_time": 1795943545678}})
    frame, counts, issues = run(API_READER, no_status.encode(), "d/job.json")
    (job,) = canonical(frame)
    assert job["message"] == f"Training job {JOB} has no status in this document"
    assert (job["severity"], job["ts_ns"], job["workload"]) == (
        "INFO",
        ns("2026-11-29T17:12:25.678+08:00"),
        JOB,
    )
    assert (counts.records, counts.rows, issues) == (1, 1, [])

    partial = {
        "metadata": {},
        "status": {
            "phase": "Abnormal",
            "task_statuses": [{"task": "worker-5"}, {"exit_code": 2}, "worker-6", {}],
            "running_records": [
                {"start_at": 1795943600, "recover_records": [{}, {"recover_result": "failed"}]},
                {},
            ],
        },
    }
    data = json.dumps(partial, indent=1).encode()
    frame, counts, issues = run(API_READER, data, f"d/{JOB}/details.json")
    got = canonical(frame)
    assert counts.records == 9 and counts.rows == 8 and counts.dropped == 1
    assert counts.records == counts.rows + counts.dropped
    (issue,) = issues
    assert issue.kind == "dropped" and "task_statuses element is not a JSON object" in issue.reason
    assert data[issue.offset : issue.offset + 1] == b"["  # the array holding the element
    job, five, anonymous, empty, running, recover_a, recover_b, bare_running = got
    assert job["message"] == f"Training job {JOB} phase Abnormal"
    assert (job["severity"], job["ts"], job["workload"]) == ("ERROR", None, JOB)
    assert (five["message"], five["severity"], five["worker"]) == (
        "Task worker-5 status",
        "INFO",
        5,
    )
    assert (anonymous["message"], anonymous["severity"]) == ("A task exited with code 2", "ERROR")
    assert (empty["message"], empty["worker"], empty["ts"]) == ("A task status", None, None)
    assert running["message"] == "Running record 1 of 2; has no end"
    assert (running["ts_ns"], running["attempt"]) == (ns("2026-11-29T17:13:20+08:00"), 0)
    assert recover_a["message"] == "Recovery: no result"
    assert (recover_a["severity"], recover_a["ts"], recover_a["attempt"]) == ("INFO", None, 0)
    assert (recover_b["severity"], recover_b["message"]) == ("ERROR", "Recovery: failed")
    assert bare_running["message"] == "Running record 2 of 2; has no end"
    assert (bare_running["ts"], bare_running["attempt"]) == (None, 1)
    for row in got:
        assert row["workload"] == JOB  # from the path


def test_truncated_job_json_is_one_quarantine_entry() -> None:
    """Bad input: a download cut mid-document. One dropped record citing where parsing
    stopped; no rows and no exception."""
    data = (SAMPLES / DETAILS).read_bytes()
    cut = data[: data.index(b'"end_at"')]  # inside the first running record
    frame, counts, issues = run(API_READER, cut, f"d/{DETAILS}")
    assert frame.height == 0
    assert (counts.records, counts.rows, counts.dropped) == (1, 0, 1)
    (issue,) = issues
    assert issue.kind == "dropped"
    assert issue.reason.startswith("not valid JSON")
    assert issue.line == cut.count(b"\n") + 1  # the last (cut) line
    assert issue.offset == len(cut)
    assert issue.raw == cut.rsplit(b"\n", 1)[1]


def test_json_that_is_not_an_api_response_is_dropped() -> None:
    for data in (b'{"content": "tail of a log", "current_size": 12}', b"[1, 2]"):
        frame, counts, issues = run(API_READER, data, "d/x.json")
        assert frame.height == 0
        assert (counts.records, counts.dropped) == (1, 1)
        assert len(issues) == 1 and issues[0].kind == "dropped"


# -- ListTrainingJobEvents (§3.2) ---------------------------------------------------------------


def test_events_rows() -> None:
    got = api_rows(EVENTS)
    document = json.loads((SAMPLES / EVENTS).read_bytes())
    assert [row["message"] for row in got] == [e["message"] for e in document["events"]]
    assert [row["severity"] for row in got] == ["ERROR", "ERROR", "INFO", "WARNING", "INFO", "INFO"]
    assert [row["logger"] for row in got] == ["Job", "Task", "Job", "Job", "Job", "K8S"]
    assert [row["ts_ns"] for row in got] == [ns(e["time"]) for e in document["events"]]
    assert {row["ts_quality"] for row in got} == {"exact"}
    assert [row["worker"] for row in got] == [1, 1, None, 0, None, None]
    assert {row["workload"] for row in got} == {JOB}  # from the file name
    assert got[3]["extra"]["code"] == "EI0002"
    assert "message" not in got[0]["extra"]


def test_event_times_in_every_shape() -> None:
    """The events ``time`` format is not verified (§3.2): ISO-8601 with or without an
    offset, epoch milliseconds as a number or a string; anything else leaves ``ts`` null."""
    events = {
        "events": [
            {
                "time": "2026-11-29T18:37:02+08:00",
                "level": "Error",
                "source": "Job",
                "message": "a",
            },
            {"time": "2026-11-29T10:37:02.5Z", "level": "Info", "message": "b"},
            {"time": "2026-11-29 18:37:02", "level": "Warning", "message": "c"},
            {"time": 1795948622000, "message": "d"},
            {"time": "1795948622123", "message": "e"},
            {"time": "yesterday", "level": "Fatal", "message": "f"},
            {"level": "Info", "source": "K8S"},
        ]
    }
    data = json.dumps(events).encode()
    frame, counts, issues = run(API_READER, data, "d/events.json", ReadOptions(tz="+08:00"))
    got = canonical(frame)
    assert (counts.records, counts.rows, issues) == (7, 7, [])
    stamps = [(row["ts_ns"], row["ts_quality"]) for row in got]
    assert stamps == [
        (ns("2026-11-29T10:37:02Z"), "exact"),
        (ns("2026-11-29T10:37:02.5Z"), "exact"),
        (ns("2026-11-29T18:37:02+08:00"), "inferred_tz"),
        (ns("2026-11-29T10:37:02Z"), "exact"),
        (ns("2026-11-29T10:37:02.123Z"), "exact"),
        (None, "missing"),
        (None, "missing"),
    ]
    assert [row["severity"] for row in got] == [
        "ERROR",
        "INFO",
        "WARNING",
        "INFO",
        "INFO",
        "CRITICAL",
        "INFO",
    ]
    assert got[6]["message"] == "K8S event without a message"
    assert got[6]["workload"] is None


# -- ListTrainingJobStages (§3.3) ---------------------------------------------------------------


def test_stages_rows() -> None:
    got = api_rows(STAGES)
    assert [row["attempt"] for row in got] == [1, 1, 1, 1, 0, 0, 0, 0]  # by record_order
    assert [row["extra"]["record_order"] for row in got] == [2, 2, 2, 2, 1, 1, 1, 1]
    assert [row["extra"]["name"] for row in got] == [
        "scheduling",
        "preparing",
        "running",
        "end",
    ] * 2
    assert got[3]["message"] == (
        "Stage end (4/4) of running record 2: The job failed: chip fault on worker-1"
    )
    assert got[4]["message"] == "Stage scheduling (1/4) of running record 1: Scheduling the job"
    assert got[4]["extra"]["zh_message"] == "作业调度中"
    assert got[5]["extra"]["sub_stages"] == ["image_pull", "code_download"]
    assert "sub_stages" not in got[4]["extra"]
    assert (got[0]["ts_ns"], got[0]["ts_quality"]) == (ns("2026-11-29T18:36:10+08:00"), "exact")
    assert got[7]["ts_ns"] == ns("2026-11-29T18:35:40+08:00")
    assert {(row["workload"], row["severity"], row["worker"]) for row in got} == {
        (JOB, "INFO", None)
    }
