from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from analyzer.ingest.lines.grammars import GRAMMARS, Grammar
from analyzer.ingest.lines.parse import parse_lines

ANCHOR = dt.date(2026, 11, 30)


def _parse(line: str, *, anchor: dt.date = ANCHOR, tz: str = "UTC") -> dict[str, object]:
    frame = parse_lines(pl.Series([line]), anchor=anchor, tz=tz)
    # Keep nanoseconds: Python datetimes would drop them.
    frame = frame.with_columns(pl.col("ts").dt.epoch("ns").alias("ts_ns"))
    row: dict[str, object] = frame.row(0, named=True)
    return row


def _ns(row: dict[str, object]) -> int:
    value = row["ts_ns"]
    assert isinstance(value, int)
    return value


@pytest.mark.parametrize(
    ("line", "grammar", "level", "logger", "message"),
    [
        (
            "E0929 17:42:48.594192 1044529 coordination_service_agent.cc:332] Polled an error",
            "absl",
            "E",
            "coordination_service_agent.cc:332",
            "Polled an error",
        ),
        (
            'I1012 19:34:45.000152    2480 kuberuntime_container.go:709] "Killing container"',
            "absl",
            "I",
            "kuberuntime_container.go:709",
            '"Killing container"',
        ),
        (
            "E0000 00:00:1731424090.226654 1605757 cuda_dnn.cc:8310] Unable to register",
            "absl_epoch",
            "E",
            "cuda_dnn.cc:8310",
            "Unable to register",
        ),
        (
            "2024-10-09 15:47:38.568412: E external/xla/xla/tsl/coordination_service.cc:1170] task",
            "tsl",
            "E",
            "external/xla/xla/tsl/coordination_service.cc:1170",
            "task",
        ),
        (
            "2020-05-04 09:05:40.719332: E    1578 tensorflow/compiler/xla/xla_util.cc:76] old",
            "tsl",
            "E",
            "tensorflow/compiler/xla/xla_util.cc:76",
            "old",
        ),
        (
            "INFO:2024-06-25 00:34:55,142:jax._src.xla_bridge:889: Unable to initialize backend",
            "jax_debug",
            "INFO",
            "jax._src.xla_bridge:889",
            "Unable to initialize backend",
        ),
        (
            "ERROR:root:Generation error for product row_0",
            "python_basic",
            "ERROR",
            "root",
            "Generation error for product row_0",
        ),
        (
            "2026-11-29 18:35:15,123 - train - ERROR - step 1200 failed",
            "asctime",
            "ERROR",
            "train",
            "step 1200 failed",
        ),
        (
            "(VllmWorkerProcess pid=1817) ERROR 07-01 22:45:31 [multiproc_worker_utils.py:239] boom",
            "vllm",
            "ERROR",
            "multiproc_worker_utils.py:239",
            "boom",
        ),
        (
            "2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.MRAppMaster: Created",
            "log4j",
            "INFO",
            None,
            "[main] org.apache.hadoop.MRAppMaster: Created",
        ),
        (
            "17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered",
            "spark",
            "INFO",
            "executor.CoarseGrainedExecutorBackend",
            "Registered",
        ),
        (
            "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure;",
            "syslog",
            None,
            "sshd(pam_unix)",
            "authentication failure;",
        ),
        (
            "Jun 19 04:09:11 combo syslogd 1.4.1: restart.",
            "syslog",
            None,
            "syslogd 1.4.1",
            "restart.",
        ),
        (
            "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating",
            "hdfs",
            "INFO",
            "dfs.DataNode$PacketResponder",
            "PacketResponder 1 terminating",
        ),
        (
            "1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 "
            "R02-M1-N0-C:J12-U11 RAS KERNEL INFO instruction cache parity error corrected",
            "bgl_ras",
            "INFO",
            "RAS KERNEL",
            "instruction cache parity error corrected",
        ),
        (
            "1119977619 2005.06.28 R02-M1-NE 2005-06-28-09.53.39.479164 R02-M1-NE NULL "
            "DISCOVERY WARNING Node card is not fully functional",
            "bgl_ras",
            "WARNING",
            "NULL DISCOVERY",
            "Node card is not fully functional",
        ),
        ("just some print() output", None, None, None, "just some print() output"),
    ],
)
def test_grammar_fields(
    line: str, grammar: str | None, level: str | None, logger: str | None, message: str
) -> None:
    row = _parse(line)
    assert (row["grammar"], row["level"], row["logger"], row["message"]) == (
        grammar,
        level,
        logger,
        message,
    )


def test_every_grammar_has_a_positive_case_above() -> None:
    names = {g.name for g in GRAMMARS}
    tested = {
        "absl",
        "absl_epoch",
        "tsl",
        "jax_debug",
        "python_basic",
        "asctime",
        "vllm",
        "log4j",
        "spark",
        "hdfs",
        "syslog",
        "bgl_ras",
        "kubectl_describe_event",
        "kubectl_get_event",
        "kubectl_old_event",
        "syslog_5424",
    }
    assert names == tested


def test_rfc5424_syslog_after_its_stamp_names_host_and_program() -> None:
    row = _parse(
        "2024-02-07T02:49:40.739405+00:00 NodeA kubelet 24578 - -  E0207 02:49:40.738973   "
        '24578 remote_runtime.go:176] "RunPodSandbox from runtime service failed"'
    )
    assert (row["grammar"], row["host"], row["logger"], row["tid"]) == (
        "syslog_5424",
        "NodeA",
        "kubelet",
        "24578",
    )
    assert str(row["message"]).startswith("E0207 02:49:40.738973")
    assert row["ts_quality"] == "exact"
    # Without a leading stamp the same words are not RFC 5424.
    assert _parse("NodeA kubelet 24578 - - hello")["grammar"] is None


@pytest.mark.parametrize(
    ("line", "grammar", "level", "reason", "host", "pod", "message"),
    [
        (
            "  Warning  FailedScheduling  5m2s  default-scheduler  0/4 nodes are available: 4 "
            "node(s) didn't match Pod's node affinity/selector.",
            "kubectl_describe_event",
            "Warning",
            "FailedScheduling",
            None,
            None,
            "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector.",
        ),
        (
            "  Warning  BackOff         1h (x3 from 1h)  kubelet, localhost.localdomain  "
            "Back-off restarting failed container",
            "kubectl_describe_event",
            "Warning",
            "BackOff",
            "localhost.localdomain",
            None,
            "Back-off restarting failed container",
        ),
        (
            "  Normal   Pulled     18m (x5 over 20m)     kubelet            Container image "
            '"gcr.io/x:v1" already present on machine',
            "kubectl_describe_event",
            "Normal",
            "Pulled",
            None,
            None,
            'Container image "gcr.io/x:v1" already present on machine',
        ),
        (
            "5m          Warning   FailedScheduling    pod/train-0    0/3 nodes are available: "
            "3 Insufficient google.com/tpu.",
            "kubectl_get_event",
            "Warning",
            "FailedScheduling",
            None,
            "train-0",
            "0/3 nodes are available: 3 Insufficient google.com/tpu.",
        ),
        (
            "12m         Normal    NodeNotReady        node/gke-pool-1-abc   Node "
            "gke-pool-1-abc status is now: NodeNotReady",
            "kubectl_get_event",
            "Normal",
            "NodeNotReady",
            "gke-pool-1-abc",
            None,
            "Node gke-pool-1-abc status is now: NodeNotReady",
        ),
        (
            "  6m\t\t2m\t\t3\tkubelet, 192.168.0.12\t\t\tWarning\t\tFailedMount\tUnable to "
            "mount volumes for pod",
            "kubectl_old_event",
            "Warning",
            "FailedMount",
            "192.168.0.12",
            None,
            "Unable to mount volumes for pod",
        ),
    ],
)
def test_kubectl_event_tables(
    line: str,
    grammar: str,
    level: str,
    reason: str,
    host: str | None,
    pod: str | None,
    message: str,
) -> None:
    row = _parse(line)
    assert (row["grammar"], row["level"], row["logger"]) == (grammar, level, reason)
    assert (row["host"], row["pod"], row["message"]) == (host, pod, message)
    assert row["ts"] is None


@pytest.mark.parametrize(
    "line",
    [
        "  Type     Reason     Age   From               Message",
        "  ----     ------     ----  ----               -------",
        "  Normal text that merely starts with a type word",
        "Warning: the flag --foo is deprecated",
    ],
)
def test_kubectl_table_headers_and_prose_are_not_events(line: str) -> None:
    assert _parse(line)["grammar"] != "kubectl_describe_event"


def test_epoch_line_is_exact_to_the_microsecond() -> None:
    row = _parse("I0000 00:00:1731424090.226654 1605757 cuda_dnn.cc:8310] x")
    assert row["ts_quality"] == "exact"
    assert _ns(row) == 1731424090_226654000


def test_year_is_inferred_nearest_to_anchor_across_new_year() -> None:
    december = _parse("I1231 23:59:59.000001 1 a.cc:1] x", anchor=dt.date(2027, 1, 2))
    january = _parse("I0101 00:00:01.000000 1 a.cc:1] x", anchor=dt.date(2026, 12, 30))
    assert december["ts"] == dt.datetime(2026, 12, 31, 23, 59, 59, 1, tzinfo=dt.UTC)
    assert january["ts"] == dt.datetime(2027, 1, 1, 0, 0, 1, tzinfo=dt.UTC)
    assert december["ts_quality"] == january["ts_quality"] == "inferred_year"


def test_local_times_follow_the_zone() -> None:
    utc = _parse("2026-11-29 18:35:15,123 - train - ERROR - x")
    shanghai = _parse("2026-11-29 18:35:15,123 - train - ERROR - x", tz="Asia/Shanghai")
    fixed = _parse("2026-11-29 18:35:15,123 - train - ERROR - x", tz="+08:00")
    assert utc["ts_quality"] == "inferred_tz"
    assert _ns(utc) - _ns(shanghai) == 8 * 3600 * 10**9
    assert shanghai["ts"] == fixed["ts"]


def test_wrappers_are_peeled_and_kept() -> None:
    row = _parse(
        "[pod/llm-0-x7k2p/jax-tpu] 2025-09-28T08:02:30.467665884Z "
        "E1129 18:35:15.123456    1234 f.cc:1] wrapped"
    )
    assert (row["pod"], row["container"], row["grammar"], row["message"]) == (
        "llm-0-x7k2p",
        "jax-tpu",
        "absl",
        "wrapped",
    )
    assert row["ts_quality"] == "exact"
    assert _ns(row) == 1759046550467665884
    cri = _parse("2025-11-28T10:31:25.798804388+03:00 stderr F [rank3]: RuntimeError: x")
    assert (cri["stream"], cri["rank"], cri["message"]) == ("stderr", 3, "RuntimeError: x")
    assert _ns(cri) == 1764315085798804388


def test_multi_line_payload_keeps_every_line() -> None:
    row = _parse("E1129 18:35:15.123456 1 a.cc:1] first\n  second\nthird")
    assert row["grammar"] == "absl"
    assert row["message"] == "first\n  second\nthird"


def test_bgl_time_is_the_epoch_and_the_host_is_the_node() -> None:
    row = _parse(
        "1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 "
        "R02-M1-N0-C:J12-U11 RAS KERNEL INFO instruction cache parity error corrected"
    )
    # 1117838570 is 2005-06-03 22:42:50 UTC; the second stamp is local (UTC-7) and unused.
    assert _ns(row) == 1117838570 * 1_000_000_000
    assert row["ts_quality"] == "exact"
    assert row["host"] == "R02-M1-N0-C:J12-U11"


@pytest.mark.parametrize(
    ("line", "host", "rank", "message"),
    [
        (
            "(TaskRunner pid=467613) EJ0001: Failed to initialize the HCCP process.",
            None,
            None,
            "EJ0001: Failed to initialize the HCCP process.",
        ),
        (
            "(pid=6093, ip=10.128.0.47) cluster TPU setup start",
            "10.128.0.47",
            None,
            "cluster TPU setup start",
        ),
        (
            "(WorkerDict pid=904548, ip=10.0.0.3) [rank1]: RuntimeError: NCCL error",
            "10.0.0.3",
            1,
            "RuntimeError: NCCL error",
        ),
        ("(see above) not a process prefix", None, None, "(see above) not a process prefix"),
    ],
)
def test_ray_process_prefixes_are_peeled_and_name_the_node(
    line: str, host: str | None, rank: int | None, message: str
) -> None:
    row = _parse(line)
    assert (row["host"], row["rank"], row["message"]) == (host, rank, message)


def test_grammar_rank_group_falls_back_to_the_rank_prefix() -> None:
    grammar = Grammar(
        "probe", "probe", r"^\[(?P<lvl>ERROR)\] RankID:(?:-\d+|(?P<rank>\d+)) ", "none"
    )
    parsed = parse_lines(
        pl.Series(["[rank3]: [ERROR] RankID:-1 x", "[ERROR] RankID:5 y", "plain"]),
        anchor=dt.date(2026, 1, 1),
        grammars=[grammar],
    )
    assert parsed["rank"].to_list() == [3, 5, None]
