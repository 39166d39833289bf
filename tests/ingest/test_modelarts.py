"""The ``modelarts`` readers on realistic ModelArts dumps (tests/samples/modelarts).

Expected values come from ../shared/reference/formats.md §3 (ShowTrainingJobDetails §3.1,
ListTrainingJobEvents §3.2, ListTrainingJobStages §3.3, worker log names and platform lines
§3.4, CANN / MindSpore / torch_npu line shapes §3.5, time zones §3.6, field derivation §3.7)
and §5.3 (multi-line records), and from the sample files themselves; never from the readers'
code. The samples tell one story: rank 13 (worker-1, device 5, node 172.16.24.52) hits an
AI Core exception at 18:05 local time; 30 minutes later the other ranks time out waiting for
it (EI0002 naming ``remote rank [13]``), the platform reschedules, and the job fails on a chip
fault of worker-1. The containers run at UTC+8, which the logrus lines say.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.ingest import grammars
from analyzer.ingest.base import FileCounts, Issue, ReadContext, ReadOptions
from analyzer.ingest.detect import READERS, choose_reader
from analyzer.ingest.modelarts import (
    ModelArtsApiReader,
    ModelArtsLogReader,
    learn_offset,
    parse_worker_log_name,
)
from analyzer.ingest.text import TextReader
from analyzer.schema import conform
from analyzer.streams import Content, ExpansionBudget
from tests.helpers import ns

SAMPLES = Path(__file__).parent.parent / "samples" / "modelarts"
JOB = "95f661bd-1527-41b8-971c-eca55e513254"
W0 = f"modelarts-job-{JOB}-worker-0.log"
W1 = f"modelarts-job-{JOB}-ma-training-worker-1-172.16.24.52-01909682.log"
LOGS = (W0, W1)
DETAILS = f"job-{JOB}-details.json"
EVENTS = f"job-{JOB}-events.json"
STAGES = f"job-{JOB}-stages.json"
DOCUMENTS = (DETAILS, EVENTS, STAGES)
LOG_READER = ModelArtsLogReader()
API_READER = ModelArtsApiReader()
RANK_WRAPPER = re.compile(r"^\[rank\d+\]: ?")
CODE_PREFIX = re.compile(r"^E[0-9A-Z]\d{4}: ")


# -- helpers ---------------------------------------------------------------------------------


def cst(local: str) -> int:
    """A container-local time of the samples (UTC+8) in nanoseconds."""
    return ns(local + "+08:00")


def run(
    reader: ModelArtsLogReader | ModelArtsApiReader | TextReader,
    data: bytes,
    path: str,
    options: ReadOptions | None = None,
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    ctx = ReadContext(path, options or ReadOptions(), mtime=ns("2026-11-30T09:00:00Z") / 1e9)

    class Raw:
        def __init__(self) -> None:
            self.data = data

        def read(self, size: int = -1, /) -> bytes:
            size = len(self.data) if size < 0 else size
            out, self.data = self.data[:size], self.data[size:]
            return out

    frames = list(reader.read(Content(Raw(), ExpansionBudget(), path), ctx))
    frame = pl.concat(frames, how="vertical") if frames else pl.DataFrame()
    return frame, ctx.counts, ctx.issues


@functools.cache
def _read(
    name: str, chunk_bytes: int | None = None, tz: str | None = None
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    options = ReadOptions(tz=tz) if chunk_bytes is None else ReadOptions(chunk_bytes=chunk_bytes)
    reader = API_READER if name.endswith(".json") else LOG_READER
    return run(reader, (SAMPLES / name).read_bytes(), f"dump/{name}", options)


def canonical(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows as the case stores them (schema applied), ``extra`` parsed, ``ts`` as ns."""
    numbered = frame.with_columns(
        row_id=pl.int_range(pl.len(), dtype=pl.Int64), file_id=pl.lit(0, dtype=pl.Int32)
    )
    table = pl.from_arrow(conform(numbered))
    assert isinstance(table, pl.DataFrame)
    out = []
    for row in table.with_columns(ts_ns=pl.col("ts").dt.epoch("ns")).iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        out.append(row)
    return out


def rows(name: str) -> dict[int, dict[str, Any]]:
    """Canonical rows of a sample keyed by line."""
    out: dict[int, dict[str, Any]] = {}
    for row in canonical(_read(name)[0]):
        assert row["line"] not in out
        out[row["line"]] = row
    return out


def lines_of(name: str) -> list[str]:
    return (SAMPLES / name).read_text().split("\n")[:-1]


def unwrapped(name: str, first: int, last: int) -> str:
    """File lines ``first..last`` (1-based) without their torchrun ``[rankN]:`` prefix."""
    return "\n".join(RANK_WRAPPER.sub("", line) for line in lines_of(name)[first - 1 : last])


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


def test_worker_log_names() -> None:
    """§3.4: the documented old name and the newer OBS name with component, IP and suffix."""
    old = parse_worker_log_name(f"log/modelarts-job-{JOB}-worker-0.log")
    assert old is not None
    assert (old.job, old.task, old.worker, old.component, old.ip) == (
        JOB,
        "worker-0",
        0,
        None,
        None,
    )
    new = parse_worker_log_name(
        "modelarts-job-0f2ccdbb-4f34-4d53-afb9-d526f3be8c68-ma-platform-init-worker-0-"
        "172.16.24.51-01909681.log"
    )
    assert new is not None
    assert (new.job, new.component, new.task, new.worker, new.ip, new.suffix) == (
        "0f2ccdbb-4f34-4d53-afb9-d526f3be8c68",
        "ma-platform-init",
        "worker-0",
        0,
        "172.16.24.51",
        "01909681",
    )
    gz = parse_worker_log_name(f"b/modelarts-job-{JOB}-worker-12.log.gz")
    assert gz is not None and gz.worker == 12
    for other in ("worker-0.log", f"modelarts-job-{JOB}.log", "train.log", f"{JOB}-worker-0.log"):
        assert parse_worker_log_name(other) is None


@pytest.mark.parametrize("name", LOGS)
def test_sniff_claims_worker_logs(name: str) -> None:
    head = (SAMPLES / name).read_bytes()[: 64 << 10]
    assert LOG_READER.sniff(head, f"dump/{name}") >= 0.8
    assert API_READER.sniff(head, f"dump/{name}") == 0.0
    choice = choose_reader(head, f"dump/{name}")
    assert choice is not None and choice.recognized
    assert choice.reader.name == "modelarts"


def test_sniff_from_name_or_from_ascend_lines() -> None:
    plain = b"step 1 loss 3.2\nstep 2 loss 3.1\n"
    assert LOG_READER.sniff(plain, f"x/modelarts-job-{JOB}-worker-3.log") >= 0.8
    assert LOG_READER.sniff(plain, "x/train.log") == 0.0
    heads = (
        b"[Modelarts Service Log]Training end with return code: 137\n",
        b'time="2021-07-26T19:24:11+08:00" level=info msg="start" file="upload.go:46" '
        b"Command=obs/upload Component=ma-training-toolkit Platform=ModelArts-Service\n",
        b"[ERROR] RUNTIME(150840,python):2021-09-14-09:26:01.014.355 [engine.cc:914]150900 "
        b"ReportExceptProc:Task exception! device_id=0, stream_id=117, task_id=23\n",
        b"[rank0]: [ERROR] 2025-03-26-11:49:12 (PID:3674, Device:0, RankID:0) ERR02200 DIST "
        b"call hccl api failed.\n",
    )
    for head in heads:
        assert LOG_READER.sniff(head, "plog/plog-150840_20210914092601014.log") >= 0.8, head
        choice = choose_reader(head, "train.log")
        assert choice is not None and choice.reader.name == "modelarts", head
    assert LOG_READER.sniff(b"\x00\x01binary", f"modelarts-job-{JOB}-worker-0.log") == 0.0


def other_samples() -> list[Path]:
    root = SAMPLES.parent
    return sorted(p for p in root.rglob("*") if p.is_file() and p.parent.name != "modelarts")


@pytest.mark.parametrize("path", other_samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_samples_are_not_claimed(path: Path) -> None:
    """Plain JAX/absl logs, Cloud Logging exports (and every other family) stay theirs."""
    head = path.read_bytes()[: 64 << 10]
    relative = f"{path.parent.name}/{path.name}"
    assert LOG_READER.sniff(head, relative) == 0.0
    assert API_READER.sniff(head, relative) == 0.0
    choice = choose_reader(head, relative)
    assert choice is None or choice.reader.name not in ("modelarts", "modelarts_api")


def test_jax_worker_log_is_not_claimed() -> None:
    jax = (SAMPLES.parent / "text" / "jax_worker.log").read_bytes()
    assert LOG_READER.sniff(jax, "logs/jax_worker.log") == 0.0
    choice = choose_reader(jax, "logs/jax_worker.log")
    assert choice is not None and choice.reader.name == "text"


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


def test_readers_are_registered_before_the_text_fallback() -> None:
    names = [reader.name for reader in READERS]
    assert names.index("modelarts") < names.index("text")
    assert names.index("modelarts_api") < names.index("text")


# -- worker logs: nothing lost, provenance, chunking ------------------------------------------


@pytest.mark.parametrize(
    ("name", "tally"), [(W0, (38, 23, 14, 1)), (W1, (26, 17, 9, 0))], ids=("worker-0", "worker-1")
)
def test_every_line_is_accounted_for(name: str, tally: tuple[int, int, int, int]) -> None:
    frame, counts, issues = _read(name)
    data = (SAMPLES / name).read_bytes()
    assert issues == []
    assert counts.records == data.count(b"\n") == len(lines_of(name))
    assert counts.records == counts.rows + counts.folded + counts.blank + counts.dropped
    assert (counts.records, counts.rows, counts.folded, counts.blank) == tally
    assert counts.rows == frame.height
    assert counts.dropped == counts.duplicates == counts.repaired == 0


@pytest.mark.parametrize("name", LOGS)
def test_log_rows_lead_back_to_their_line(name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    lines = lines_of(name)
    frame = _read(name)[0]
    assert frame["line"].is_sorted() and frame["offset"].is_sorted()
    for row in frame.iter_rows(named=True):
        offset, line = row["offset"], row["line"]
        assert data[:offset].count(b"\n") + 1 == line
        assert offset == 0 or data[offset - 1 : offset] == b"\n"
        first = row["message"].split("\n", 1)[0]
        # CANN error-code rows keep their code in front of the text after [PID: n] <stamp>.
        assert CODE_PREFIX.sub("", first) in lines[line - 1], (line, first)


@pytest.mark.parametrize("chunk_bytes", [64, 257])
@pytest.mark.parametrize("name", LOGS)
def test_chunk_size_does_not_change_log_rows(name: str, chunk_bytes: int) -> None:
    small, counts, issues = _read(name, chunk_bytes)
    assert issues == []
    assert small.equals(_read(name)[0])
    assert counts == _read(name)[1]


def test_rows_conform_to_the_canonical_schema() -> None:
    for name in (*LOGS, *DOCUMENTS):
        for row in canonical(_read(name)[0]):
            assert row["source"] == "modelarts"
            assert row["severity"] is not None
            assert (row["ts"] is None) == (row["ts_quality"] == "missing")
            assert not row["message"].endswith("\n")


# -- worker-0: the victim's log (old name, no IP) -----------------------------------------------


def test_worker0_identity_from_the_file_name() -> None:
    for row in rows(W0).values():
        assert (row["workload"], row["worker"], row["host"]) == (JOB, 0, "worker-0")
        assert row["extra"]["job_id"] == JOB
        assert row["extra"]["task"] == "worker-0"
        assert "component" not in row["extra"]


def test_worker0_rows() -> None:
    got = rows(W0)
    assert sorted(got) == [*range(1, 14), 21, 22, *range(31, 39)]
    after_launch = cst("2026-11-29T17:13:25.401")
    destroy = cst("2026-11-29T18:35:31.705")
    finalizing = cst("2026-11-29T18:35:36.207")
    expected: dict[int, tuple[str, int | None, str, str, str | None]] = {
        # line: (reader, ts, ts_quality, severity, logger)
        1: ("modelarts.service", None, "missing", "DEFAULT", None),
        2: ("modelarts.service", None, "missing", "DEFAULT", None),
        3: ("modelarts.logrus", ns("2026-11-29T17:13:22+08:00"), "exact", "INFO", "upload.go:46"),
        4: ("modelarts.service", after_launch, "inferred_tz", "INFO", None),
        5: ("modelarts.plain", after_launch, "inherited", "DEFAULT", None),
        6: ("modelarts.plain", after_launch, "inherited", "DEFAULT", None),
        7: (
            "modelarts.cann",
            cst("2026-11-29T17:14:10.719213"),
            "inferred_tz",
            "INFO",
            "op_base.cc:1292",
        ),
        8: ("modelarts.python", cst("2026-11-29T17:20:05.117"), "inferred_tz", "INFO", "train"),
        9: ("modelarts.python", cst("2026-11-29T18:04:58.502"), "inferred_tz", "INFO", "train"),
        10: (
            "modelarts.cann",
            cst("2026-11-29T18:35:20.099235"),
            "inferred_tz",
            "ERROR",
            "task_exception_handler.cc:908",
        ),
        11: (
            "modelarts.cann",
            cst("2026-11-29T18:35:20.099247"),
            "inferred_tz",
            "ERROR",
            "task_exception_handler.cc:771",
        ),
        12: (
            "modelarts.cann",
            cst("2026-11-29T18:35:20.099283"),
            "inferred_tz",
            "ERROR",
            "task_exception_handler.cc:704",
        ),
        13: ("modelarts.plain", cst("2026-11-29T18:35:20.099283"), "inherited", "ERROR", None),
        21: ("modelarts.torch_npu", cst("2026-11-29T18:35:20"), "inferred_tz", "ERROR", None),
        22: (
            "modelarts.cann_code",
            cst("2026-11-29T18:35:20.114205"),
            "inferred_tz",
            "ERROR",
            None,
        ),
        31: (
            "modelarts.cann",
            cst("2026-11-29T18:35:31.406979"),
            "inferred_tz",
            "DEBUG",
            "hcom.cc:336",
        ),
        32: ("modelarts.service", cst("2026-11-29T18:35:31.662"), "inferred_tz", "INFO", None),
        33: ("modelarts.service", destroy, "inferred_tz", "INFO", None),
        34: ("modelarts.service", destroy, "inherited", "ERROR", None),
        35: ("modelarts.service", finalizing, "inferred_tz", "INFO", None),
        36: ("modelarts.service", finalizing, "inherited", "DEFAULT", None),
        37: ("modelarts.service", finalizing, "inherited", "DEFAULT", None),
        38: ("modelarts.service", finalizing, "inherited", "ERROR", None),
    }
    for line, (reader, ts, quality, severity, logger) in expected.items():
        row = got[line]
        assert (row["reader"], row["ts_ns"], row["ts_quality"]) == (reader, ts, quality), line
        assert (row["severity"], row["logger"]) == (severity, logger), line
        if quality == "inferred_tz":
            assert (row["extra"]["tz"], row["extra"]["tz_from"]) == ("+08:00", "file"), line
        else:
            assert "tz" not in row["extra"], line
    # 2026-11-29 18:35:20.114205 at UTC+8, to the nanosecond.
    assert got[22]["ts_ns"] == 1795948520114205000


def test_worker0_service_lines_both_spellings() -> None:
    got = rows(W0)
    assert got[1]["message"] == "download code_url: s3://my-bucket/llm-pretrain/code/"
    assert got[1]["extra"]["tag"] == "init"
    assert got[4]["message"] == "Begin launch training processes"  # "Modelarts" spelling
    assert got[35]["message"] == "output-handler finalizing due to: [training finished]"
    assert got[36]["message"] == "collect and upload ascend logs end at 2026-11-29-18:35:38"
    assert got[37]["message"] == "exiting at 2026-11-29-18:35:39"
    assert got[37]["extra"]["tag"] == "sidecar"
    assert got[34]["message"] == "Training end with return code: 1"
    assert got[34]["extra"]["return_code"] == 1
    assert got[38]["message"] == "exit with 1"
    assert got[38]["extra"]["return_code"] == 1
    exited = got[32]
    assert exited["message"] == "proc-rank-0-device-0 (pid: 4102) has exited"
    assert (exited["extra"]["rank"], exited["extra"]["device"], exited["extra"]["pid"]) == (
        0,
        "0",
        "4102",
    )


def test_worker0_logrus_line() -> None:
    row = rows(W0)[3]
    assert row["message"] == "start the periodic upload task, upload period = 5 seconds "
    assert row["extra"]["fields"] == (
        'file="upload.go:46" Command=obs/upload Component=ma-training-toolkit '
        "Platform=ModelArts-Service"
    )
    assert row["ts_ns"] == ns("2026-11-29T09:13:22Z")


def test_worker0_hccl_lines() -> None:
    got = rows(W0)
    init = got[7]
    assert init["message"].startswith("Entry-HcclCommInitRootInfoInner:ranks[32], rank[0],")
    assert (init["extra"]["module"], init["extra"]["pid"], init["extra"]["tid"]) == (
        "HCCL",
        "4102",
        "4102",
    )
    assert (init["extra"]["rank"], init["extra"]["device"]) == (0, "0")
    timeout = got[10]
    assert timeout["message"].startswith(
        "[TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[2]"
    )
    assert "rank" not in timeout["extra"]
    assert got[11]["extra"]["rank"] == 0  # rankId[0]
    assert got[12]["extra"]["device"] == "0"  # deviceId[0]
    stop = got[31]
    assert stop["message"] == (
        "[hccl-4102-0-1795943650-hccl_world_group][0]hcom destroy complete,take time [86560]us, "
        "rankNum[32], rank[0]"
    )
    assert stop["extra"]["status"] == "status:stop"
    assert stop["extra"]["rank"] == 0


def test_worker0_traceback_is_its_own_record() -> None:
    """The Python traceback after HCCL's native error lines folds as in the text reader:
    one record from ``Traceback`` to the exception, not part of the HCCL line before it."""
    got = rows(W0)
    traceback = got[13]
    assert traceback["message"] == unwrapped(W0, 13, 20)
    assert traceback["extra"]["lines"] == 8
    assert traceback["extra"]["exception"] == (
        "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64"
    )
    assert traceback["extra"]["rank"] == 0
    assert "Traceback" not in got[12]["message"]


def test_worker0_torch_npu_error() -> None:
    row = rows(W0)[21]
    assert row["message"] == "ERR02200 DIST call hccl api failed."
    extra = row["extra"]
    assert (extra["code"], extra["pid"], extra["device"], extra["rank"]) == (
        "ERR02200",
        "4102",
        "0",
        0,
    )


def test_worker0_ei0002_block_names_the_remote_rank() -> None:
    """§3.5: the notify-wait timeout block, including its unindented ``there are(is) …`` and
    ``]`` lines, is one record; ``remote rank [13]`` and the heartbeat-lost server name the
    suspect."""
    row = rows(W0)[22]
    assert row["message"] == "EI0002: " + unwrapped(W0, 22, 29).removeprefix(
        "EI0002: [PID: 4102] 2026-11-29-18:35:20.114.205 "
    )
    assert row["message"].startswith(
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify "
        "register has not received the Notify record from remote rank [13]."
    )
    assert "\nthere are(is) 1 abnormal device(s):\n" in row["message"]
    assert "\n]\n" in row["message"]
    extra = row["extra"]
    assert extra["lines"] == 8
    assert (extra["code"], extra["pid"], extra["rank"], extra["remote_rank"]) == (
        "EI0002",
        "4102",
        0,
        13,
    )
    assert (extra["abnormal_server"], extra["abnormal_device"]) == ("172.16.24.52", "5")
    assert "device" not in extra  # deviceId[5] in the block is the remote device


# -- worker-1: the culprit's log (new name with the node's IP) --------------------------------


def test_worker1_identity_from_the_file_name() -> None:
    for row in rows(W1).values():
        assert (row["workload"], row["worker"], row["host"]) == (JOB, 1, "172.16.24.52")
        assert (row["extra"]["task"], row["extra"]["component"]) == ("worker-1", "ma-training")


def test_worker1_rows() -> None:
    got = rows(W1)
    assert sorted(got) == [*range(1, 11), 15, *range(21, 27)]
    fault = cst("2026-11-29T18:05:12.599787")
    expected: dict[int, tuple[str, int | None, str, str, str | None]] = {
        1: ("modelarts.service", None, "missing", "DEFAULT", None),
        2: ("modelarts.logrus", ns("2026-11-29T17:13:22+08:00"), "exact", "INFO", "upload.go:46"),
        3: ("modelarts.service", cst("2026-11-29T17:13:25.388"), "inferred_tz", "INFO", None),
        4: (
            "modelarts.cann",
            cst("2026-11-29T17:14:10.802114"),
            "inferred_tz",
            "INFO",
            "op_base.cc:1292",
        ),
        5: (
            "modelarts.mindspore",
            cst("2026-11-29T17:14:12.004117"),
            "inferred_tz",
            "WARNING",
            "mindspore/common/_decorator.py:38",
        ),
        6: (
            "modelarts.cann",
            cst("2026-11-29T18:05:12.345678"),
            "inferred_tz",
            "ERROR",
            "engine.cc:914",
        ),
        7: (
            "modelarts.cann",
            cst("2026-11-29T18:05:12.345912"),
            "inferred_tz",
            "ERROR",
            "callback.cc:91",
        ),
        8: (
            "modelarts.mindspore",
            cst("2026-11-29T18:05:12.511290"),
            "inferred_tz",
            "ERROR",
            "mindspore/ccsrc/runtime/device/ascend/ascend_kernel_runtime.cc:679",
        ),
        9: (
            "modelarts.mindspore",
            fault,
            "inferred_tz",
            "CRITICAL",
            "mindspore/ccsrc/plugin/device/ascend/hal/hardware/ascend_graph_executor.cc:240",
        ),
        10: ("modelarts.cann_code", fault, "inherited", "ERROR", None),
        15: ("modelarts.plain", fault, "inherited", "ERROR", None),
        21: ("modelarts.torch_npu", cst("2026-11-29T18:05:13"), "inferred_tz", "ERROR", None),
        22: ("modelarts.service", cst("2026-11-29T18:05:20.011"), "inferred_tz", "INFO", None),
        23: ("modelarts.service", cst("2026-11-29T18:05:20.011"), "inherited", "WARNING", None),
        24: ("modelarts.service", cst("2026-11-29T18:35:31.688"), "inferred_tz", "INFO", None),
        25: ("modelarts.service", cst("2026-11-29T18:35:31.688"), "inherited", "ERROR", None),
        26: ("modelarts.service", cst("2026-11-29T18:35:31.688"), "inherited", "ERROR", None),
    }
    for line, (reader, ts, quality, severity, logger) in expected.items():
        row = got[line]
        assert (row["reader"], row["ts_ns"], row["ts_quality"]) == (reader, ts, quality), line
        assert (row["severity"], row["logger"]) == (severity, logger), line


def test_worker1_cann_runtime_error() -> None:
    got = rows(W1)
    runtime = got[6]
    assert runtime["message"] == (
        "ReportExceptProc:Task exception! device_id=5, stream_id=117, task_id=23, type=13, "
        "retCode=0x91."
    )
    extra = runtime["extra"]
    assert (extra["module"], extra["pid"], extra["proc"], extra["tid"], extra["device"]) == (
        "RUNTIME",
        "4716",
        "python",
        "4790",
        "5",
    )
    assert got[7]["message"].startswith("Notify:notify [HCCL] task fail start.")
    assert got[4]["extra"]["rank"] == 13  # rank[13] of the HCCL init line
    assert got[4]["extra"]["device"] == "5"  # deviceLogicId[5]


def test_worker1_mindspore_lines() -> None:
    got = rows(W1)
    python_side = got[5]
    assert python_side["message"].startswith("'TensorAdd' is deprecated")
    assert (python_side["extra"]["module"], python_side["extra"]["tid"]) == (
        "ME",
        "281473213136912",
    )
    assert python_side["extra"]["proc"] == "MainProcess"
    assert "func" not in python_side["extra"]
    dump = got[8]
    assert dump["message"].startswith("Task fail infos task_id: 23, stream_id: 117")
    assert (dump["extra"]["func"], dump["extra"]["tid"], dump["extra"]["device"]) == (
        "DumpTaskExceptionInfo",
        "ffff4effd1e0",
        "5",
    )
    critical = got[9]
    assert critical["message"] == (
        "Run task for graph:kernel_graph_1 error! The details refer to 'Ascend Error Message'."
        "Ascend Error Message:EE9999: Inner Error!"
    )
    assert (critical["extra"]["func"], critical["extra"]["code"]) == ("RunGraph", "EE9999")


def test_worker1_ee9999_block_folds_its_indented_lines() -> None:
    row = rows(W1)[10]
    assert row["message"] == "\n".join(lines_of(W1)[9:14])
    assert row["message"].startswith("EE9999: Inner Error!\n        The error from device(chipId:5")
    assert (row["extra"]["lines"], row["extra"]["code"]) == (5, "EE9999")


def test_worker1_traceback_and_rank_from_the_prefix() -> None:
    """torch_npu ``RankID:-1`` means no process group yet: the ``[rank13]:`` prefix names
    the rank (§3.5, §3.7)."""
    got = rows(W1)
    traceback = got[15]
    assert traceback["message"] == unwrapped(W1, 15, 20)
    assert traceback["extra"]["exception"] == "RuntimeError: ACL stream synchronize failed."
    assert traceback["extra"]["rank"] == 13
    err = got[21]
    assert err["message"] == "ERR00100 PTA call acl api failed"
    assert (err["extra"]["code"], err["extra"]["device"], err["extra"]["rank"]) == (
        "ERR00100",
        "5",
        13,
    )
    assert "rank_id" not in err["extra"]


def test_worker1_process_exits() -> None:
    got = rows(W1)
    assert (got[22]["extra"]["rank"], got[22]["extra"]["device"], got[22]["extra"]["pid"]) == (
        13,
        "5",
        "4716",
    )
    assert got[23]["message"] == (
        "training process proc-rank-13-device-5 exited, waiting for the other processes"
    )
    assert (got[24]["extra"]["rank"], got[24]["extra"]["pid"]) == (8, "4703")
    assert got[25]["extra"]["return_code"] == 1


# -- time zones (formats.md §3.6) ---------------------------------------------------------------


def test_tz_option_wins_over_the_learned_offset() -> None:
    got = {row["line"]: row for row in canonical(_read(W0, None, "-03:00")[0])}
    assert got[22]["ts_ns"] == ns("2026-11-29T18:35:20.114205-03:00")
    assert (got[22]["extra"]["tz"], got[22]["extra"]["tz_from"]) == ("-03:00", "option")
    assert got[3]["ts_ns"] == ns("2026-11-29T17:13:22+08:00")  # logrus keeps its own offset


def test_without_an_offset_local_stamps_are_utc() -> None:
    data = (
        b"[ModelArts Service Log][init] download code_url: s3://b/code/\n"
        b"[ERROR] RUNTIME(150840,python):2021-09-14-09:26:01.014.355 [engine.cc:914]150900 "
        b"ReportExceptProc:Task exception! device_id=0, stream_id=117, task_id=23, type=13, "
        b"retCode=0x91.\n"
    )
    frame, counts, issues = run(LOG_READER, data, f"d/modelarts-job-{JOB}-worker-0.log")
    got = {row["line"]: row for row in canonical(frame)}
    assert got[2]["ts_ns"] == ns("2021-09-14T09:26:01.014355Z")
    assert (got[2]["ts_quality"], got[2]["extra"]["tz"], got[2]["extra"]["tz_from"]) == (
        "inferred_tz",
        "UTC",
        "default",
    )
    assert counts.records == counts.rows == 2 and issues == []


def test_learn_offset() -> None:
    line = 'time="2021-07-26T19:24:11{}" level=info msg="x" Platform=ModelArts-Service\n'
    assert learn_offset(line.format("+08:00").encode()) == "+08:00"
    assert learn_offset(line.format("Z").encode()) == "UTC"
    assert learn_offset(line.format(".123456-03:00").encode()) == "-03:00"
    assert learn_offset(b"[ModelArts Service Log]nothing dated\n") is None
    tie = (line.format("Z") + line.format("+08:00")).encode()
    assert learn_offset(tie) == "UTC"  # ties: the earliest
    # polars cannot apply half-hour fixed offsets: not learned (rather than a failed read)
    assert learn_offset(line.format("+05:30").encode()) is None


def test_half_hour_offset_in_the_file_does_not_break_the_read() -> None:
    data = (
        b'time="2026-11-29T18:35:00+05:30" level=info msg="x" Platform=ModelArts-Service\n'
        b"[ERROR] RUNTIME(1,python):2026-11-29-18:35:20.099.235 [engine.cc:914]2 boom\n"
    )
    frame, counts, issues = run(LOG_READER, data, "d/x.log")
    assert (counts.rows, issues) == (2, [])
    got = {row["line"]: row for row in canonical(frame)}
    assert got[1]["ts_ns"] == ns("2026-11-29T18:35:00+05:30")
    assert (got[2]["ts_ns"], got[2]["extra"]["tz_from"]) == (
        ns("2026-11-29T18:35:20.099235Z"),
        "default",
    )


def test_mixed_offsets_in_one_log() -> None:
    """Bad input: logrus lines at +08:00 and at UTC (``Z``, another process's TZ) and local
    CANN lines. Each zoned line keeps its own instant; the local lines take the offset most
    logrus lines show (three at +08:00, two at UTC)."""
    data = (
        b'time="2026-11-29T09:13:20Z" level=info msg="sidecar started" Platform=ModelArts-Service\n'
        b'time="2026-11-29T17:13:22+08:00" level=info msg="upload task" file="upload.go:46" '
        b"Platform=ModelArts-Service\n"
        b"[ERROR] HCCL(4102,python):2026-11-29-18:35:20.099.235 [task_exception_handler.cc:908] "
        b"[4102][TaskExecStage][Timeout][Host]Task run failed\n"
        b'time="2026-11-29T18:35:40+08:00" level=warning msg="job failed" file="monitor.go:88" '
        b"Platform=ModelArts-Service\n"
        b'time="2026-11-29T10:35:41Z" level=error msg="upload failed" Platform=ModelArts-Service\n'
        b"[INFO] HCCL(4102,python):2026-11-29-18:35:41.000.001 [hcom.cc:336] [4102]destroy\n"
        b'time="2026-11-29T18:35:42+08:00" level=info msg="upload done" Platform=ModelArts-Service\n'
    )
    frame, counts, issues = run(LOG_READER, data, f"d/modelarts-job-{JOB}-worker-0.log")
    got = {row["line"]: row for row in canonical(frame)}
    assert issues == [] and counts.records == counts.rows == 7
    assert (got[1]["ts_ns"], got[1]["ts_quality"]) == (ns("2026-11-29T09:13:20Z"), "exact")
    assert (got[2]["ts_ns"], got[2]["ts_quality"]) == (ns("2026-11-29T09:13:22Z"), "exact")
    assert (got[3]["ts_ns"], got[3]["ts_quality"]) == (
        cst("2026-11-29T18:35:20.099235"),
        "inferred_tz",
    )
    assert got[3]["extra"]["tz"] == "+08:00"
    assert (got[4]["severity"], got[4]["logger"]) == ("WARNING", "monitor.go:88")
    assert (got[5]["ts_ns"], got[5]["severity"], got[5]["logger"]) == (
        ns("2026-11-29T10:35:41Z"),
        "ERROR",
        None,
    )
    assert got[6]["ts_ns"] == cst("2026-11-29T18:35:41.000001")
    # The instants are consistent: the UTC line at 10:35:41Z is one second after 18:35:40+08.
    assert got[5]["ts_ns"] - got[4]["ts_ns"] == 1_000_000_000


def test_error_code_header_shapes() -> None:
    """``EJ0001: <stamp>`` (no PID), ``EL0006: [PID: n] <stamp>``, ``EI9999: Inner Error!``
    (§3.5 and the torch_npu runbooks); the indented lines fold into each."""
    data = (
        b'time="2024-05-21T11:57:50+08:00" level=info msg="start" Platform=ModelArts-Service\n'
        b"[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl "
        b"api failed.\n"
        b"EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe "
        b"the last training process is running.\n"
        b"        Solution: Wait for 10s after killing the last training process and try again.\n"
        b"\tTraceBack (most recent call last):\n"
        b"EL0006: [PID: 927000] 2024-05-21-11:57:55.000.123 The resources are insufficient.\n"
        b"EI9999: Inner Error!\n"
        b"EI9999: 2024-05-21-11:57:56.358.410  The error from device(chipId:3, dieId:0), serial "
        b"number is 9, hccl fftsplus task timeout occurred during task execution.\n"
    )
    frame, counts, issues = run(LOG_READER, data, "d/train.log")
    got = {row["line"]: row for row in canonical(frame)}
    assert issues == []
    assert sorted(got) == [1, 2, 3, 6, 7, 8]
    assert (counts.records, counts.rows, counts.folded) == (8, 6, 2)
    assert got[2]["extra"]["rank"] == 3 and got[2]["extra"]["rank_id"] == "3"
    assert got[3]["message"] == (
        "EJ0001: Failed to initialize the HCCP process. Reason: Maybe the last training process "
        "is running.\n"
        "        Solution: Wait for 10s after killing the last training process and try again.\n"
        "\tTraceBack (most recent call last):"
    )
    assert (got[3]["ts_ns"], got[3]["extra"]["code"]) == (
        cst("2024-05-21T11:57:54.167645"),
        "EJ0001",
    )
    assert "pid" not in got[3]["extra"]
    assert got[6]["message"] == "EL0006: The resources are insufficient."
    assert (got[6]["extra"]["pid"], got[6]["ts_ns"]) == (
        "927000",
        cst("2024-05-21T11:57:55.000123"),
    )
    assert (got[7]["message"], got[7]["ts_quality"]) == ("EI9999: Inner Error!", "inherited")
    assert got[8]["extra"]["device"] == "3"  # chipId:3
    for line in (3, 6, 7, 8):
        assert got[line]["severity"] == "ERROR"
        assert got[line]["reader"] == "modelarts.cann_code"
    # No file name: no job, worker or host.
    assert {(r["workload"], r["worker"], r["host"]) for r in got.values()} == {(None, None, None)}


#: The logrus line that tells the reader the container runs at UTC+8.
LOGRUS_CST = b'time="2026-11-29T18:30:02+08:00" level=info msg="start" Platform=ModelArts-Service\n'


def parsed(*lines: bytes) -> dict[int, dict[str, Any]]:
    """Canonical rows of a worker log made of the logrus line then ``lines`` (by line)."""
    frame, _, issues = run(LOG_READER, LOGRUS_CST + b"".join(lines), "d/train.log")
    assert issues == []
    return {row["line"]: row for row in canonical(frame)}


def test_named_error_code_lines() -> None:
    """Newer CANN leads with pid and stamp and names the code: ``[PID: n] <stamp>
    Name(EI0015): …`` (the EI0011/EI0013/EI0015/EI0019 examples of the hicann/hccl fault
    guides). The stamp is the row's time, name and code stay in the message."""
    got = parsed(
        b"[PID: 237] 2026-11-29-18:35:15.123.456 Communication_Error_Ranktable_Detect(EI0015): "
        b"Failed to collect cluster information of the communicator based on rootInfo detection. "
        b'List of unconnected ranks: "[1,7,]".\n',
        b"[rank3]: [PID: 3448331] 2026-11-29-18:35:16.000.001 Execution Error ROCE CQE(EI0013): "
        b"An error CQE occurred during operator execution.\n",
        b"[PID: 2267203] 2026-11-29-18:35:17.575.404 Communication_Error_Bind_IP_Port(EI0019): "
        b"Failed to enable listening for the host network adapter socket.\n",
        b"[PID: 2103452] 2026-11-29-18:35:18.447.213 "
        b"Resource_Error_Insufficient_Device_Memory(EI0011): Failed to allocate 3MB bytes of NPU "
        b"memory.\n",
        b"Resource_Error_Insufficient_Device_Memory(EI0011): Failed to allocate 3MB bytes of NPU "
        b"memory.\n",
    )
    assert sorted(got) == [1, 2, 3, 4, 5, 6]
    expected = {
        2: ("2026-11-29T18:35:15.123456", "237", "Communication_Error_Ranktable_Detect", "EI0015"),
        3: ("2026-11-29T18:35:16.000001", "3448331", "Execution Error ROCE CQE", "EI0013"),
        4: ("2026-11-29T18:35:17.575404", "2267203", "Communication_Error_Bind_IP_Port", "EI0019"),
        5: (
            "2026-11-29T18:35:18.447213",
            "2103452",
            "Resource_Error_Insufficient_Device_Memory",
            "EI0011",
        ),
    }
    for line, (local, pid, name, code) in expected.items():
        row = got[line]
        assert row["ts_ns"] == cst(local)  # 10:35:15.123456Z for line 2
        assert (row["severity"], row["reader"], row["logger"]) == (
            "ERROR",
            "modelarts.cann_code",
            None,
        )
        assert row["message"].startswith(f"{name}({code}): ")
        assert (row["extra"]["pid"], row["extra"]["code"]) == (pid, code)
    assert got[2]["ts_ns"] == ns("2026-11-29T10:35:15.123456Z")
    assert got[2]["message"] == (
        "Communication_Error_Ranktable_Detect(EI0015): Failed to collect cluster information of "
        'the communicator based on rootInfo detection. List of unconnected ranks: "[1,7,]".'
    )
    assert got[3]["extra"]["rank"] == 3
    # Without the pid lead: still the code line, its time inherited from the line before.
    assert got[6]["message"] == (
        "Resource_Error_Insufficient_Device_Memory(EI0011): Failed to allocate 3MB bytes of NPU "
        "memory."
    )
    assert (got[6]["severity"], got[6]["extra"]["code"], got[6]["ts_quality"]) == (
        "ERROR",
        "EI0011",
        "inherited",
    )


def test_named_error_code_near_misses() -> None:
    """A pid-and-stamp lead without ``Name(CODE):``, a lower-case or code-less name, and a
    code that is not CANN's shape stay plain text, stamp and all."""
    near = [
        b"[PID: 12345] 2026-11-29-18:35:15.123.456 Failed to collect cluster information.\n",
        b"[PID: 12345] 2026-11-29-18:35:15.123.456 Communication_Error(EI0015) Failed: no colon\n",
        b"[PID: 12345] 2026-11-29-18:35:15.123.456 Communication_Error(EI015): short code\n",
        b"print(EI0015): a lower-case call\n",
        b"[PID: 12345] 2026-11-29 18:35:15 Communication_Error(EI0015): another stamp\n",
    ]
    got = parsed(*near)
    for line, raw in enumerate(near, start=2):
        row = got[line]
        assert row["reader"] == "modelarts.plain", raw
        assert row["message"] == raw.decode().rstrip("\n")
        assert row["severity"] == "DEFAULT"


def test_hccl_line_without_a_space_after_the_level() -> None:
    """The HCCL guide's "Cluster Exception Location" example glues the module to the level:
    ``[ERROR]HCCL(pid,proc):<stamp> [file.cc:line][tid]…``."""
    got = parsed(
        b"[ERROR]HCCL(12345,python):2026-11-29-18:35:15.123.456 [transport_manager.cc:123]"
        b"[12399]Transport init error, rankId[3]\n",
        b"[ERROR]HCCL(12345,python):2026-11-29-18:35:15.123.457 [hcom.cc:336] [12399]spaced\n",
    )
    row = got[2]
    assert row["ts_ns"] == ns("2026-11-29T10:35:15.123456Z") == cst("2026-11-29T18:35:15.123456")
    assert (row["severity"], row["reader"], row["logger"]) == (
        "ERROR",
        "modelarts.cann",
        "transport_manager.cc:123",
    )
    assert row["message"] == "Transport init error, rankId[3]"
    assert row["extra"]["module"] == "HCCL" and row["extra"]["pid"] == "12345"
    assert row["extra"]["tid"] == "12399" and row["extra"]["rank"] == 3
    assert (got[3]["logger"], got[3]["message"]) == ("hcom.cc:336", "spaced")


def test_hccl_glued_level_near_misses() -> None:
    """Two spaces, a lower-case module or an unknown level is not a CANN line."""
    near = [
        b"[ERROR]  HCCL(12345,python):2026-11-29-18:35:15.123.456 [a.cc:1][2]two spaces\n",
        b"[ERROR]hccl(12345,python):2026-11-29-18:35:15.123.456 [a.cc:1][2]lower case\n",
        b"[FATAL]HCCL(12345,python):2026-11-29-18:35:15.123.456 [a.cc:1][2]unknown level\n",
    ]
    got = parsed(*near)
    for line, raw in enumerate(near, start=2):
        assert got[line]["reader"] == "modelarts.plain", raw
        assert got[line]["message"] == raw.decode().rstrip("\n")
        assert got[line]["severity"] == "DEFAULT"


def test_driver_line_without_file_and_line() -> None:
    """``DRV`` writes ``[ascend][curpid: pid, tid]`` and its own tags instead of ``[file:line]``
    (the hdc-connect-down line of the MindSpore CANN error cases); the tags stay in the
    message, the second curpid number is the thread."""
    got = parsed(
        b"[ERROR] DRV(17381,python):2026-11-29-18:35:15.123.456 [ascend][curpid: 17381, 17390]"
        b"[drv][tsdrv][share_log_read 552]hdc connect down, devid(0) fid(0) tsid(0)\n",
        b"[WARNING] DRV(17381,python):2026-11-29-18:35:15.200.001 [ascend][curpid: 17381, 17381]"
        b"[drv][devdrv][drvGetPlatformInfo 80]platform info\n",
    )
    row = got[2]
    assert row["ts_ns"] == cst("2026-11-29T18:35:15.123456")
    assert (row["severity"], row["reader"], row["logger"]) == ("ERROR", "modelarts.cann", None)
    assert row["message"] == (
        "[drv][tsdrv][share_log_read 552]hdc connect down, devid(0) fid(0) tsid(0)"
    )
    assert (row["extra"]["module"], row["extra"]["pid"], row["extra"]["tid"]) == (
        "DRV",
        "17381",
        "17390",
    )
    assert got[3]["severity"] == "WARNING"
    assert got[3]["message"] == "[drv][devdrv][drvGetPlatformInfo 80]platform info"


def test_driver_line_near_misses() -> None:
    """Without the ``[ascend][curpid: …]`` lead (or with a stamp of another shape) a ``DRV``
    line is not read as a CANN line."""
    near = [
        b"[ERROR] DRV(17381,python):2026-11-29-18:35:15.123.456 [drv][tsdrv]no curpid\n",
        b"[ERROR] DRV(17381,python):2026-11-29-18:35:15.123 [ascend][curpid: 1, 2][drv]short\n",
        b"[ERROR] DRV(17381,python):2026-11-29-18:35:15.123.456 [ascend][curpid: x, 2][drv]x\n",
    ]
    got = parsed(*near)
    for line, raw in enumerate(near, start=2):
        assert got[line]["reader"] == "modelarts.plain", raw
        assert got[line]["message"] == raw.decode().rstrip("\n")
        assert got[line]["severity"] == "DEFAULT"


def test_mindspore_lambda_function_name() -> None:
    """A MindSpore lambda logs its function as ``operator()]``: it goes to ``func``, not the
    message."""
    got = parsed(
        b"[WARNING] MD(123,7f3a2b1c0700,python):2026-11-29-18:35:15.123.456 "
        b"[mindspore/ccsrc/minddata/dataset/engine/datasetops/source/generator_op.cc:198] "
        b"operator()] Bad performance attention, it takes more than 25 seconds to "
        b"generator.__next__ new row.\n",
    )
    row = got[2]
    assert row["ts_ns"] == cst("2026-11-29T18:35:15.123456")
    assert (row["severity"], row["reader"], row["logger"]) == (
        "WARNING",
        "modelarts.mindspore",
        "mindspore/ccsrc/minddata/dataset/engine/datasetops/source/generator_op.cc:198",
    )
    assert row["message"] == (
        "Bad performance attention, it takes more than 25 seconds to generator.__next__ new row."
    )
    assert row["extra"]["func"] == "operator()"


def test_mindspore_function_name_near_misses() -> None:
    """Only an empty ``()`` is part of a function name; anything else stays in the message."""
    got = parsed(
        b"[ERROR] KERNEL(123,7fab,python):2026-11-29-18:35:15.123.456 [a/b.cc:1] "
        b"operator(x)] with an argument\n",
        b"[ERROR] KERNEL(123,7fab,python):2026-11-29-18:35:15.123.456 [a/b.cc:1] "
        b"operator() no bracket\n",
    )
    assert got[2]["message"] == "operator(x)] with an argument"
    assert got[3]["message"] == "operator() no bracket"
    for line in (2, 3):
        assert "func" not in got[line]["extra"]
        assert got[line]["reader"] == "modelarts.mindspore"
        assert got[line]["ts_ns"] == cst("2026-11-29T18:35:15.123456")


# -- API documents: nothing lost, provenance ----------------------------------------------------


@pytest.mark.parametrize(("name", "expected"), [(DETAILS, 9), (EVENTS, 6), (STAGES, 8)])
def test_every_api_record_is_accounted_for(name: str, expected: int) -> None:
    frame, counts, issues = _read(name)
    assert issues == []
    assert counts.records == api_records(json.loads((SAMPLES / name).read_bytes())) == expected
    assert counts.records == counts.rows + counts.dropped == frame.height
    assert counts.folded == counts.blank == counts.dropped == 0


@pytest.mark.parametrize("name", DOCUMENTS)
def test_api_rows_lead_back_to_their_object(name: str) -> None:
    """The bytes at each row's offset start the JSON object whose fields the row carries."""
    data = (SAMPLES / name).read_bytes()
    frame = _read(name)[0]
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
    assert _read(name, 64)[0].equals(_read(name)[0])


# -- ShowTrainingJobDetails (§3.1) --------------------------------------------------------------


def api_rows(name: str) -> list[dict[str, Any]]:
    return canonical(_read(name)[0])


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


# -- shared-code findings -----------------------------------------------------------------------


def test_grammar_rank_group_falls_back_to_the_rank_prefix() -> None:
    grammar = grammars.Grammar(
        "probe", "probe", r"^\[(?P<lvl>ERROR)\] RankID:(?:-\d+|(?P<rank>\d+)) ", "none"
    )
    parsed = grammars.parse_lines(
        pl.Series(["[rank3]: [ERROR] RankID:-1 x", "[ERROR] RankID:5 y", "plain"]),
        anchor=dt.date(2026, 1, 1),
        grammars=[grammar],
    )
    assert parsed["rank"].to_list() == [3, 5, None]


def test_half_hour_tz_option_is_applied() -> None:
    data = b"2026-11-29 18:35:15.101020: E external/xla/service.cc:1170] boom\n"
    frame, _, _ = run(TextReader(), data, "d/x.log", ReadOptions(tz="+05:30"))
    assert frame["ts"].dt.epoch("ns").to_list() == [ns("2026-11-29T18:35:15.101020+05:30")]


def test_rank_prefixed_empty_line_stays_inside_the_traceback() -> None:
    data = (
        b"[rank0]: Traceback (most recent call last):\n"
        b'[rank0]:   File "a.py", line 1, in <module>\n'
        b"[rank0]: \n"
        b"[rank0]:     main()\n"
        b"[rank0]: RuntimeError: x\n"
    )
    frame, counts, _ = run(TextReader(), data, "d/x.log")
    assert frame["message"].to_list() == [
        'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n\n'
        "    main()\nRuntimeError: x"
    ]
    assert (counts.rows, counts.folded) == (1, 4)
