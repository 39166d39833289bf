"""The ``text`` reader on realistic container/node logs (tests/samples/text).

Expected values come from ../shared/reference/formats.md §2.1 (klog header and file header),
§2.5 (CRI and kubectl wrappers), §2.7 (year inference), §5.1 (prefix grammars G1-G10), §5.3
(multi-line records) and §5.5 (a JAX worker dump), and from the sample files themselves.
"""

from __future__ import annotations

import functools
import json
import re
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

SAMPLES = Path(__file__).parents[2] / "samples" / "text"
READER = TextReader()
CRI_PARTIAL = re.compile(r"^\S+ (?:stdout|stderr) P (.*)$")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

#: When each sample was "copied off the cluster" (its mtime): shortly after its last line.
MTIME = {
    "jax_worker.log": "2026-11-30T09:00:00Z",
    "glog_with_header.log": "2027-01-01T08:00:00Z",
    "python_logging.log": "2026-11-30T09:00:00Z",
    "kubectl_prefix_timestamps.log": "2026-11-30T09:00:00Z",
    "cri.log": "2025-11-28T12:00:00Z",
    "ansi_vllm.log": "2025-08-21T12:00:00Z",
    "stack_trace.log": "2026-11-30T09:00:00Z",
}
NAMES = tuple(MTIME)

F_MESSAGE = (
    "Terminating process because the JAX distributed service detected fatal errors. This most "
    "likely indicates that another task died; see the other task logs for more details. Disable "
    "Python buffering, i.e. `python -u`, to be sure to see all the previous output. "
    "absl::Status: UNAVAILABLE: Failed to send RPC to coordination service. Either the leader "
    "task was preempted/died/restarted unexpectedly or this task is experiencing network issues."
)
XLA_ERROR = "jaxlib._jax.XlaRuntimeError: UNAVAILABLE: Failed to send RPC to coordination service."


# -- helpers ---------------------------------------------------------------------------------


def lines_of(name: str) -> list[str]:
    return (SAMPLES / name).read_text().split("\n")[:-1]


@functools.cache
def _read(
    name: str, chunk_bytes: int | None = None, mtime: str | None = None, tz: str | None = None
) -> tuple[pl.DataFrame, FileCounts, list[Issue]]:
    options = ReadOptions(tz=tz) if chunk_bytes is None else ReadOptions(chunk_bytes=chunk_bytes)
    when = ns(mtime or MTIME[name]) / 1e9
    ctx = ReadContext(f"text/{name}", options, mtime=when)
    with (SAMPLES / name).open("rb") as raw:
        frames = list(READER.read(Content(raw, ExpansionBudget(), ctx.path), ctx))
    frame = pl.concat(frames, how="vertical") if frames else pl.DataFrame()
    return frame, ctx.counts, ctx.issues


def read(name: str, chunk_bytes: int | None = None) -> pl.DataFrame:
    return _read(name, chunk_bytes)[0]


def rows_of(frame: pl.DataFrame) -> dict[int, dict[str, Any]]:
    """Canonical rows (schema applied) keyed by line, ``extra`` parsed, ``ts`` as ns."""
    numbered = frame.with_columns(
        row_id=pl.int_range(pl.len(), dtype=pl.Int64), file_id=pl.lit(0, dtype=pl.Int32)
    )
    canonical = pl.from_arrow(conform(numbered))
    assert isinstance(canonical, pl.DataFrame)
    out: dict[int, dict[str, Any]] = {}
    for row in canonical.with_columns(ts_ns=pl.col("ts").dt.epoch("ns")).iter_rows(named=True):
        row["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        assert row["line"] not in out
        out[row["line"]] = row
    return out


def rows(name: str) -> dict[int, dict[str, Any]]:
    return rows_of(read(name))


def folded(name: str, first: int, last: int, head: str) -> str:
    """The message of a record: ``head`` then file lines ``first..last`` (1-based)."""
    return "\n".join([head, *lines_of(name)[first - 1 : last]])


# -- sniffing and reader choice ------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_sniff_recognizes_text_logs(name: str) -> None:
    head = (SAMPLES / name).read_bytes()[: 64 << 10]
    assert READER.sniff(head, f"text/{name}") > 0.2
    assert CloudLoggingReader().sniff(head, f"text/{name}") == 0.0
    choice = choose_reader(head, f"text/{name}")
    assert choice is not None
    # A klog file of the kubelet (Go sources) belongs to the kubelet reader.
    assert choice.reader.name == ("kubelet" if name == "glog_with_header.log" else "text")
    assert choice.recognized


# -- nothing lost, provenance, chunking ----------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_line_is_accounted_for(name: str) -> None:
    frame, tally, issues = _read(name)
    data = (SAMPLES / name).read_bytes()
    assert issues == []
    assert tally.records == data.count(b"\n") == len(lines_of(name))
    assert tally.records == tally.rows + tally.folded + tally.blank + tally.dropped
    assert tally.rows == frame.height
    assert tally.dropped == tally.duplicates == tally.repaired == 0


@pytest.mark.parametrize("name", NAMES)
def test_rows_lead_back_to_their_line(name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    lines = lines_of(name)
    frame = read(name)
    assert frame["line"].is_sorted() and frame["offset"].is_sorted()
    for row in frame.iter_rows(named=True):
        offset, line = row["offset"], row["line"]
        assert data[:offset].count(b"\n") + 1 == line
        assert offset == 0 or data[offset - 1 : offset] == b"\n"
        first = row["message"].split("\n", 1)[0]
        raw = ANSI.sub("", lines[line - 1])
        partial = CRI_PARTIAL.match(raw)
        if partial:  # a CRI partial line: the row's text goes on with the next line
            assert first.startswith(partial.group(1)), (line, first)
        else:
            assert first in raw, (line, first)


@pytest.mark.parametrize("chunk_bytes", [64, 257])
@pytest.mark.parametrize("name", NAMES)
def test_chunk_size_does_not_change_rows(name: str, chunk_bytes: int) -> None:
    small, tally, issues = _read(name, chunk_bytes)
    assert issues == []
    assert small.select("line", "message").rows() == read(name).select("line", "message").rows()
    assert small.equals(read(name))
    assert tally == _read(name)[1]


def test_year_anchor_does_not_depend_on_chunk_size() -> None:
    """§2.7: the year of MMDD lines comes from the file's first fully dated line (here the
    absl pre-init epoch on line 2), however the file is cut into chunks. The file's mtime (a
    copy made half a year later) must not win just because line 2 is in another chunk."""
    late = "2027-06-01T00:00:00Z"
    whole = rows_of(_read("jax_worker.log", None, late)[0])
    assert whole[4]["ts_ns"] == ns("2026-11-29T18:20:05.512771Z")
    cut = rows_of(_read("jax_worker.log", 64, late)[0])
    assert cut[4]["ts_ns"] == ns("2026-11-29T18:20:05.512771Z")


@pytest.mark.parametrize("name", NAMES)
def test_rows_conform_to_the_canonical_schema(name: str) -> None:
    got = rows(name)
    assert {r["source"] for r in got.values()} == {"text"}
    for row in got.values():
        assert row["severity"] is not None
        assert (row["ts"] is None) == (row["ts_quality"] == "missing")
        assert "\x1b" not in row["message"]
        assert not row["message"].endswith("\n")


# -- JAX worker dump (formats.md §5.5) -----------------------------------------------------


def test_jax_worker_rows() -> None:
    got = rows("jax_worker.log")
    assert sorted(got) == [1, 2, 3, 4, 5, 6, 7, 8]
    expected = {
        # line: (ts, ts_quality, severity, logger, reader)
        1: (None, "missing", "DEFAULT", None, "text.plain"),
        2: ("2026-11-29T18:20:01.118342Z", "exact", "INFO", "tpu_client.cc:55", "text.absl"),
        3: ("2026-11-29T18:20:02.250117Z", "exact", "ERROR", "tpu_hal.cc:212", "text.absl"),
        4: ("2026-11-29T18:20:05.512771Z", "inferred_year", "INFO", "train.py:211", "text.absl"),
        5: ("2026-11-29T18:20:07.894402Z", "inferred_year", "INFO", "train.py:211", "text.absl"),
        6: (
            "2026-11-29T18:35:15.101020Z",
            "inferred_tz",
            "ERROR",
            "external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:1170",
            "text.absl",
        ),
        7: (
            "2026-11-29T18:35:15.123456Z",
            "inferred_year",
            "ERROR",
            "coordination_service_agent.cc:332",
            "text.absl",
        ),
        8: ("2026-11-29T18:35:15.123462Z", "inferred_year", "CRITICAL", "client.h:77", "text.absl"),
    }
    for line, (ts, quality, severity, logger, reader) in expected.items():
        row = got[line]
        assert row["ts_ns"] == (ns(ts) if ts else None), line
        assert (row["ts_quality"], row["severity"], row["logger"], row["reader"]) == (
            quality,
            severity,
            logger,
            reader,
        ), line
    assert got[2]["ts_ns"] == 1795976401118342000  # I0000 00:00:1795976401.118342
    assert got[2]["extra"]["tid"] == "1234"
    assert got[4]["extra"]["tid"] == "140231558416192"
    assert "tid" not in got[6]["extra"]
    assert got[1]["message"] == (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
    )
    assert got[7]["message"] == (
        "Polled an error from coordination service (this can be an error from this or another "
        "task)."
    )


def test_jax_worker_traceback_folds_into_the_fatal_line() -> None:
    row = rows("jax_worker.log")[8]
    assert row["message"] == folded("jax_worker.log", 9, 14, F_MESSAGE)
    assert row["extra"]["lines"] == 7
    assert row["extra"]["exception"] == XLA_ERROR
    tally = _read("jax_worker.log")[1]
    assert (tally.records, tally.rows, tally.folded, tally.blank) == (14, 8, 6, 0)


def test_local_stamps_follow_the_tz_option() -> None:
    """``--tz``: zone-less stamps (MMDD, tsl) shift; the absl epoch form is UTC already."""
    got = rows_of(_read("jax_worker.log", None, None, "+04:00")[0])
    assert got[2]["ts_ns"] == ns("2026-11-29T18:20:01.118342Z")
    assert got[4]["ts_ns"] == ns("2026-11-29T18:20:05.512771+04:00")
    assert got[6]["ts_ns"] == ns("2026-11-29T18:35:15.101020+04:00")


# -- klog file with its header (formats.md §2.1, §2.7) -------------------------------------


def test_glog_header_gives_the_year_across_new_year() -> None:
    got = rows("glog_with_header.log")
    assert sorted(got) == [1, 2, 3, 4, 5, 6, 7, 10, 11]
    for line in (1, 2, 3, 4):
        assert got[line]["message"] == lines_of("glog_with_header.log")[line - 1]
    expected = {
        5: ("2026-12-31T23:58:02.104512Z", "INFO", "server.go:487"),
        6: ("2026-12-31T23:59:58.104512Z", "INFO", "eviction_manager.go:374"),
        7: ("2026-12-31T23:59:59.900011Z", "INFO", "prober.go:107"),
        10: ("2027-01-01T00:00:01.000152Z", "WARNING", "kuberuntime_container.go:809"),
        11: ("2027-01-01T00:00:34.771003Z", "ERROR", "kubelet_node_status.go:549"),
    }
    for line, (ts, severity, logger) in expected.items():
        row = got[line]
        assert row["ts_ns"] == ns(ts), line
        assert (row["ts_quality"], row["severity"], row["logger"]) == (
            "inferred_year",
            severity,
            logger,
        ), line
        assert row["extra"]["tid"] == "2218"


def test_glog_header_beats_a_later_mtime() -> None:
    got = rows_of(_read("glog_with_header.log", None, "2028-05-01T00:00:00Z")[0])
    assert got[5]["ts_ns"] == ns("2026-12-31T23:58:02.104512Z")
    assert got[10]["ts_ns"] == ns("2027-01-01T00:00:01.000152Z")


def test_glog_multiline_klog_value_is_one_record() -> None:
    row = rows("glog_with_header.log")[7]
    assert row["message"].startswith('"Probe failed" probeType="Liveness"')
    assert row["message"].endswith(
        "output=<\n\tcat: can't open '/tmp/healthy': No such file or directory\n >"
    )
    assert row["extra"]["lines"] == 3


# -- Python logging (G5, G6, G7) and a chained traceback -----------------------------------


def test_python_logging_rows() -> None:
    got = rows("python_logging.log")
    assert sorted(got) == [1, 2, 3, 4, 5, 6, 21]
    jax_debug = ns("2026-11-29T18:20:00.142Z")
    asctime = ns("2026-11-29T18:35:15.123Z")
    expected = {
        # line: (severity, logger, ts, ts_quality, reader)
        1: ("DEBUG", "google_cloud_mldiagnostics.core.global_manager", None, "missing"),
        2: ("INFO", "jax._src.xla_bridge:889", jax_debug, "inferred_tz"),
        3: ("INFO", "absl", jax_debug, "inherited"),
        4: ("ERROR", "train", asctime, "inferred_tz"),
        5: ("WARNING", "google_cloud_mldiagnostics.core.global_manager", asctime, "inherited"),
        6: ("ERROR", "root", asctime, "inherited"),
        21: ("INFO", "google_cloud_mldiagnostics", ns("2026-11-29T18:35:16.001Z"), "inferred_tz"),
    }
    for line, (severity, logger, ts, quality) in expected.items():
        row = got[line]
        assert (row["severity"], row["logger"], row["ts_ns"], row["ts_quality"]) == (
            severity,
            logger,
            ts,
            quality,
        ), line
        assert row["reader"] == "text.python"
    assert got[1]["message"].startswith("current run details: {'name': 'projects/my-gcp-project")
    assert got[2]["message"].startswith("Unable to initialize backend 'cuda'")
    assert got[4]["message"] == "step 1200 failed"
    assert got[21]["message"] == "Diagon SDK graceful shutdown complete due to SIGTERM. Exiting."


def test_python_chained_exception_is_one_record() -> None:
    row = rows("python_logging.log")[6]
    head = "Generation error for product row_0: batch could not be decoded"
    assert row["message"] == folded("python_logging.log", 7, 20, head)
    assert (
        "\n\nDuring handling of the above exception, another exception occurred:\n\n"
        in (row["message"])
    )
    assert row["extra"]["lines"] == 15
    assert row["extra"]["exception"] == "RuntimeError: batch 17 could not be decoded"
    tally = _read("python_logging.log")[1]
    assert (tally.records, tally.rows, tally.folded, tally.blank) == (21, 7, 14, 0)


# -- kubectl logs --prefix --timestamps (G10) ----------------------------------------------


def test_kubectl_prefix_gives_pod_container_and_exact_time() -> None:
    got = rows("kubectl_prefix_timestamps.log")
    assert sorted(got) == [1, 2, 3, 4, 5, 6, 11]
    a, b = "llm-pretrain-slice-0-0-a8c2d", "llm-pretrain-slice-1-3-x7k2p"
    expected = {
        # line: (pod, container, ts, payload_ts, severity)
        1: (a, "jax-tpu", "2026-11-29T18:20:01.118904117Z", None, "DEFAULT"),
        2: (a, "jax-tpu", "2026-11-29T18:20:01.119211000Z", "2026-11-29T18:20:01.118342Z", "INFO"),
        3: (b, "jax-tpu", "2026-11-29T18:20:05.513002Z", "2026-11-29T18:20:05.512771Z", "INFO"),
        4: (a, "jax-tpu", "2026-11-29T18:35:15.101422Z", "2026-11-29T18:35:15.101020Z", "ERROR"),
        5: (b, "jax-tpu", "2026-11-29T18:35:15.123891042Z", "2026-11-29T18:35:15.123456Z", "ERROR"),
        6: (b, "jax-tpu", "2026-11-29T18:35:15.124019Z", "2026-11-29T18:35:15.123462Z", "CRITICAL"),
        11: (a, "metrics-sidecar", "2026-11-29T18:35:16Z", None, "DEFAULT"),
    }
    for line, (pod, container, ts, payload_ts, severity) in expected.items():
        row = got[line]
        assert (row["pod"], row["container"], row["severity"]) == (pod, container, severity)
        assert row["ts_ns"] == ns(ts), line
        assert row["ts_quality"] == "exact"
        got_payload = row["extra"].get("payload_ts")
        assert (ns(got_payload) if got_payload else None) == (
            ns(payload_ts) if payload_ts else None
        ), line
    assert got[5]["message"] == (
        "Polled an error from coordination service (this can be an error from this or another "
        "task)."
    )
    assert got[11]["message"] == "exporter: scrape of localhost:8431 failed, retrying"
    assert got[6]["extra"]["lines"] == 5
    assert got[6]["extra"]["exception"] == XLA_ERROR


def test_kubectl_folded_lines_lose_their_wrappers() -> None:
    """A continuation line's ``[pod/…] <timestamp>`` wrapper is peeled like the header's
    (formats.md §5.1 G10 "strip, record, then re-run"; §0.1 message = prefix stripped)."""
    row = rows("kubectl_prefix_timestamps.log")[6]
    assert row["message"] == (
        "Terminating process because the JAX distributed service detected fatal errors.\n"
        "Traceback (most recent call last):\n"
        '  File "/app/train.py", line 240, in <module>\n'
        "    main()\n" + XLA_ERROR
    )


# -- CRI container log files (formats.md §2.5) ---------------------------------------------


def test_cri_timestamps_and_streams() -> None:
    got = rows("cri.log")
    one, two, last = got[1], got[2], got[9]
    assert one["ts_ns"] == ns("2025-11-28T10:31:25.798804388+03:00") == 1764315085798804388
    assert (one["ts_quality"], one["message"], one["extra"]["stream"]) == (
        "exact",
        "This pod will fail",
        "stdout",
    )
    assert one["severity"] == "DEFAULT"
    assert two["ts_ns"] == ns("2025-11-28T10:31:25.801112004+03:00")
    assert (two["severity"], two["logger"], two["extra"]["stream"]) == (
        "ERROR",
        "main.cc:42",
        "stderr",
    )
    assert ns(two["extra"]["payload_ts"]) == ns("2025-11-28T07:31:25.800950Z")
    assert two["extra"]["lines"] == 5
    assert (
        two["extra"]["exception"] == "PermissionError: [Errno 13] Permission denied: '/ckpt/probe'"
    )
    assert last["ts_ns"] == ns("2025-11-28T07:31:27Z")
    assert last["message"] == "exiting with code 1"


def test_cri_folded_lines_lose_their_wrappers() -> None:
    row = rows("cri.log")[2]
    assert row["message"] == (
        "Checkpoint directory /ckpt is not writable\n"
        "Traceback (most recent call last):\n"
        '  File "/app/main.py", line 12, in <module>\n'
        '    open("/ckpt/probe", "w")\n'
        "PermissionError: [Errno 13] Permission denied: '/ckpt/probe'"
    )


def test_cri_partial_line_joins_the_next_one() -> None:
    """``P`` marks a partial line to be concatenated with the next record of the stream."""
    got = rows("cri.log")
    assert 8 not in got
    assert got[7]["message"] == "progress 50% of the checkpoint copy, then the copy stopped"
    assert got[7]["ts_ns"] == ns("2025-11-28T10:31:26.000000001+03:00")


# -- ANSI-coloured vLLM output (G8) --------------------------------------------------------


def test_ansi_vllm_rows() -> None:
    got = rows("ansi_vllm.log")
    assert sorted(got) == [1, 2, 3, 4, 5, 6, 7, 11]
    expected = {
        # line: (severity, logger, ts)
        1: ("INFO", "core.py:75", "2025-08-21T08:26:01Z"),
        2: ("INFO", "tpu_worker.py:120", "2025-08-21T08:26:05Z"),
        3: ("WARNING", "tpu_model_runner.py:1425", "2025-08-21T08:26:19Z"),
        4: ("ERROR", "core.py:632", "2025-08-21T08:26:21Z"),
        5: ("ERROR", "core.py:632", "2025-08-21T08:26:21Z"),
        11: ("INFO", "launcher.py:80", "2025-08-21T08:26:22Z"),
    }
    for line, (severity, logger, ts) in expected.items():
        row = got[line]
        assert (row["severity"], row["logger"], row["ts_ns"]) == (severity, logger, ns(ts)), line
        assert (row["ts_quality"], row["reader"]) == ("inferred_year", "text.vllm"), line
    assert got[1]["message"] == (
        "Initializing a V1 LLM engine (v0.10.1) with config: model='meta-llama/Llama-3.1-8B'"
    )
    assert got[3]["message"] == "Detected HBM usage above 90%: 30.1 GiB of 31.2 GiB"
    assert got[6]["message"] == "Process EngineCore_DP0:"
    assert got[6]["ts_quality"] == "inherited"
    traceback = got[7]
    assert traceback["message"] == "\n".join(lines_of("ansi_vllm.log")[6:10])
    assert traceback["severity"] == "ERROR"
    assert traceback["extra"]["lines"] == 4
    assert traceback["extra"]["exception"].startswith("RuntimeError: Unable to initialize backend")
    for row in got.values():
        assert "\x1b" not in row["message"]
        assert row["logger"] is None or "\x1b" not in row["logger"]


# -- libtpu fatal line with a stack trace block ---------------------------------------------


def test_stack_trace_block_folds_into_the_fatal_line() -> None:
    got = rows("stack_trace.log")
    assert sorted(got) == [1, 2, 3, 4, 15, 16]
    fatal = got[4]
    head = (
        "Check failed: status.ok() INTERNAL: Accelerator device halted prematurely, perhaps due "
        "to an on-device check-failure. Node 0 halted unexpectedly at tag:pc "
        "TensorCoreSequencer:1:0x1f4"
    )
    assert fatal["message"] == folded("stack_trace.log", 5, 14, head)
    assert "\n\n\t_PyObject_MakeTpCall\n" in fatal["message"]  # the blank frame line is kept
    assert fatal["message"].endswith("*** End stack trace ***")
    assert (fatal["severity"], fatal["logger"]) == ("CRITICAL", "tpu_program.cc:512")
    assert fatal["ts_ns"] == ns("2026-11-29T18:35:20.000123Z")
    assert fatal["extra"]["lines"] == 11
    assert "exception" not in fatal["extra"]
    assert got[15]["message"] == "Closing TPU device /dev/accel0"
    assert got[15]["extra"]["tid"] == "5678"
    tally = _read("stack_trace.log")[1]
    assert (tally.records, tally.rows, tally.folded, tally.blank) == (16, 6, 10, 0)
