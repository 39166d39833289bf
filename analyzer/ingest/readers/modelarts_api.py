"""The ``modelarts_api`` reader: ModelArts training-job API responses saved as JSON (formats.md
§3.1-§3.3).

ShowTrainingJobDetails, ListTrainingJobEvents and ListTrainingJobStages, one row per object
that says something happened: the job, each task status, each running record and each
recover record inside it, each event, each stage. The worker logs of the same jobs are read by
:mod:`analyzer.ingest.readers.modelarts_log`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import polars as pl

from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.blocks import BOM
from analyzer.ingest.columns.timestamps import NS, check_tz, local_time, rfc3339
from analyzer.ingest.json.document import DocumentError, LocatedDict, LocatedList, load
from analyzer.ingest.readers.modelarts_names import error_code_in, job_id_in_path, worker_of_task
from analyzer.schema import severity_expr
from analyzer.streams import Content

#: Larger API responses are not read (they are pages of at most a few MB).
_MAX_DOCUMENT: Final = 256 << 20
_FAILED_PHASES: Final = frozenset({"Failed", "Abnormal"})
_FAILED_SECONDARY: Final = frozenset({"Failed", "CreateFailed", "TerminatedFailed"})
_TIME_TEXT: Final = "%Y-%m-%dT%H:%M:%S%.f"


@dataclass
class _Row:
    """One API row before it becomes a frame row.

    ``node`` is the object the row cites; ``ts_ns`` a time already in nanoseconds, ``when`` a
    raw API time (ISO text or an epoch number, parsed with all the others at once), and
    ``inherited_ns`` the time of the record it belongs to, for rows with no time of their own.
    """

    node: LocatedDict
    kind: str
    message: str
    severity: str
    ts_ns: int | None = None
    when: object = None
    inherited_ns: int | None = None
    worker: int | None = None
    workload: str | None = None
    attempt: int | None = None
    logger: str | None = None
    extra: dict[str, Any] | None = None


class ModelArtsApiReader:
    """ModelArts training-job API responses saved as JSON (see module docstring).

    One record is one JSON object that becomes a row: the job object itself, each
    ``task_statuses[]`` element, each ``running_records[]`` element and each
    ``recover_records[]`` element inside it (ShowTrainingJobDetails), each ``events[]``
    element (ListTrainingJobEvents), each ``stages[]`` element of each running record
    (ListTrainingJobStages). An element that is not an object is a dropped record; a
    document that is not valid JSON (or not one of these responses) is one dropped record.

    Rows name tasks (``worker`` = N of ``worker-N``, ``workload`` = job id), never a host:
    the API does not say which node ran a task, and the case's host map resolves a job's
    worker to the node its worker logs name.
    """

    name: ClassVar[str] = "modelarts_api"
    source: ClassVar[str] = "modelarts"

    def sniff(self, head: bytes, path: str) -> float:
        """High for the three response shapes (by their keys), 0 for anything else."""
        body = head.removeprefix(BOM).lstrip()
        if not body.startswith(b"{"):
            return 0.0
        window = body[:SNIFF_BYTES]

        def has(key: bytes) -> bool:
            return b'"' + key + b'"' in window

        if has(b"logName") or has(b"insertId") or has(b"log_name"):
            return 0.0  # a Cloud Logging entry
        job_keys = has(b"task_statuses") or has(b"running_records") or has(b"secondary_phase")
        if has(b"metadata") and has(b"status") and job_keys:
            return 0.95
        if has(b"metadata") and has(b"workspace_id") and (has(b"algorithm") or has(b"spec")):
            return 0.9  # a job without a status yet
        if has(b"events") and has(b"level") and has(b"source"):
            return 0.95
        if has(b"running_records") and has(b"stages"):
            return 0.95
        return 0.0

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Parse the whole document (with positions) and emit one row per record."""
        data = content.read_at_most(_MAX_DOCUMENT + 1)
        if len(data) > _MAX_DOCUMENT:
            ctx.counts.records += 1
            ctx.drop(1, 0, f"JSON document larger than {_MAX_DOCUMENT:,} bytes; not read")
            return
        try:
            document = load(data)
        except DocumentError as exc:
            ctx.counts.records += 1
            ctx.drop(exc.line, exc.offset, f"not valid JSON: {exc}", _line_at(data, exc.offset))
            return
        if not isinstance(document, LocatedDict):
            ctx.counts.records += 1
            ctx.drop(1, 0, "JSON document is not an object (ModelArts API response)", data[:4096])
            return
        job_id = job_id_in_path(ctx.path)
        rows: list[_Row] = []
        if _is_job(document):
            rows = _job_rows(document, ctx, job_id)
        elif isinstance(document.get("events"), list):
            rows = _event_rows(document, ctx, job_id)
        elif isinstance(document.get("running_records"), list):
            rows = _stage_rows(document, ctx, job_id)
        else:
            ctx.counts.records += 1
            ctx.drop(
                document.line,
                document.offset,
                "JSON document is not a ModelArts training-job, events or stages response",
                data[:4096],
            )
            return
        ctx.counts.records += len(rows)
        ctx.counts.rows += len(rows)
        if rows:
            rows.sort(key=lambda row: row.node.offset)
            yield _frame(rows, check_tz(ctx.options.tz))


def _is_job(document: LocatedDict) -> bool:
    status = document.get("status")
    if isinstance(document.get("metadata"), dict):
        return True
    return isinstance(status, dict) and ("phase" in status or "task_statuses" in status)


def _line_at(data: bytes, offset: int) -> bytes:
    """The input line holding ``offset`` (for the quarantine entry)."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    return data[start : end if end >= 0 else len(data)][:4096]


def _str(value: object) -> str | None:
    """A non-empty string field, or ``None``."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _int(value: object) -> int | None:
    """An integer field that fits 64 bits, or ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _fits(value, 64)
    if isinstance(value, float) and value.is_integer():
        return _fits(int(value), 64)
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,19}", value.strip()):
        return _fits(int(value), 64)
    return None


def _fits(value: int | None, bits: int) -> int | None:
    """``value`` when a signed integer column of ``bits`` bits can hold it, else ``None``."""
    limit = 1 << (bits - 1)
    return value if value is not None and -limit <= value < limit else None


def _epoch_ns(value: object) -> int | None:
    """Nanoseconds of an epoch number (or a string of digits) whose unit is told by its size.

    The APIs mix seconds (running records) and milliseconds (create_time, duration) and do
    not always say which (formats.md §3.6); times near the present are unambiguous.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        match = re.fullmatch(r"(\d{1,19})(?:\.(\d+))?", value.strip())
        if match is None:
            return None
        number = int(match.group(1))
        scale = _unit(number)
        fraction = match.group(2) or ""
        return number * scale + int((fraction + "0" * 9)[:9]) * scale // 1_000_000_000
    if isinstance(value, int):
        return value * _unit(value) if value >= 0 else None
    if isinstance(value, float) and 0 <= value < 2.0**63:  # not NaN nor infinite
        return round(value * _unit(int(value)))
    return None


def _unit(number: int) -> int:
    """Nanoseconds per unit of an epoch count of this size (ns, µs, ms or s)."""
    for limit, scale in ((10**17, 1), (10**14, 1_000), (10**11, 1_000_000)):
        if number >= limit:
            return scale
    return 1_000_000_000


def _drop_element(ctx: ReadContext, parent: LocatedList, what: str) -> None:
    """An array element that is not an object: no row; cited at its array."""
    ctx.counts.records += 1
    ctx.drop(parent.line, parent.offset, f"{what} element is not a JSON object")


def _objects(value: object, ctx: ReadContext, what: str) -> Iterator[tuple[int, LocatedDict]]:
    """The object elements of an array field (others are dropped records)."""
    if not isinstance(value, LocatedList):
        return
    for index, item in enumerate(value):
        if isinstance(item, LocatedDict):
            yield index, item
        else:
            _drop_element(ctx, value, what)


def _job_rows(document: LocatedDict, ctx: ReadContext, path_job: str | None) -> list[_Row]:
    """ShowTrainingJobDetails: the job, its task statuses, running and recover records."""
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    status = document.get("status")
    status = status if isinstance(status, dict) else {}
    job_id = _str(metadata.get("id")) or path_job
    name = _str(metadata.get("name"))
    phase, secondary = _str(status.get("phase")), _str(status.get("secondary_phase"))
    start_ns = _epoch_ns(status.get("start_time"))
    duration_ms = _int(status.get("duration"))
    created_ns = _epoch_ns(metadata.get("create_time"))
    # The job row reports the job's phase, so it is stamped when that phase was reached:
    # the end (start + duration) where known, else the start, else the creation.
    end_ns = start_ns + duration_ms * 1_000_000 if start_ns and duration_ms is not None else None
    job_ns = end_ns or start_ns or created_ns

    title = f"Training job {name}" if name else "Training job"
    if job_id:
        title += f" ({job_id})" if name else f" {job_id}"
    if not status:
        sentence = f"{title} has no status in this document"
    else:
        sentence = f"{title} phase {phase or 'unknown'}"
        if secondary:
            sentence += f" (secondary phase {secondary})"
        if duration_ms is not None:
            sentence += f" after {duration_ms / 1000:g} s"
    own = [
        f"{key}: {status[key]}"
        for key in ("message", "reason", "failure_reason", "error_msg")
        if _str(status.get(key))
    ]
    failed = phase in _FAILED_PHASES or secondary in _FAILED_SECONDARY
    job_extra: dict[str, Any] = {
        "job_id": job_id,
        "kind": document.get("kind"),
        "metadata": dict(metadata) or None,
        "status": {k: v for k, v in status.items() if k not in ("task_statuses", "running_records")}
        or None,
    }
    rows = [
        _Row(
            document,
            "job",
            "; ".join([sentence, *own]),
            "ERROR" if failed else "INFO",
            ts_ns=job_ns,
            workload=job_id,
            extra=job_extra,
        )
    ]
    for _, task in _objects(status.get("task_statuses"), ctx, "task_statuses"):
        task_name = _str(task.get("task"))
        exit_code = _int(task.get("exit_code"))
        text = _str(task.get("message"))
        who = f"Task {task_name}" if task_name else "A task"
        sentence = (
            f"{who} exited with code {exit_code}" if exit_code is not None else f"{who} status"
        )
        rows.append(
            _Row(
                task,
                "task_status",
                f"{sentence}: {text}" if text else sentence,
                "ERROR" if exit_code not in (None, 0) else "INFO",
                inherited_ns=job_ns,
                worker=worker_of_task(task_name),
                workload=job_id,
                extra={
                    "job_id": job_id,
                    "task": task_name,
                    "exit_code": task.get("exit_code"),
                    "code": error_code_in(text),
                },
            )
        )
    records = status.get("running_records")
    total = len(records) if isinstance(records, list) else 0
    for index, record in _objects(records, ctx, "running_records"):
        rows.extend(_running_rows(record, index, total, ctx, job_id))
    return rows


def _running_rows(
    record: LocatedDict, index: int, total: int, ctx: ReadContext, job_id: str | None
) -> list[_Row]:
    """One running record (an attempt: a start and how it ended) and its recover records."""
    start_type = _str(record.get("start_type"))
    end_reason = _str(record.get("end_reason"))
    task = _str(record.get("end_related_task"))
    recover = _str(record.get("end_recover"))
    parts = [f"Running record {index + 1} of {total}" + (f" ({start_type})" if start_type else "")]
    if end_reason:
        parts.append(f"ended: {end_reason}")
    elif record.get("end_at") is None:
        parts.append("has no end")
    else:
        parts.append("ended")
    if task:
        parts.append(f"related task {task}")
    if recover:
        parts.append(f"recovery {recover}")
    start_ns, end_ns = _epoch_ns(record.get("start_at")), _epoch_ns(record.get("end_at"))
    scalars = {k: v for k, v in record.items() if not isinstance(v, list | dict)}
    recovers = record.get("recover_records")
    rows = [
        _Row(
            record,
            "running_record",
            "; ".join(parts),
            "INFO",
            # The record reports how the attempt ended: stamped at its end where known.
            ts_ns=end_ns or start_ns,
            worker=worker_of_task(task),
            workload=job_id,
            attempt=index,
            extra={
                "job_id": job_id,
                **scalars,
                "recover_records": len(recovers) if isinstance(recovers, list) else None,
                "code": error_code_in(end_reason),
            },
        )
    ]
    for _, item in _objects(recovers, ctx, "recover_records"):
        how = _str(item.get("recover"))
        scenario = _str(item.get("fault_scenario"))
        related = _str(item.get("related_task"))
        result = _str(item.get("recover_result"))
        reason = _str(item.get("reason"))
        sentence = f"Recovery {how}" if how else "Recovery"
        if scenario:
            sentence += f" after {scenario}"
        if related:
            sentence += f" on {related}"
        sentence += f": {result}" if result else ": no result"
        rows.append(
            _Row(
                item,
                "recover_record",
                f"{sentence}; reason: {reason}" if reason else sentence,
                "ERROR" if (result or "").lower() == "failed" else "INFO",
                # recover_start_at is "also the fault time" (formats.md §3.1).
                ts_ns=_epoch_ns(item.get("recover_start_at"))
                or _epoch_ns(item.get("recover_end_at")),
                inherited_ns=end_ns,
                worker=worker_of_task(related),
                workload=job_id,
                attempt=index,
                extra={
                    "job_id": job_id,
                    "running_record": index,
                    **{k: v for k, v in item.items() if not isinstance(v, list | dict)},
                    "code": error_code_in(reason),
                },
            )
        )
    return rows


def _event_rows(document: LocatedDict, ctx: ReadContext, job_id: str | None) -> list[_Row]:
    """ListTrainingJobEvents: one row per event, its message verbatim."""
    rows = []
    for _, event in _objects(document.get("events"), ctx, "events"):
        level = _str(event.get("level"))
        text = _str(event.get("message"))
        source = _str(event.get("source"))
        named = re.search(r"\bworker-(\d+)\b", text or "")
        rows.append(
            _Row(
                event,
                "event",
                text or f"{source or 'ModelArts'} event without a message",
                level or "INFO",
                when=event.get("time"),
                worker=int(named.group(1)) if named else None,
                workload=job_id,
                logger=source,
                extra={
                    "job_id": job_id,
                    **{
                        k: v
                        for k, v in event.items()
                        if k != "message" and not isinstance(v, list | dict)
                    },
                    "code": error_code_in(text),
                },
            )
        )
    return rows


def _stage_rows(document: LocatedDict, ctx: ReadContext, job_id: str | None) -> list[_Row]:
    """ListTrainingJobStages: one row per stage of each running record (an attempt)."""
    records = list(_objects(document.get("running_records"), ctx, "running_records"))
    orders = sorted({o for _, r in records if (o := _int(r.get("record_order"))) is not None})
    rows = []
    for index, record in records:
        order = _int(record.get("record_order"))
        attempt = orders.index(order) if order is not None else index
        for _, stage in _objects(record.get("stages"), ctx, "stages"):
            name = _str(stage.get("name")) or "unnamed"
            stage_order = _int(stage.get("stage_order"))
            text = _str(stage.get("en_message"))
            head = f"Stage {name}"
            if stage_order is not None:
                head += f" ({stage_order}/4)"
            head += f" of running record {order if order is not None else index + 1}"
            subs = stage.get("sub_stages")
            sub_names = (
                [_str(s.get("name")) for s in subs if isinstance(s, dict)]
                if isinstance(subs, list)
                else []
            )
            stage_job = _str(stage.get("job_id")) or job_id
            rows.append(
                _Row(
                    stage,
                    "stage",
                    f"{head}: {text}" if text else head,
                    "INFO",
                    when=stage.get("start_time") or stage.get("end_time"),
                    workload=stage_job,
                    attempt=attempt,
                    extra={
                        "job_id": stage_job,
                        "record_order": order,
                        **{k: v for k, v in stage.items() if not isinstance(v, list | dict)},
                        "sub_stages": sub_names or None,
                    },
                )
            )
    return rows


def _frame(rows: list[_Row], tz: str) -> pl.DataFrame:
    """Canonical columns for the rows; times parsed in one vectorized pass."""
    epoch: list[int | None] = []
    texts: list[str | None] = []
    for row in rows:
        ns = row.ts_ns if row.ts_ns is not None else _epoch_ns(row.when)
        ns = _fits(ns, 64)  # a time beyond the year 2262 is no time
        epoch.append(ns)
        texts.append(row.when.strip() if ns is None and isinstance(row.when, str) else None)
    frame = pl.DataFrame(
        {
            "line": [row.node.line for row in rows],
            "offset": [row.node.offset for row in rows],
            "reader": [f"modelarts_api.{row.kind}" for row in rows],
            "_epoch": epoch,
            "_text": texts,
            "_inherited": [_fits(row.inherited_ns, 64) for row in rows],
            "_level": [row.severity for row in rows],
            "workload": [row.workload for row in rows],
            "worker": [_fits(row.worker, 32) for row in rows],
            "attempt": [row.attempt for row in rows],
            "logger": [row.logger for row in rows],
            "message": [row.message for row in rows],
            "extra": [_compact(row.extra) for row in rows],
        },
        schema_overrides={
            "line": pl.Int32,
            "offset": pl.Int64,
            "_epoch": pl.Int64,
            "_text": pl.String,
            "_inherited": pl.Int64,
            "workload": pl.String,
            "worker": pl.Int32,
            "attempt": pl.Int32,
            "logger": pl.String,
            "extra": pl.String,
        },
    )
    text = pl.col("_text")
    zoned = rfc3339(text)
    local = local_time(text.str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T"), _TIME_TEXT, tz)
    own = pl.coalesce(pl.col("_epoch").cast(NS), zoned, local)
    return frame.select(
        "line",
        "offset",
        pl.lit("modelarts").alias("source"),
        "reader",
        pl.coalesce(own, pl.col("_inherited").cast(NS)).alias("ts"),
        pl.when(pl.col("_epoch").is_not_null() | zoned.is_not_null())
        .then(pl.lit("exact"))
        .when(local.is_not_null())
        .then(pl.lit("inferred_tz"))
        .when(pl.col("_inherited").is_not_null())
        .then(pl.lit("inherited"))
        .alias("ts_quality"),
        pl.coalesce(severity_expr(pl.col("_level")), pl.lit("INFO")).alias("severity"),
        "workload",
        "worker",
        "attempt",
        "logger",
        "message",
        "extra",
    )


def _compact(fields: dict[str, Any] | None) -> str | None:
    """``extra`` as compact JSON without null members; ``None`` when nothing is left."""
    kept = {k: v for k, v in (fields or {}).items() if v is not None}
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":")) if kept else None
