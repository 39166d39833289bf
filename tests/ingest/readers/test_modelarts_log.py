"""The ``modelarts`` reader (worker logs) on realistic ModelArts dumps (tests/samples/modelarts).

Expected values come from ../shared/reference/formats.md §3 (worker log names and platform
lines §3.4, CANN / MindSpore / torch_npu line shapes §3.5, time zones §3.6, field derivation §3.7)
and §5.3 (multi-line records), and from the sample files themselves; never from the readers'
code. The samples tell one story: rank 13 (worker-1, device 5, node 172.16.24.52) hits an
AI Core exception at 18:05 local time; 30 minutes later the other ranks time out waiting for
it (EI0002 naming ``remote rank [13]``), the platform reschedules, and the job fails on a chip
fault of worker-1. The containers run at UTC+8, which the logrus lines say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from analyzer.case.inputs import ReadOptions
from analyzer.ingest.readers.modelarts_log import learn_offset
from analyzer.ingest.readers.modelarts_names import parse_worker_log_name
from analyzer.ingest.readers.text import TextReader
from analyzer.ingest.registry import READERS, choose_reader
from tests.helpers import ns
from tests.ingest.readers.modelarts_helpers import (
    API_READER,
    CODE_PREFIX,
    JOB,
    LOG_READER,
    LOGS,
    RANK_WRAPPER,
    SAMPLES,
    W0,
    W1,
    canonical,
    cst,
    lines_of,
    other_samples,
    read_sample,
    rows,
    run,
)

# -- helpers ---------------------------------------------------------------------------------


def unwrapped(name: str, first: int, last: int) -> str:
    """File lines ``first..last`` (1-based) without their torchrun ``[rankN]:`` prefix."""
    return "\n".join(RANK_WRAPPER.sub("", line) for line in lines_of(name)[first - 1 : last])


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


@pytest.mark.parametrize("path", other_samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_samples_are_not_claimed(path: Path) -> None:
    """Plain JAX/absl logs, Cloud Logging exports (and every other family) stay theirs."""
    head = path.read_bytes()[: 64 << 10]
    relative = f"{path.parent.name}/{path.name}"
    assert LOG_READER.sniff(head, relative) == 0.0
    choice = choose_reader(head, relative)
    assert choice is None or choice.reader.name != "modelarts"


def test_jax_worker_log_is_not_claimed() -> None:
    jax = (SAMPLES.parent / "text" / "jax_worker.log").read_bytes()
    assert LOG_READER.sniff(jax, "logs/jax_worker.log") == 0.0
    choice = choose_reader(jax, "logs/jax_worker.log")
    assert choice is not None and choice.reader.name == "text"


def test_readers_are_registered_before_the_text_fallback() -> None:
    names = [reader.name for reader in READERS]
    assert names.index("modelarts") < names.index("text")


# -- worker logs: nothing lost, provenance, chunking ------------------------------------------


@pytest.mark.parametrize(
    ("name", "tally"), [(W0, (38, 23, 14, 1)), (W1, (26, 17, 9, 0))], ids=("worker-0", "worker-1")
)
def test_every_line_is_accounted_for(name: str, tally: tuple[int, int, int, int]) -> None:
    frame, counts, issues = read_sample(name)
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
    frame = read_sample(name)[0]
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
    small, counts, issues = read_sample(name, chunk_bytes)
    assert issues == []
    assert small.equals(read_sample(name)[0])
    assert counts == read_sample(name)[1]


def test_rows_conform_to_the_canonical_schema() -> None:
    for name in LOGS:
        for row in canonical(read_sample(name)[0]):
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
    got = {row["line"]: row for row in canonical(read_sample(W0, None, "-03:00")[0])}
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


# -- shared-code findings -----------------------------------------------------------------------


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


def test_a_rank_too_large_for_an_int64_is_no_rank_not_a_failed_ingest() -> None:
    """A digit run past 2**63 in ``rankId[…]`` or ``[rankN]:`` used to abort the whole ingest
    (a strict cast); such a number names no rank, so the row keeps its text and no rank."""
    got = parsed(
        b"[ERROR]HCCL(12345,python):2026-11-29-18:35:15.123.456 [transport_manager.cc:123]"
        b"[12399]Transport init error, rankId[99999999999999999999]\n",
        b"[rank99999999999999999999]: plain print\n",
    )
    assert got[2]["message"] == "Transport init error, rankId[99999999999999999999]"
    assert "rank" not in got[2]["extra"]
    assert got[3]["message"].endswith("plain print")
