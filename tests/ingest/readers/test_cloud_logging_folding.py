"""Multi-line records in Cloud Logging exports (formats.md §1.5, §5.3 rule 5).

GKE makes every line a container writes its own LogEntry. The reader glues the entries of one
stream — (pod, container, logName) — back together in ``(timestamp, insertId)`` order when
they are within ~1 s of each other and satisfy the continuation rules of §5.3 rule 2, whatever
other streams' entries sit between them in the file. The entries below are built by hand;
what each test expects follows from those rules, not from the reader's code.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer.case.inputs import FileCounts, ReadOptions
from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.folding import mark_records
from analyzer.ingest.readers.cloud_logging import CloudLoggingReader
from analyzer.streams import Content, ExpansionBudget
from tests.conftest import Generated
from tests.helpers import ns, read_table

READER = CloudLoggingReader()
PROJECT = "projects/my-tpu-proj"
EXCEPTION = (
    "jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm."
)
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/app/train.py", line 240, in <module>',
    "    main()",
    EXCEPTION,
]


def stamp(seconds: float) -> str:
    """An RFC 3339 nanosecond timestamp ``seconds`` after 18:00:00."""
    whole = int(seconds)
    nanos = round((seconds - whole) * 1e9)
    return f"2026-11-29T18:{whole // 60:02d}:{whole % 60:02d}.{nanos:09d}Z"


def entry(
    insert_id: str,
    seconds: float,
    pod: str,
    text: str | None = None,
    *,
    log: str = "stderr",
    resource: str = "k8s_container",
    json_payload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A container LogEntry as a GCS sink writes it (textPayload with its newline)."""
    labels = {"project_id": "my-tpu-proj", "namespace_name": "default"}
    if resource == "k8s_container":
        labels |= {"pod_name": pod, "container_name": "jax-tpu"}
    else:
        labels |= {"node_name": pod}
    result: dict[str, Any] = {
        "insertId": insert_id,
        "logName": f"{PROJECT}/logs/{log}",
        "resource": {"type": resource, "labels": labels},
        "severity": "ERROR" if log == "stderr" else "INFO",
        "timestamp": stamp(seconds),
        "receiveTimestamp": stamp(seconds + 1.5),
    }
    if text is not None:
        result["textPayload"] = text + "\n"
    if json_payload is not None:
        result["jsonPayload"] = json_payload
    return result


def read(
    data: bytes, name: str = "stderr.jsonl", **options: Any
) -> tuple[pl.DataFrame, FileCounts, ReadContext]:
    ctx = ReadContext(name, ReadOptions(**options))
    frames = list(READER.read(Content(io.BytesIO(data), ExpansionBudget(), name), ctx))
    frame = pl.concat(frames) if frames else pl.DataFrame()
    return frame, ctx.counts, ctx


def jsonl(entries: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in entries)


def gcloud(entries: list[dict[str, Any]]) -> bytes:
    """``gcloud logging read --format=json``: an indented array (the caller orders it)."""
    return json.dumps(entries, indent=2).encode() + b"\n"


def balanced(counts: FileCounts, frame: pl.DataFrame, records: int) -> None:
    assert counts.records == records
    assert counts.rows == frame.height
    assert counts.records == counts.rows + counts.folded + counts.blank + counts.dropped
    assert counts.balanced()


def extra(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["extra"]) if row["extra"] else {}


def interleaved() -> list[dict[str, Any]]:
    """Two pods' tracebacks written line by line at the same moments, a third pod's line in
    the middle, and one more pod-a line 1.5 s after its traceback ended."""
    out = [entry("a-info", 10.0, "pod-a", "I1129 18:00:10.000000 1 train.py:1] step 1")]
    for i, line in enumerate(TRACEBACK):
        out.append(entry(f"a-{i}", 20.0 + i * 0.001, "pod-a", line))
        out.append(entry(f"b-{i}", 20.0005 + i * 0.001, "pod-b", line))
        if i == 1:
            out.append(entry("c-0", 20.0015, "pod-c", "    not part of anything"))
    out.append(entry("a-late", 20.003 + 1.5, "pod-a", "    printed later"))
    return out


# -- sink JSON lines -------------------------------------------------------------------------


def test_interleaved_tracebacks_fold_per_stream() -> None:
    entries = interleaved()
    frame, counts, ctx = read(jsonl(entries))
    assert ctx.issues == []
    line_of = {e["insertId"]: i + 1 for i, e in enumerate(entries)}
    rows = {row["insert_id"]: row for row in frame.iter_rows(named=True)}
    assert list(rows) == ["a-info", "a-0", "b-0", "c-0", "a-late"]  # file order
    for pod in ("a", "b"):
        row = rows[f"{pod}-0"]
        # The row is the header entry's: its line, offset, insertId and time ...
        assert row["line"] == line_of[f"{pod}-0"]
        assert row["pod"] == f"pod-{pod}"
        assert row["ts"].timestamp() == pytest.approx(ns(stamp(20.0)) / 1e9, abs=1e-3)
        # ... with every line of the traceback, the exception line last.
        assert row["message"] == "\n".join(TRACEBACK)
        assert extra(row)["lines"] == 4
        assert extra(row)["exception"] == EXCEPTION
        assert row["severity"] == "ERROR"
    assert rows["a-0"]["offset"] == len(jsonl(entries[:1]))
    # An indented line of another pod, between the two tracebacks' frames, stays alone.
    assert rows["c-0"]["message"] == "    not part of anything"
    # More than 1 s after the previous entry of its stream: a record of its own.
    assert rows["a-late"]["message"] == "    printed later"
    assert "lines" not in extra(rows["a-late"])
    balanced(counts, frame, len(entries))
    assert counts.folded == 6


def test_stream_order_is_timestamp_then_insert_id_not_file_order() -> None:
    """A sink file need not be sorted: the frames sit before the header in the file, and two
    entries with the same timestamp are ordered by insertId."""
    header = entry("k-0", 5.0, "pod-a", TRACEBACK[0])
    frames = [
        entry("k-2", 5.001, "pod-a", TRACEBACK[2]),
        entry("k-1", 5.001, "pod-a", TRACEBACK[1]),  # same stamp, smaller insertId
        entry("k-3", 5.002, "pod-a", TRACEBACK[3]),
    ]
    frame, counts, _ = read(jsonl([*frames, header]))
    assert frame.height == 1
    row = frame.row(0, named=True)
    assert row["insert_id"] == "k-0"
    assert row["line"] == 4
    assert row["message"] == "\n".join(TRACEBACK)
    balanced(counts, frame, 4)


def test_streams_are_pod_container_and_log_name() -> None:
    """stdout and stderr of one container are two streams."""
    entries = [
        entry("h", 1.0, "pod-a", TRACEBACK[0]),
        entry("o", 1.0005, "pod-a", "    on stdout", log="stdout"),
        entry("f", 1.001, "pod-a", TRACEBACK[1]),
    ]
    frame, counts, _ = read(jsonl(entries))
    assert frame["message"].to_list() == [TRACEBACK[0] + "\n" + TRACEBACK[1], "    on stdout"]
    balanced(counts, frame, 3)


def test_error_line_then_traceback_and_colon_blocks() -> None:
    """§5.3 rule 3: a traceback right after an absl E line attaches to it; rule 2: indented
    lines after a recognized line ending in ':' belong to it."""
    entries = [
        entry("e", 1.0, "pod-a", "E1129 18:00:01.000000 7 train.py:9] step failed"),
        *[entry(f"t{i}", 1.001 + i * 0.001, "pod-a", line) for i, line in enumerate(TRACEBACK)],
        entry(
            "s", 9.0, "pod-a", "E1129 18:00:09.000000 7 status.cc:1] === Source Location Trace: ==="
        ),
        entry("s1", 9.001, "pod-a", "    xla/service/hlo_pass.cc:123"),
        entry("s2", 9.002, "pod-a", "    xla/pjrt/pjrt_client.cc:45"),
    ]
    frame, counts, _ = read(jsonl(entries))
    assert frame["insert_id"].to_list() == ["e", "s"]
    first, second = frame.iter_rows(named=True)
    assert first["message"] == "\n".join(["step failed", *TRACEBACK])
    assert first["logger"] == "train.py:9"
    assert second["message"].splitlines()[1:] == [
        "    xla/service/hlo_pass.cc:123",
        "    xla/pjrt/pjrt_client.cc:45",
    ]
    balanced(counts, frame, len(entries))


def test_blank_entries() -> None:
    """An empty line inside a record belongs to it; one between records is counted blank."""
    entries = [
        entry("h", 1.0, "pod-a", TRACEBACK[0]),
        entry("f", 1.001, "pod-a", TRACEBACK[1]),
        entry("b1", 1.002, "pod-a", ""),
        entry("g", 1.003, "pod-a", TRACEBACK[2]),
        entry("x", 1.004, "pod-a", EXCEPTION),
        entry("b2", 1.005, "pod-a", ""),
        entry("i", 1.006, "pod-a", "I1129 18:00:01.006000 7 train.py:9] restarting"),
        entry("b3", 30.0, "pod-a", ""),
    ]
    frame, counts, _ = read(jsonl(entries))
    assert frame["insert_id"].to_list() == ["h", "i"]
    assert frame["message"][0] == "\n".join([*TRACEBACK[:2], "", *TRACEBACK[2:]])
    assert (counts.folded, counts.blank) == (4, 2)
    balanced(counts, frame, len(entries))


def test_record_caps_cut_long_records() -> None:
    entries = [entry("h", 1.0, "pod-a", TRACEBACK[0])]
    entries += [
        entry(f"f{i:02d}", 1.0 + (i + 1) * 1e-4, "pod-a", f"    frame {i}") for i in range(7)
    ]
    frame, counts, _ = read(jsonl(entries), max_record_lines=3)
    assert frame["insert_id"].to_list() == ["h", "f02", "f05"]
    assert [extra(r).get("continues_record") for r in frame.iter_rows(named=True)] == [
        None,
        True,
        True,
    ]
    assert frame["message"][2] == "    frame 5\n    frame 6"
    balanced(counts, frame, len(entries))


# -- what never folds --------------------------------------------------------------------


def test_events_audit_json_and_node_entries_never_fold() -> None:
    event = {
        "insertId": "ev",
        "logName": f"{PROJECT}/logs/events",
        "resource": {"type": "k8s_pod", "labels": {"pod_name": "pod-a", "namespace_name": "d"}},
        "severity": "WARNING",
        "timestamp": stamp(1.0005),
        "jsonPayload": {
            "kind": "Event",
            "reason": "BackOff",
            "message": "  Back-off restarting failed container",
            "involvedObject": {"kind": "Pod", "name": "pod-a", "namespace": "d"},
        },
    }
    audit = {
        "insertId": "au",
        "logName": f"{PROJECT}/logs/cloudaudit.googleapis.com%2Fsystem_event",
        "resource": {"type": "gce_instance", "labels": {"instance_id": "1"}},
        "severity": "INFO",
        "timestamp": stamp(1.0006),
        "protoPayload": {"methodName": "compute.instances.preempted"},
    }
    entries = [
        entry("h", 1.0, "pod-a", TRACEBACK[0]),
        event,
        audit,
        # Same pod and log as the traceback, but structured: never a continuation line.
        entry("js", 1.0007, "pod-a", json_payload={"message": '  File "x.py", line 1'}),
        entry("nd", 1.0008, "pod-a", "    node text", resource="k8s_node", log="kubelet"),
        entry("f", 1.001, "pod-a", TRACEBACK[1]),
        # An event reason after the traceback: jsonPayload, so not its exception line.
        entry("je", 1.002, "pod-a", json_payload={"message": "ValueError: bad"}),
    ]
    frame, counts, _ = read(jsonl(entries))
    assert frame["insert_id"].to_list() == ["h", "ev", "au", "js", "nd", "je"]
    assert frame["message"][0] == TRACEBACK[0] + "\n" + TRACEBACK[1]
    assert frame["message"][3] == '  File "x.py", line 1'
    assert frame["message"][4] == "    node text"
    assert counts.folded == 1
    balanced(counts, frame, len(entries))


def test_entries_without_a_valid_timestamp_never_fold() -> None:
    entries = [entry("h", 1.0, "pod-a", TRACEBACK[0]), entry("f", 1.001, "pod-a", TRACEBACK[1])]
    entries[1]["timestamp"] = "yesterday"
    frame, counts, ctx = read(jsonl(entries))
    assert frame.height == 2
    assert [i.reason[:24] for i in ctx.issues] == ["timestamp 'yesterday' is"]
    balanced(counts, frame, 2)


def test_torchrun_ranks_in_one_stream_are_demultiplexed() -> None:
    """§5.3 rule 5: processes writing to one container stream are told apart by their
    ``[rankN]:`` prefix before folding."""
    entries = []
    for i, line in enumerate(TRACEBACK[:3]):
        entries.append(entry(f"r0-{i}", 1.0 + i * 0.001, "pod-a", f"[rank0]: {line}"))
        entries.append(entry(f"r1-{i}", 1.0005 + i * 0.001, "pod-a", f"[rank1]: {line}"))
    frame, counts, _ = read(jsonl(entries))
    assert frame["insert_id"].to_list() == ["r0-0", "r1-0"]
    assert frame["worker"].to_list() == [0, 1]
    assert frame["message"].to_list() == ["\n".join(TRACEBACK[:3])] * 2
    balanced(counts, frame, len(entries))


# -- gcloud arrays and Logs Explorer CSV ----------------------------------------------------


def test_gcloud_array_newest_first_folds_the_same_way() -> None:
    entries = interleaved()
    newest_first = sorted(entries, key=lambda e: e["timestamp"], reverse=True)
    data = gcloud(newest_first)
    frame, counts, ctx = read(data, "gcloud/stderr.json")
    assert ctx.issues == []
    assert frame["reader"].unique().to_list() == ["cloud_logging.json_array"]
    rows = {row["insert_id"]: row for row in frame.iter_rows(named=True)}
    # File order (newest first) is kept; each folded row sits at its header element, the
    # oldest entry of its traceback, after the other lines in the file.
    assert frame["insert_id"].to_list() == ["a-late", "c-0", "b-0", "a-0", "a-info"]
    text = data.decode()
    for pod in ("a", "b"):
        row = rows[f"{pod}-0"]
        assert row["message"] == "\n".join(TRACEBACK)
        element = json.JSONDecoder().raw_decode(text, row["offset"])[0]
        assert element["insertId"] == f"{pod}-0"
        assert text[: row["offset"]].count("\n") + 1 == row["line"]
    assert rows["b-0"]["line"] > max(
        text[: data.index(f'"insertId": "{pod}-3"'.encode())].count("\n") + 1 for pod in "ab"
    )
    balanced(counts, frame, len(entries))
    assert counts.folded == 6


def test_explorer_csv_rows_fold() -> None:
    header = [
        "timestamp",
        "insertId",
        "logName",
        "resource.type",
        "resource.labels.pod_name",
        "resource.labels.container_name",
        "textPayload",
    ]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for i, line in enumerate(TRACEBACK):
        writer.writerow(
            [
                stamp(1 + i * 0.001),
                f"x{i}",
                f"{PROJECT}/logs/stderr",
                "k8s_container",
                "p",
                "c",
                line,
            ]
        )
    frame, counts, _ = read(out.getvalue().encode(), "explorer.csv")
    assert frame["message"].to_list() == ["\n".join(TRACEBACK)]
    assert frame["line"].to_list() == [2]
    balanced(counts, frame, 4)


# -- duplicates and chunks --------------------------------------------------------------------


def test_a_repeated_entry_is_not_folded_and_keeps_the_record_key() -> None:
    """An entry exported twice in one file: the copy is not folded into the record a second
    time; it stays a row with the de-duplication key of the row its first copy went into, so
    the case writer drops it as a duplicate of that row."""
    entries = [entry(f"t{i}", 1.0 + i * 0.001, "pod-a", line) for i, line in enumerate(TRACEBACK)]
    copy = dict(entries[2])
    frame, counts, _ = read(jsonl([*entries, copy]))
    assert frame["insert_id"].to_list() == ["t0", "t2"]
    assert frame["message"][0] == "\n".join(TRACEBACK)
    keys = frame["_dedup_key"].to_list()
    assert keys[0] == keys[1]
    balanced(counts, frame, 5)


def test_a_repeated_entry_before_its_record_row_moves_after_it(
    ingest_case: Callable[..., Path], tmp_path: Path
) -> None:
    """Newest first, the copy of a frame sits before the header element (the record's row):
    the copy's row follows the record's row, so the case keeps the record and drops the copy
    as its duplicate."""
    entries = [entry(f"t{i}", 1.0 + i * 0.001, "pod-a", line) for i, line in enumerate(TRACEBACK)]
    newest_first = entries[::-1]
    newest_first.insert(3, dict(entries[1]))  # ... t2, t1, copy of t1, t0
    data = gcloud(newest_first)
    frame, counts, _ = read(data, "gcloud/stderr.json")
    assert frame["insert_id"].to_list() == ["t0", "t1"]
    assert frame["message"][0] == "\n".join(TRACEBACK)
    assert frame["line"][0] > frame["line"][1]  # the copy's element is earlier in the file
    assert frame["_dedup_key"][0] == frame["_dedup_key"][1]
    balanced(counts, frame, 5)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "stderr.json").write_bytes(data)
    case = ingest_case(tmp_path / "in")
    rows = read_table(case, "rows")
    assert rows["message"].to_list() == ["\n".join(TRACEBACK)]
    duplicates = read_table(case, "duplicates")
    assert duplicates["insert_id"].to_list() == ["t1"]
    assert duplicates["kept_row_id"].to_list() == rows["row_id"].to_list()
    record = read_table(case, "files").row(0, named=True)
    assert (record["records"], record["rows"], record["folded"], record["duplicates"]) == (
        5,
        1,
        3,
        1,
    )


def test_chunk_boundaries_keep_every_entry() -> None:
    """Records are folded within a chunk: with tiny chunks a traceback may stay split, but
    every entry still ends up in exactly one row and the accounting holds."""
    entries = interleaved()
    data = jsonl(entries)
    for chunk_bytes in (64, 1500, 4000):
        frame, counts, _ = read(data, chunk_bytes=chunk_bytes)
        balanced(counts, frame, len(entries))
        lines = "\n".join(frame["message"].to_list()).split("\n")
        unprefixed = [e["textPayload"].rstrip("\n") for e in entries[1:]]
        assert sorted(lines) == sorted(["step 1", *unprefixed])


# -- through the case ------------------------------------------------------------------------


def test_case_accounting_and_duplicates_across_exports(
    ingest_case: Callable[..., Path], tmp_path: Path
) -> None:
    """A sink shard and a gcloud dump of the same entries: every file balances, and the
    gcloud dump's folded rows are dropped as duplicates of the sink's."""
    entries = interleaved()
    bundle = tmp_path / "bundle"
    (bundle / "gcs" / "stderr").mkdir(parents=True)
    (bundle / "gcloud").mkdir()
    (bundle / "gcs" / "stderr" / "18:00:00_18:59:59_S0.json").write_bytes(jsonl(entries))
    newest_first = sorted(entries, key=lambda e: e["timestamp"], reverse=True)
    (bundle / "gcloud" / "stderr.json").write_bytes(gcloud(newest_first))
    case = ingest_case(bundle)
    files = read_table(case, "files").filter(pl.col("records") > 0)
    assert files.height == 2
    for record in files.iter_rows(named=True):
        assert record["records"] == len(entries)
        assert record["records"] == (
            record["rows"]
            + record["folded"]
            + record["blank"]
            + record["quarantined"]
            + record["duplicates"]
        )
        assert record["folded"] == 6
    # Whichever file is read first keeps its rows; every row of the other is a duplicate.
    assert sorted(files["duplicates"].to_list()) == [0, 5]
    rows = read_table(case, "rows")
    assert rows.height == 5
    tracebacks = rows.filter(pl.col("message").str.starts_with(TRACEBACK[0]))
    assert tracebacks["pod"].sort().to_list() == ["pod-a", "pod-b"]
    assert tracebacks["message"].to_list() == ["\n".join(TRACEBACK)] * 2


@pytest.mark.parametrize(
    ("scenario", "needle"),
    [
        ("hbm-oom-compile", "RESOURCE_EXHAUSTED"),
        ("tpu-in-use", "Device or resource busy"),
    ],
)
def test_generated_first_error_is_a_folded_traceback(
    generated: Callable[[str, int], Generated], scenario: str, needle: str
) -> None:
    """In the generated GKE incidents the first error is a traceback written to stderr one
    line per entry: the cited row (path, line of the header entry) holds all of it."""
    run = generated(scenario, 8)
    files = read_table(run.case, "files")
    rows = read_table(run.case, "rows").join(files.select("file_id", "path"), on="file_id")
    for attempt in run.truth.attempts:
        cited = attempt.first_error
        row = rows.filter((pl.col("path") == cited.path) & (pl.col("line") == cited.line))
        assert row.height == 1
        message = row["message"].item()
        assert message.startswith(cited.text)
        assert message.splitlines()[0] == "Traceback (most recent call last):"
        assert needle in message
        assert json.loads(row["extra"].item())["lines"] > 3
    assert run.ingest.meta.counts.folded > 0
    for record in files.iter_rows(named=True):
        assert record["records"] == (
            record["rows"]
            + record["folded"]
            + record["blank"]
            + record["quarantined"]
            + record["duplicates"]
        )


# -- the fold_break hook of mark_records --------------------------------------------------------


def lines_frame(texts: list[str], breaks: list[bool] | None = None) -> pl.LazyFrame:
    """Unprefixed lines (no grammar matched), optionally with ``fold_break``."""
    columns: dict[str, Any] = {
        "text": texts,
        "message": texts,
        "grammar": [None] * len(texts),
        "level": [None] * len(texts),
        "cri_tag": [None] * len(texts),
    }
    if breaks is not None:
        columns["fold_break"] = breaks
    schema = {name: pl.Boolean if name == "fold_break" else pl.String for name in columns}
    return pl.LazyFrame(columns, schema=schema)


def records(frame: pl.LazyFrame) -> list[int | None]:
    marked = mark_records(frame, max_lines=500, max_bytes=1 << 18).collect()
    return marked["record"].to_list()


SAMPLE_LINES = [
    "Traceback (most recent call last):",
    '  File "a.py", line 1, in f',
    "",
    "    g()",
    "ValueError: x",
    "*** Begin stack trace ***",
    "frame 1",
    "",
    "plain",
    "  indented",
]


def test_fold_break_absent_or_false_changes_nothing() -> None:
    plain = mark_records(lines_frame(SAMPLE_LINES), max_lines=500, max_bytes=1 << 18).collect()
    flagged = mark_records(
        lines_frame(SAMPLE_LINES, [False] * len(SAMPLE_LINES)), max_lines=500, max_bytes=1 << 18
    ).collect()
    assert flagged.drop("fold_break").equals(plain)


def test_fold_break_starts_records_and_nothing_looks_across() -> None:
    # An indented line right after a break starts a record.
    assert records(lines_frame(["head:", "  a", "  b"], [True, True, False])) == [1, 2, 2]
    # A stack-trace block left open in one segment does not swallow the next segment.
    texts = ["*** Begin stack trace ***", "frame", "plain", "next"]
    assert records(lines_frame(texts)) == [1, 1, 1, 1]
    assert records(lines_frame(texts, [True, False, True, False])) == [1, 1, 2, 3]
    # A blank line starting a segment is blank, and the segment's lines do not reach back
    # over it to the record before (nor does a blank before the break join that record).
    texts = ["Traceback (most recent call last):", "", "", "  File x"]
    assert records(lines_frame(texts, [True, False, True, False])) == [1, None, None, 2]
    assert records(lines_frame(texts)) == [1, 1, 1, 1]


def test_coordination_status_entries_fold_within_a_stream_and_not_across_a_gap() -> None:
    """The unhealthy-tasks status arrives as one entry per line: the task names and the
    closing sentence join the fatal line; after a time gap they stand alone, and a record
    ending in ':' before a break does not pull the next segment's task names in."""
    fatal = (
        "F1129 18:00:05.000000 7 client.h:77] Terminating process because the JAX distributed "
        "service detected fatal errors. absl::Status: UNAVAILABLE: The following tasks are "
        "unhealthy (stopped sending heartbeats):"
    )
    tasks = ["/job:jax_worker/replica:0/task:1", "/job:jax_worker/replica:0/task:2"]
    crashed = "The tasks have crashed. Check the task logs for an earlier error, or scheduler " + (
        "events (e.g. preemption, eviction) to debug further."
    )
    body = [fatal, *tasks, crashed]
    entries = [entry(f"s{i}", 5.0 + i * 0.001, "pod-a", line) for i, line in enumerate(body)]
    entries += [entry(f"g{i}", 9.0 + i * 0.001, "pod-a", line) for i, line in enumerate(body)]
    entries.insert(4, entry("late", 7.0, "pod-a", tasks[0]))
    frame, counts, _ = read(jsonl(entries))
    assert frame["insert_id"].to_list() == ["s0", "late", "g0"]
    assert frame["message"].to_list()[1] == tasks[0]
    assert frame["message"].to_list()[2].splitlines()[1:] == [*tasks, crashed]
    balanced(counts, frame, len(entries))
    texts = ["Some timed out task names:", tasks[0]]
    assert records(lines_frame(texts, [True, True])) == [1, 2]
    assert records(lines_frame(texts, [True, False])) == [1, 1]
