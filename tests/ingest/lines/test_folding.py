from __future__ import annotations

import datetime as dt

import polars as pl

from analyzer.ingest.lines.folding import mark_records
from analyzer.ingest.lines.parse import parse_lines


def _records(
    lines: list[str], *, max_lines: int = 500, max_bytes: int = 1 << 20
) -> list[list[str]]:
    text = pl.Series(lines, dtype=pl.String)
    frame = parse_lines(text, anchor=dt.date(2026, 11, 29)).with_columns(text=text)
    marked = mark_records(frame.lazy(), max_lines=max_lines, max_bytes=max_bytes).collect()
    groups: dict[int, list[str]] = {}
    for record, line in marked.select("record", "text").iter_rows():
        if record is not None:
            groups.setdefault(record, []).append(line)
    return list(groups.values())


E = "E1129 18:35:15.123456 1 a.cc:1] step failed"
I = "I1129 18:35:16.000000 1 a.cc:2] next"


def test_traceback_after_error_line_is_one_record() -> None:
    lines = [
        E,
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 240, in <module>',
        "    main()",
        "jaxlib._jax.XlaRuntimeError: UNAVAILABLE: ...",
        I,
    ]
    assert _records(lines) == [lines[:5], [I]]


def test_standalone_traceback_and_chained_exceptions() -> None:
    lines = [
        I,
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in f',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in g',
        "RuntimeError: wrapped",
        "",
        "plain output",
    ]
    assert _records(lines) == [[I], lines[1:10], ["plain output"]]


def test_third_party_exception_names_close_a_traceback() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/app/checkpoint.py", line 88, in commit',
        "    blob.upload_from_file(handle)",
        "google.api_core.exceptions.ServiceUnavailable: 503 POST https://storage.googleapis.com",
        "Note: this line stands alone",
        I,
    ]
    assert _records(lines) == [lines[:4], [lines[4]], [I]]


def test_blank_lines_between_records_are_not_folded() -> None:
    marked = mark_records(
        parse_lines(pl.Series([I, "", "", E]), anchor=dt.date(2026, 1, 1))
        .with_columns(text=pl.Series([I, "", "", E]))
        .lazy(),
        max_lines=500,
        max_bytes=1 << 20,
    ).collect()
    assert marked["is_blank"].to_list() == [False, True, True, False]
    assert marked["record"].to_list()[1:3] == [None, None]


def test_stack_trace_block_and_klog_multiline_value() -> None:
    lines = [
        "F1129 18:35:15.123462 1 tpu.cc:9] fatal",
        "*** Begin stack trace ***",
        "tsl::CurrentStackTrace()",
        "xla::Foo()",
        "*** End stack trace ***",
        'I1129 18:36:10.001122 2218 prober.go:107] "Probe failed" output=<',
        "\tcat: can't open '/tmp/healthy': No such file or directory",
        " >",
        I,
    ]
    assert _records(lines) == [lines[:5], lines[5:8], [I]]


def test_caps_split_runaway_records() -> None:
    lines = [E] + [f"  frame {i}" for i in range(9)]
    records = _records(lines, max_lines=4)
    assert [len(r) for r in records] == [4, 4, 2]
    assert [line for record in records for line in record] == lines
    # 41 + 103 + 103 bytes fit in 250; the fourth line starts a new piece.
    by_bytes = _records([E] + ["  " + "x" * 100] * 4, max_bytes=250)
    assert [len(r) for r in by_bytes] == [3, 2]


# -- coordination-service statuses, gRPC details and the HBM table -------------------------

TASKS = [f"/job:jax_worker/replica:0/task:{i}" for i in range(4)]
CRASHED = (
    "The tasks have crashed. Check the task logs for an earlier error, or scheduler events "
    "(e.g. preemption, eviction) to debug further."
)
TERMINATING = (
    "F1129 18:35:15.123462 1 client.h:77] Terminating process because the JAX distributed "
    "service detected fatal errors. absl::Status: UNAVAILABLE: The following tasks are "
    "unhealthy (stopped sending heartbeats):"
)


def test_unhealthy_task_names_and_crashed_sentence_fold_into_the_status() -> None:
    lines = [I, TERMINATING, *TASKS[:3], CRASHED, I]
    assert _records(lines) == [[I], lines[1:6], [I]]


def test_task_names_after_an_unprefixed_colon_line_in_a_record() -> None:
    # The status closes a traceback (an unprefixed line ending in ':'), and absl's
    # "Example stragglers:" header lists the missing tasks.
    lines = [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 118, in main',
        "jaxlib._jax.XlaRuntimeError: UNAVAILABLE: The following tasks are unhealthy (stopped "
        "sending heartbeats):",
        *TASKS[:2],
        "",
        CRASHED,
        "I1129 18:35:15.000000 1 coordination_service.cc:1326] Example stragglers:",
        *TASKS[1:4],
        I,
    ]
    assert _records(lines) == [lines[:7], lines[7:11], [I]]


def test_task_names_and_crashed_sentence_near_misses() -> None:
    lines = [
        I,
        TASKS[0],  # after a line that does not end in ':': a record of its own
        TASKS[1],  # ... and the next bare task name joins it
        I,
        CRASHED,  # not after a task name
        TASKS[2] + " extra",  # not a bare task name
        "/job:jax_worker/task:2",  # not a task name either
        I,
    ]
    assert _records(lines) == [[I], lines[1:3], [I], [CRASHED], [lines[5]], [lines[6]], [I]]


def test_barrier_timeout_lists_fold() -> None:
    # The shape of a real DEADLINE_EXCEEDED barrier status closing a traceback (orbax).
    lines = [
        E,
        "Traceback (most recent call last):",
        '  File "/app/checkpoint.py", line 179, in _fn',
        "jaxlib._jax.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: "
        "0_async_write_complete.0.1. This usually happens because a task triggered the barrier "
        "too early or too slowly. Please look at the task logs (both timed out and first task) "
        "to debug further.",
        "# of tasks that reached the barrier: 2/4.",
        "The first task at the barrier: /job:jax_worker/replica:0/task:3. Some timed out task "
        "names:",
        *TASKS[:2],
        I,
    ]
    assert _records(lines) == [lines[:8], [I]]


def test_barrier_sentences_out_of_place_stand_alone() -> None:
    lines = [
        I,
        "# of tasks that reached the barrier: 2/4.",
        I,
        "The first task at the barrier: /job:jax_worker/replica:0/task:3.",
        I,
    ]
    assert _records(lines) == [[line] for line in lines]


GRPC = (
    "Additional GRPC error information from remote target coordination_service while calling "
    "/tensorflow.CoordinationService/PollForError:",
    ':UNKNOWN:Error received from peer  {grpc_message:"Socket closed", grpc_status:14}',
)


def test_grpc_details_fold_into_the_coordination_error() -> None:
    fatal = (
        "F0929 17:42:48.594200 1044529 client.h:77] Terminating process because the JAX "
        "distributed service detected fatal errors. absl::Status: UNAVAILABLE: Failed to send "
        "RPC to coordination service."
    )
    lines = [I, fatal, *GRPC, I]
    assert _records(lines) == [[I], lines[1:4], [I]]


def test_grpc_details_after_an_info_line_stand_alone() -> None:
    lines = [I, GRPC[0], I, GRPC[1], I]
    assert _records(lines) == [[line] for line in lines]


HBM = [
    "Total hbm usage >= 101.25G:",
    "    reserved        1.25G",
    "    program       100.00G",
    "    arguments          0B",
]


def test_hbm_table_folds_into_the_traceback() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 231, in main',
        "    state, metrics = train_step(state, batch)",
        "jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran "
        "out of memory in memory space hbm.",
        *HBM,
        I,
    ]
    assert _records(lines) == [lines[:-1], [I]]
    # An error line that mentions RESOURCE_EXHAUSTED, without a traceback.
    error = "E1129 18:35:15.123456 1 tpu.cc:1] RESOURCE_EXHAUSTED: Ran out of memory in hbm."
    assert _records([error, *HBM, I]) == [[error, *HBM], [I]]


def test_hbm_table_after_an_unrelated_line_stands_alone() -> None:
    assert _records([E, *HBM, I]) == [[E], HBM, [I]]
