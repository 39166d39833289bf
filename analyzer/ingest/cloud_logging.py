"""The ``cloud_logging`` reader: Google Cloud Logging exports.

Three framings of the same LogEntry (formats.md §1):

* ``cloud_logging.jsonl``: one entry per line (Log Router sink objects on Cloud Storage,
  ``LOG_ID/YYYY/MM/DD/HH:00:00_HH:59:59_S0.json``; also BigQuery/Log Analytics JSON exports);
* ``cloud_logging.json_array``: ``gcloud logging read --format=json``, one (possibly huge,
  newest-first) array, streamed element by element;
* ``cloud_logging.csv``: Logs Explorer downloads, dotted column names mapped back to entries.

Entries are parsed by DuckDB's JSON functions in bulk (one parse per entry, many paths), and
every field of the canonical row is derived with polars expressions following formats.md §1.8.
The in-line prefix of ``textPayload`` (klog/absl/Python level) decides the severity, because
GKE stamps every stderr line ERROR; the entry's own severity is kept in ``extra``.

Multi-line records (formats.md §1.5, §5.3 rule 5). GKE makes every line a container writes its
own LogEntry, so a Python traceback, an absl ``=== Source Location Trace: ===`` block or an
XLA ``Total hbm usage`` table arrive as one entry per line, interleaved with other pods' entries
(and newest first in a gcloud array). Container text entries (``textPayload`` of
``k8s_container``/``container`` resources, or of stdout/stderr logs without a resource type)
are folded like the lines of a text file: per stream — resource type, namespace, pod,
container, ``logName`` and a torchrun ``[rankN]:`` prefix — in ``(timestamp, insertId)`` order,
a stream's entry starts a record when it is more than 1 s after the stream's previous entry,
and otherwise :func:`analyzer.ingest.folding.mark_records` decides with the text reader's
rules and caps. A folded row is its first entry's row (line, offset, timestamp, insertId,
severity, labels, ``extra``) with the entries' messages joined by newlines, and ``lines`` /
``exception`` (/ ``continues_record`` for a record cut at the caps) in ``extra``; the other
entries count as ``folded``, blank text entries as ``blank``. Events, audit records,
``jsonPayload`` entries, node logs and entries without a valid ``timestamp`` never fold.

Folding works on one chunk of entries at a time (``ReadOptions.chunk_bytes``, 16 MiB of the
file by default): a record whose entries straddle a chunk boundary stays split in two rows
there (the second piece starts with whatever entry comes first in it). An entry that repeats
an earlier entry of the same chunk (same ``logName``, ``timestamp`` and ``insertId``) is not
folded: it stays a row of its own carrying the de-duplication key of the row its first copy
went into, so the case writer still drops it as a duplicate of that row. Copies in other files
are caught when both files fold the copy the same way (same header entry); a copy whose
record is cut differently (another chunk boundary, only part of a traceback exported) is not.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import ClassVar, Final

import numpy as np
import polars as pl

from analyzer.hosts import chip_location
from analyzer.ingest import grammars, jsondoc, k8s
from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.extra import compact_json
from analyzer.ingest.folding import EXCEPTION_LINE, mark_records
from analyzer.ingest.framing import BOM
from analyzer.ingest.jsonarray import iter_elements
from analyzer.ingest.jsonfields import FieldSpec, extract, json_lines
from analyzer.ingest.timestamps import check_tz, rfc3339
from analyzer.schema import host_expr, severity_expr
from analyzer.streams import Content

_LABEL_SPELLINGS: Final = {
    # kubectl form -> Cloud Logging form, BigQuery sink form
    "compute.googleapis.com/resource_name": ("compute_googleapis_com_resource_name",),
    "jobset.sigs.k8s.io/jobset-name": (
        "k8s-pod/jobset_sigs_k8s_io/jobset-name",
        "k8s_pod_jobset_sigs_k8s_io_jobset_name",
    ),
    "jobset.sigs.k8s.io/job-index": (
        "k8s-pod/jobset_sigs_k8s_io/job-index",
        "k8s_pod_jobset_sigs_k8s_io_job_index",
    ),
    "jobset.sigs.k8s.io/restart-attempt": (
        "k8s-pod/jobset_sigs_k8s_io/restart-attempt",
        "k8s_pod_jobset_sigs_k8s_io_restart_attempt",
    ),
    "batch.kubernetes.io/job-completion-index": (
        "k8s-pod/batch_kubernetes_io/job-completion-index",
        "k8s_pod_batch_kubernetes_io_job_completion_index",
    ),
    "batch.kubernetes.io/job-name": (
        "k8s-pod/batch_kubernetes_io/job-name",
        "k8s_pod_batch_kubernetes_io_job_name",
        "k8s-pod/job-name",
    ),
    "logging.gke.io/top_level_controller_name": ("logging_gke_io_top_level_controller_name",),
    "container.googleapis.com/pod_name": ("container_googleapis_com_pod_name",),
    "container.googleapis.com/namespace_name": ("container_googleapis_com_namespace_name",),
}


def _label(key: str) -> list[str]:
    spellings = (key, *_LABEL_SPELLINGS[key])
    return [f'$.labels."{spelling}"' for spelling in spellings]


#: Scalar fields taken from every entry: name -> JSON paths tried in order (LogEntry camelCase
#: first, then the snake_case of Log Analytics).
_FIELDS: Final[dict[str, list[str]]] = {
    "timestamp": ["$.timestamp"],
    "receive": ["$.receiveTimestamp", "$.receive_timestamp"],
    "severity": ["$.severity"],
    "insert_id": ["$.insertId", "$.insert_id"],
    "log_name": ["$.logName", "$.log_name"],
    "trace": ["$.trace"],
    "text_payload": ["$.textPayload", "$.text_payload"],
    "rtype": ["$.resource.type"],
    "r_pod": ["$.resource.labels.pod_name", *_label("container.googleapis.com/pod_name")],
    "r_container": ["$.resource.labels.container_name"],
    "r_namespace": [
        "$.resource.labels.namespace_name",
        *_label("container.googleapis.com/namespace_name"),
    ],
    "r_node": ["$.resource.labels.node_name"],
    "r_node_id": ["$.resource.labels.node_id"],
    "r_worker_id": ["$.resource.labels.worker_id"],
    "r_instance": ["$.resource.labels.instance_id"],
    "l_resource_name": _label("compute.googleapis.com/resource_name"),
    "l_jobset": _label("jobset.sigs.k8s.io/jobset-name"),
    "l_job_index": _label("jobset.sigs.k8s.io/job-index"),
    "l_restart": _label("jobset.sigs.k8s.io/restart-attempt"),
    "l_completion": _label("batch.kubernetes.io/job-completion-index"),
    "l_job_name": _label("batch.kubernetes.io/job-name"),
    "l_controller": _label("logging.gke.io/top_level_controller_name"),
    "j_message": ["$.jsonPayload.message", "$.json_payload.message"],
    "j_MESSAGE": ["$.jsonPayload.MESSAGE", "$.json_payload.MESSAGE"],
    "j_msg": ["$.jsonPayload.msg", "$.jsonPayload.log"],
    "j_severity": ["$.jsonPayload.severity", "$.jsonPayload.level"],
    "j_priority": ["$.jsonPayload.PRIORITY"],
    "j_hostname": ["$.jsonPayload._HOSTNAME"],
    "j_ident": ["$.jsonPayload.SYSLOG_IDENTIFIER"],
    "j_reason": ["$.jsonPayload.reason"],
    "j_kind": ["$.jsonPayload.kind"],
    "j_source_host": ["$.jsonPayload.source.host"],
    "j_obj_kind": ["$.jsonPayload.involvedObject.kind"],
    "j_obj_name": ["$.jsonPayload.involvedObject.name"],
    "j_obj_namespace": ["$.jsonPayload.involvedObject.namespace"],
    "j_obj_field": ["$.jsonPayload.involvedObject.fieldPath"],
    "j_legacy_subtype": ["$.jsonPayload.event_subtype"],
    "j_legacy_resource": ["$.jsonPayload.resource.name"],
    "p_method": ["$.protoPayload.methodName"],
    "p_resource": ["$.protoPayload.resourceName"],
    "p_status": ["$.protoPayload.status.message"],
    "src_file": ["$.sourceLocation.file"],
    "src_line": ["$.sourceLocation.line"],
}

#: Sub-objects kept verbatim in ``extra``.
_RAW: Final[dict[str, list[str]]] = {
    "resource": ["$.resource"],
    "labels": ["$.labels"],
    "jsonPayload": ["$.jsonPayload", "$.json_payload"],
    "protoPayload": ["$.protoPayload", "$.proto_payload"],
    "operation": ["$.operation"],
    "sourceLocation": ["$.sourceLocation"],
    "split": ["$.split"],
    "httpRequest": ["$.httpRequest"],
}

_GCS_OBJECT: Final = re.compile(
    r"/\d{4}/\d{2}/\d{2}/\d{2}:00:00_\d{2}:59:59_[SA]\d+\.json(?:\.gz)?$"
)
_CSV_LIMIT: Final = 512 << 20
#: The head of a Logging API ``entries.list`` response (what gcpdiag and REST clients save).
_API_RESPONSE: Final = re.compile(rb'^\{\s*"entries"\s*:\s*\[')
#: Such a response is one page, parsed whole (jsondoc keeps each entry's line).
_API_RESPONSE_LIMIT: Final = 256 << 20
# Node-level logs (kubelet journal, node agents, serial console) and Kubernetes events are the
# kubelet source wherever they were exported from; ML Diagnostics SDK metrics are diagon.
_NODE_LOGS: Final = (
    r"/logs/(?:kubelet|node-problem-detector|container-runtime|docker|kube-node-installation|"
    r"kube-node-configuration|kube-container-runtime-monitor|events|"
    r"serialconsole\.googleapis\.com%2Fserial_port_\d+_output)$"
)
_DIAGON_LOGS: Final = r"/logs/ml_diagnostics_metric$"


_SPEC: Final = FieldSpec(_FIELDS, _RAW)

#: Entries of one stream further apart than this never fold together (formats.md §5.3 rule 5).
FOLD_GAP_NS: Final = 1_000_000_000
#: Resource types of container logs (``container`` is the legacy GKE name).
_CONTAINER_TYPES: Final = ("k8s_container", "container")


_EMPTY_ARRAY: Final = re.compile(rb"\[\s*\]\s*")


def _one_entry_per_line(head: bytes) -> bool:
    """Whether a file that starts with ``{`` holds one entry per line (JSON lines) rather
    than pretty-printed entries spread over lines (one document, or several one after
    another as they are pasted): its first line is a whole JSON value, or too long to tell."""
    first, newline, _ = head.partition(b"\n")
    if not newline:
        return True
    try:
        json.loads(first)
    except ValueError:
        return first.strip() not in (b"{", b"{\r")
    return True


class CloudLoggingReader:
    """Cloud Logging exports (see module docstring)."""

    name: ClassVar[str] = "cloud_logging"
    source: ClassVar[str] = "cloud_logging"

    def sniff(self, head: bytes, path: str) -> float:
        """High when the head holds LogEntry keys (or a CSV header of LogEntry columns)."""
        text = head.removeprefix(BOM).lstrip()
        bonus = 0.03 if _GCS_OBJECT.search(path) else 0.0
        if _EMPTY_ARRAY.fullmatch(text):
            # `gcloud logging read` found nothing: an export with no entries, not unknown text.
            return 0.5
        if text[:1] in (b"[", b"{"):
            window = text[:SNIFF_BYTES]
            has = {key: (b'"' + key + b'"') in window for key in _SNIFF_KEYS}
            payload = has[b"textPayload"] or has[b"jsonPayload"] or has[b"protoPayload"]
            if has[b"logName"] and (has[b"resource"] or has[b"insertId"]):
                return 0.95 + bonus
            if has[b"log_name"] and (has[b"text_payload"] or has[b"json_payload"]):
                return 0.9
            if has[b"timestamp"] and payload:
                return 0.8 + bonus
            return 0.0
        first_line = text.split(b"\n", 1)[0].decode("utf-8", "replace")
        columns = {c.strip().strip('"') for c in first_line.split(",")}
        if "timestamp" in columns and columns & _CSV_MARKERS:
            return 0.9
        return 0.0

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Stream the entries of the file as canonical rows."""
        head = content.head(SNIFF_BYTES).removeprefix(BOM).lstrip()
        tz = check_tz(ctx.options.tz)
        if _API_RESPONSE.match(head):
            yield from self._api_response(content, ctx, tz)
        elif head[:1] == b"[" or (head[:1] == b"{" and not _one_entry_per_line(head)):
            objects = head[:1] == b"{"
            for chunk in iter_elements(content, ctx, objects=objects):
                texts = pl.Series("text", chunk.texts, dtype=pl.String)
                yield from self._rows(texts, chunk.lines, chunk.offsets, ctx, tz, "json_array")
        elif head[:1] == b"{" or not head:
            yield from self._json_lines(content, ctx, tz)
        else:
            yield from self._csv(content, ctx, tz)

    # -- framings ----------------------------------------------------------------------------

    def _json_lines(self, content: Content, ctx: ReadContext, tz: str) -> Iterator[pl.DataFrame]:
        for texts, lines, offsets in json_lines(content, ctx):
            yield from self._rows(texts, lines, offsets, ctx, tz, "jsonl")

    def _api_response(self, content: Content, ctx: ReadContext, tz: str) -> Iterator[pl.DataFrame]:
        """An ``entries.list`` response of the Logging API: ``{"entries": [...],
        "nextPageToken": ...}``, one page, parsed whole (each entry keeps its line)."""
        data = content.read_at_most(_API_RESPONSE_LIMIT + 1)
        if len(data) > _API_RESPONSE_LIMIT:
            ctx.counts.records += 1
            ctx.file_issue(
                f"Logging API response is larger than {_API_RESPONSE_LIMIT:,} bytes; not parsed"
            )
            ctx.drop(1, 0, "Logging API response too large to parse", data[:4096])
            return
        try:
            document = jsondoc.load(data)
        except jsondoc.DocumentError as exc:
            ctx.counts.records += 1
            ctx.drop(exc.line, exc.offset, f"not valid JSON: {exc}", data[:4096])
            return
        entries = document.get("entries") if isinstance(document, dict) else None
        if not isinstance(entries, jsondoc.LocatedList):
            ctx.counts.records += 1
            ctx.drop(1, 0, '"entries" is not a list of log entries', data[:4096])
            return
        texts: list[str] = []
        lines: list[int] = []
        offsets: list[int] = []
        for entry in entries:
            ctx.counts.records += 1
            if not isinstance(entry, jsondoc.LocatedDict):
                ctx.drop(entries.line, entries.offset, "an element of entries is not an object")
                continue
            texts.append(json.dumps(entry))
            lines.append(entry.line)
            offsets.append(entry.offset)
        if texts:
            yield from self._rows(
                pl.Series("text", texts, dtype=pl.String),
                np.asarray(lines, dtype=np.int32),
                np.asarray(offsets, dtype=np.int64),
                ctx,
                tz,
                "api_response",
            )

    def _csv(self, content: Content, ctx: ReadContext, tz: str) -> Iterator[pl.DataFrame]:
        data = content.read_at_most(_CSV_LIMIT + 1)
        if len(data) > _CSV_LIMIT:
            ctx.file_issue(
                f"CSV export is larger than {_CSV_LIMIT:,} bytes; only the start is read"
            )
            data = data[:_CSV_LIMIT]
        skip = len(BOM) if data.startswith(BOM) else 0
        text = data[skip:].decode("utf-8", "replace")
        line_starts = np.concatenate(
            [[0], np.flatnonzero(np.frombuffer(data[skip:], np.uint8) == 10) + 1]
        )
        reader = csv.reader(io.StringIO(text, newline=""))
        header: list[str] | None = None
        texts: list[str] = []
        lines: list[int] = []
        offsets: list[int] = []
        previous_end = 0
        for row in _csv_records(reader):
            start_line = previous_end + 1
            previous_end = reader.line_num
            offset = (
                int(line_starts[start_line - 1]) + skip
                if start_line - 1 < len(line_starts)
                else len(data)
            )
            if isinstance(row, csv.Error):
                # A field over csv.field_size_limit(): the reader skips the rest of that line.
                if header is None:
                    ctx.file_issue(f"CSV header cannot be parsed ({row})", line=start_line)
                    continue
                ctx.counts.records += 1
                reason = f"CSV record cannot be parsed ({row})"
                ctx.drop(start_line, offset, reason, data[offset:][:4096])
                continue
            if header is None:
                header = row
                if "timestamp" not in header:
                    ctx.file_issue("CSV header has no 'timestamp' column: rows get no time", line=1)
                continue
            ctx.counts.records += 1
            if not any(cell.strip() for cell in row):
                ctx.counts.blank += 1
                continue
            if len(row) != len(header):
                ctx.drop(
                    start_line,
                    offset,
                    f"CSV row has {len(row)} fields but the header has {len(header)}",
                    ",".join(row).encode()[:4096],
                )
                continue
            texts.append(json.dumps(_entry_from_columns(header, row)))
            lines.append(start_line)
            offsets.append(offset)
        if texts:
            yield from self._rows(
                pl.Series("text", texts, dtype=pl.String),
                np.asarray(lines, dtype=np.int32),
                np.asarray(offsets, dtype=np.int64),
                ctx,
                tz,
                "csv",
            )

    # -- entries to rows ---------------------------------------------------------------------

    def _rows(
        self,
        texts: pl.Series,
        lines: np.ndarray,
        offsets: np.ndarray,
        ctx: ReadContext,
        tz: str,
        framing: str,
    ) -> Iterator[pl.DataFrame]:
        frame = extract(_SPEC, texts, lines, offsets, ctx, "LogEntry")
        if frame.height == 0:
            return
        rows = _derive(frame, tz, ctx, framing)
        ctx.counts.rows += rows.height
        yield rows


_SNIFF_KEYS: Final = (
    b"logName",
    b"resource",
    b"insertId",
    b"timestamp",
    b"textPayload",
    b"jsonPayload",
    b"protoPayload",
    b"log_name",
    b"text_payload",
    b"json_payload",
)
_CSV_MARKERS: Final = {
    "textPayload",
    "logName",
    "insertId",
    "severity",
    "resource.type",
    "jsonPayload.message",
    "protoPayload.methodName",
}


def _csv_records(reader: Iterator[list[str]]) -> Iterator[list[str] | csv.Error]:
    """The records of a CSV reader, with the error in place of a record it cannot parse."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield exc


def _entry_from_columns(header: list[str], row: list[str]) -> dict[str, object]:
    """Rebuild a LogEntry from Logs Explorer's flattened CSV columns.

    ``labels.*`` and ``resource.labels.*`` keys are label names that may contain dots, so only
    the prefix is split; other dotted names nest at every dot.
    """
    entry: dict[str, object] = {}
    for column, value in zip(header, row, strict=True):
        if value == "":
            continue
        for prefix in ("resource.labels.", "labels."):
            if column.startswith(prefix):
                path = [*prefix.rstrip(".").split("."), column[len(prefix) :]]
                break
        else:
            path = column.split(".")
        node = entry
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[path[-1]] = value
    return entry


def _derive(frame: pl.DataFrame, tz: str, ctx: ReadContext, framing: str) -> pl.DataFrame:
    """Canonical rows from extracted LogEntry fields (formats.md §1.8)."""
    envelope_ts = rfc3339(pl.col("timestamp"))
    text_message = pl.col("text_payload").str.replace(r"\r?\n$", "")
    is_event = (pl.col("j_kind") == "Event") | pl.col("log_name").str.ends_with("/events")
    event_message = pl.when(is_event & pl.col("j_reason").is_not_null()).then(
        pl.concat_str([pl.col("j_reason"), pl.lit(": "), pl.col("j_message").fill_null("")])
    )
    audit_message = (
        pl.when(pl.col("p_status").is_not_null())
        .then(pl.concat_str([pl.col("p_method"), pl.lit(": "), pl.col("p_status")]))
        .otherwise(pl.col("p_method"))
    )
    legacy_message = pl.when(pl.col("j_legacy_subtype").is_not_null()).then(
        pl.concat_str(
            [pl.col("j_legacy_subtype"), pl.lit(" "), pl.col("j_legacy_resource")],
            ignore_nulls=True,
        )
    )
    message = pl.coalesce(
        text_message,
        event_message,
        audit_message,
        pl.col("j_message"),
        pl.col("j_MESSAGE"),
        pl.col("j_msg"),
        legacy_message,
        pl.col("raw_jsonPayload"),
        pl.col("entry"),
    )
    frame = frame.with_columns(
        message.alias("_message"),
        envelope_ts.alias("_ts"),
        pl.coalesce(envelope_ts, rfc3339(pl.col("receive"))).dt.date().alias("_anchor"),
    )
    anchor = ctx.anchor_date()
    inner = grammars.parse_lines(
        frame["_message"], anchor=frame["_anchor"].fill_null(anchor), tz=tz
    )
    frame = pl.concat([frame, inner.select(pl.all().name.prefix("in_"))], how="horizontal")
    _note_bad_timestamps(frame, ctx)
    dedup_text = pl.concat_str(
        [pl.col("log_name").fill_null(""), pl.col("timestamp").fill_null(""), pl.col("insert_id")],
        separator="|",
    )
    stream_log = pl.col("log_name").str.contains(r"/logs/(?:stdout|stderr)$")
    container_text = (
        pl.col("text_payload").is_not_null()
        & pl.col("_ts").is_not_null()
        & ~is_event.fill_null(False)
        & (
            pl.col("rtype").is_in(list(_CONTAINER_TYPES))
            | (pl.col("rtype").is_null() & (pl.col("r_container").is_not_null() | stream_log))
        )
    ).fill_null(False)
    # The entry's text was only needed for the message: do not carry it through folding.
    frame = frame.drop("entry").with_columns(
        dedup_text.hash(seed=1).alias("_dk_a"),
        dedup_text.hash(seed=2).alias("_dk_b"),
        container_text.alias("_foldable"),
    )
    frame = _fold(frame, ctx)

    # Structured kubelet messages name the pod as pod="namespace/name" (formats.md §2.2).
    kubelet_named = k8s.kubelet_pod(pl.col("in_message"))
    pod = pl.coalesce(
        pl.col("r_pod"),
        pl.when(pl.col("j_obj_kind") == "Pod").then(pl.col("j_obj_name")),
        kubelet_named.struct.field("name"),
    )
    pod_parts = k8s.pod_parts(pod)
    host = pl.coalesce(
        pl.col("l_resource_name"),
        pl.col("r_node"),
        pl.col("j_hostname"),
        pl.col("j_source_host"),
        pl.when(pl.col("j_obj_kind") == "Node").then(pl.col("j_obj_name")),
        pl.col("p_resource").str.extract(r"/instances/([^/]+)$", 1),
        pl.when(pl.col("rtype") == "tpu_worker").then(
            pl.concat_str([pl.col("r_node_id"), pl.lit("-w-"), pl.col("r_worker_id")])
        ),
        pl.col("j_legacy_resource"),
        pl.col("in_host"),
    )
    payload_level = severity_expr(pl.col("in_level"))
    json_level = severity_expr(pl.col("j_severity"))
    priority_level = severity_expr(pl.col("j_priority"))
    entry_level = severity_expr(pl.col("severity"))
    origin = (
        pl.when(payload_level.is_not_null())
        .then(pl.lit("payload"))
        .when(json_level.is_not_null())
        .then(pl.lit("json"))
        .when(priority_level.is_not_null())
        .then(pl.lit("priority"))
        .when(entry_level.is_not_null() & stream_log)
        .then(pl.lit("stream_default"))
        .when(entry_level.is_not_null())
        .then(pl.lit("entry"))
    )
    ts = pl.coalesce(pl.col("_ts"), pl.col("in_ts"), rfc3339(pl.col("receive")))
    quality = (
        pl.when(pl.col("_ts").is_not_null())
        .then(pl.lit("exact"))
        .when(pl.col("in_ts").is_not_null())
        .then(pl.col("in_ts_quality"))
        .when(ts.is_not_null())
        .then(pl.lit("exact"))
    )
    source_location = pl.when(pl.col("src_file").is_not_null()).then(
        pl.concat_str([pl.col("src_file"), pl.lit(":"), pl.col("src_line")], ignore_nulls=True)
    )
    logger = pl.coalesce(
        pl.col("in_logger"),
        pl.col("j_ident"),
        pl.when(is_event).then(pl.col("j_reason")),
        pl.col("p_method"),
        source_location,
    )
    container = pl.coalesce(
        pl.col("r_container"),
        pl.col("j_obj_field").str.extract(r"spec\.(?:initContainers|containers)\{([^}]+)\}", 1),
        pl.col("in_container"),
        k8s.kubelet_container(pl.col("in_message")),
    )
    source = (
        pl.when(pl.col("log_name").str.contains(_NODE_LOGS) | (pl.col("rtype") == "k8s_node"))
        .then(pl.lit("kubelet"))
        .when(pl.col("log_name").str.contains(_DIAGON_LOGS) | (pl.col("rtype") == "generic_node"))
        .then(pl.lit("diagon"))
        .otherwise(pl.lit("cloud_logging"))
    )
    return frame.select(
        pl.col("line"),
        pl.col("offset"),
        source.alias("source"),
        pl.lit(f"cloud_logging.{framing}").alias("reader"),
        ts.alias("ts"),
        quality.alias("ts_quality"),
        pl.coalesce(payload_level, json_level, priority_level, entry_level).alias("severity"),
        host_expr(host).alias("host"),
        pod.alias("pod"),
        container.alias("container"),
        pl.coalesce(
            pl.col("r_namespace"), pl.col("j_obj_namespace"), kubelet_named.struct.field("ns")
        ).alias("namespace"),
        pl.coalesce(
            pl.col("l_jobset"),
            pl.col("l_controller"),
            pl.col("l_job_name"),
            pod_parts.struct.field("base"),
        ).alias("workload"),
        pl.coalesce(
            pl.col("l_completion"),
            pod_parts.struct.field("idx"),
            pl.col("r_worker_id"),
            pl.col("in_rank").cast(pl.String),
        )
        .cast(pl.Int32, strict=False)
        .alias("worker"),
        pl.coalesce(pl.col("l_job_index"), pod_parts.struct.field("job"))
        .cast(pl.Int32, strict=False)
        .alias("slice"),
        pl.col("l_restart").cast(pl.Int32, strict=False).alias("attempt"),
        logger.alias("logger"),
        pl.col("in_message").alias("message"),
        compact_json(
            [
                ("logName", pl.col("log_name"), "text"),
                ("severity", pl.col("severity"), "text"),
                ("severity_origin", origin, "token"),
                ("receiveTimestamp", pl.col("receive"), "text"),
                (
                    "payload_ts",
                    pl.when(pl.col("_ts").is_not_null())
                    .then(pl.col("in_ts"))
                    .dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ"),
                    "token",
                ),
                (
                    "payload_ts_quality",
                    pl.when(pl.col("_ts").is_not_null()).then(pl.col("in_ts_quality")),
                    "token",
                ),
                ("trace", pl.col("trace"), "text"),
                ("tid", pl.col("in_tid"), "token"),
                ("lines", pl.col("_lines"), "number"),
                ("exception", pl.col("_exception"), "text"),
                ("continues_record", pl.when(pl.col("_split")).then(pl.lit(True)), "bool"),
                *k8s.kubelet_extra(pl.col("in_message")),
                *[(name, pl.col(f"raw_{name}"), "raw") for name in _RAW],
            ]
        ).alias("extra"),
        pl.col("insert_id"),
        pl.when(pl.col("insert_id").is_not_null())
        .then(pl.struct(pl.col("_dk_a").alias("a"), pl.col("_dk_b").alias("b")))
        .alias("_dedup_key"),
        # Names of the host found inside the entry (for the case's host map).
        pl.coalesce(pl.col("r_instance"), chip_location(pl.col("in_message"))).alias("_alias"),
        pl.when(pl.col("r_instance").is_not_null())
        .then(pl.lit("instance_id"))
        .otherwise(pl.lit("chip"))
        .alias("_alias_kind"),
    )


def _fold(frame: pl.DataFrame, ctx: ReadContext) -> pl.DataFrame:
    """Fold the multi-line records of container text entries into the row of their first
    entry (see module docstring); every other row passes through.

    ``frame`` holds one row per entry with ``_foldable`` marking container text entries and
    ``_dk_a``/``_dk_b`` their de-duplication key. Returns the rows in file order, with
    ``in_message`` of a folded row holding the joined messages and ``_lines``, ``_exception``
    and ``_split`` describing it (null/false for other rows). Counts ``folded`` and ``blank``
    entries in ``ctx.counts``.

    The decisions are made on a narrow frame of the columns folding needs (sorting and
    filtering the wide frame of every extracted field would cost more than the folding); the
    wide frame is filtered once at the end.
    """
    if not frame["_foldable"].any():
        return frame.with_columns(
            pl.lit(None, dtype=pl.UInt32).alias("_lines"),
            pl.lit(None, dtype=pl.String).alias("_exception"),
            pl.lit(False).alias("_split"),
        )
    frame = frame.with_row_index("_i")
    narrow = frame.select(
        "_i",
        "_foldable",
        "_ts",
        "insert_id",
        "_dk_a",
        "_dk_b",
        "_message",
        "in_message",
        "in_grammar",
        "in_level",
        "in_cri_tag",
        pl.struct("rtype", "r_namespace", "r_pod", "r_container", "log_name", "in_rank")
        .hash(seed=3)
        .alias("_stream"),
    )
    candidates = narrow.filter(pl.col("_foldable"))
    # A repeated entry (same logName, timestamp, insertId) does not take part in folding.
    repeated = pl.col("insert_id").is_not_null() & ~pl.struct("_dk_a", "_dk_b").is_first_distinct()
    candidates = candidates.with_columns(repeated.alias("_repeat"))
    copies = candidates.filter(pl.col("_repeat"))
    # Streams in (timestamp, insertId) order; a record starts at each stream's first entry and
    # wherever the stream was silent for more than FOLD_GAP_NS.
    entries = candidates.filter(~pl.col("_repeat")).sort("_stream", "_ts", "insert_id", "_i")
    gap = pl.col("_ts").diff().dt.total_nanoseconds()
    brk = ((pl.col("_stream") != pl.col("_stream").shift(1)) | (gap > FOLD_GAP_NS)).fill_null(True)
    entries = entries.with_columns(brk.alias("_break")).with_columns(
        (pl.col("_break") & pl.col("_break").shift(-1).fill_null(True)).alias("_alone")
    )
    is_blank = pl.col("in_message").str.strip_chars().str.len_bytes() == 0
    # Per entry: whether its row is kept, and for a folded row its joined message (``_joined``),
    # line count and exception line; ``_split`` marks a piece of a record cut at the caps.
    results = [
        narrow.filter(~pl.col("_foldable")).select("_i", pl.lit(True).alias("_keep")),
        # Entries alone in their stretch of a stream are records of one line (or blank): only
        # the others go through the folding rules.
        entries.filter(pl.col("_alone")).select("_i", (~is_blank).alias("_keep")),
    ]
    together = entries.filter(~pl.col("_alone"))
    blank = entries.filter(pl.col("_alone")).select(is_blank.sum()).item()
    folded = 0
    record_keys: pl.DataFrame | None = None
    if together.height:
        marked = mark_records(
            together.lazy().select(
                pl.col("_message").alias("text"),
                pl.col("in_message").alias("message"),
                pl.col("in_grammar").alias("grammar"),
                pl.col("in_level").alias("level"),
                pl.col("in_cri_tag").alias("cri_tag"),
                pl.col("_break").alias("fold_break"),
            ),
            max_lines=ctx.options.max_record_lines,
            max_bytes=ctx.options.max_record_bytes,
        ).select(
            pl.col("record").alias("_record"),
            pl.col("is_header").alias("_header"),
            pl.col("is_split").alias("_split"),
            pl.col("is_blank").fill_null(False).alias("_blank"),
            pl.col("joins_previous").alias("_joins"),
        )
        together = pl.concat([together, marked.collect()], how="horizontal")
        blank += int(together["_blank"].sum())
        record = pl.col("_record")
        multi = (record == record.shift(-1)).fill_null(False) | (
            record == record.shift(1)
        ).fill_null(False)
        starts = pl.col("_header") | pl.col("_split")
        together = together.with_columns(
            multi.alias("_multi"), (starts & record.is_not_null()).alias("_keep")
        )
        lines = together.filter(pl.col("_multi"))
        piece = (
            pl.when(starts | pl.col("_joins"))
            .then(pl.col("in_message"))
            .otherwise(pl.concat_str([pl.lit("\n"), pl.col("in_message")]))
        )
        joined = lines.group_by("_record", maintain_order=True).agg(
            piece.str.join("").alias("_joined"),
            pl.len().alias("_lines"),
            pl.when(pl.col("in_message").str.contains(EXCEPTION_LINE) & ~pl.col("_header"))
            .then(pl.col("in_message"))
            .drop_nulls()
            .last()
            .alias("_exception"),
        )
        heads = lines.filter(starts).select("_i", "_keep", "_split")
        assert heads.height == joined.height
        results += [
            together.filter(~(pl.col("_multi") & starts)).select("_i", "_keep", "_split"),
            pl.concat([heads, joined.drop("_record")], how="horizontal"),
        ]
        kept = together.filter(record.is_not_null())
        folded = kept.height - kept["_record"].n_unique()
        if copies.height:
            # Which row each entry went into: the key and position of its record's first entry.
            record_keys = kept.select(
                "_dk_a",
                "_dk_b",
                *[
                    pl.when(starts).then(pl.col(c)).forward_fill().alias(f"_kept{c}")
                    for c in ("_dk_a", "_dk_b", "_i")
                ],
            )
    if copies.height:
        blank += copies.select(is_blank.sum()).item()
        copies = copies.select("_i", "_dk_a", "_dk_b", (~is_blank).alias("_keep"))
        if record_keys is not None:
            # A copy of an entry folded into a record carries that record's key and comes
            # after it, so the case writer keeps the record and drops the copy.
            copies = copies.join(
                record_keys, on=["_dk_a", "_dk_b"], how="left", maintain_order="left"
            ).select(
                "_i",
                "_keep",
                pl.col("_kept_dk_a").alias("_copy_a"),
                pl.col("_kept_dk_b").alias("_copy_b"),
                pl.when(pl.col("_kept_i") > pl.col("_i")).then(pl.col("_kept_i")).alias("_after"),
            )
        results.append(copies.drop("_dk_a", "_dk_b", strict=False))
    ctx.counts.folded += folded
    ctx.counts.blank += blank
    decided = pl.concat(results, how="diagonal_relaxed").sort("_i")
    assert decided.height == frame.height
    frame = frame.hstack(decided.drop("_i").get_columns())
    for name, dtype in (
        ("_joined", pl.String),
        ("_lines", pl.UInt32),
        ("_exception", pl.String),
        ("_split", pl.Boolean),
        ("_copy_a", pl.UInt64),
        ("_copy_b", pl.UInt64),
        ("_after", pl.UInt32),
    ):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(name))
    if not frame["_keep"].all():
        frame = frame.filter(pl.col("_keep"))
    frame = frame.with_columns(
        pl.coalesce("_joined", "in_message").alias("in_message"),
        pl.coalesce("_copy_a", "_dk_a").alias("_dk_a"),
        pl.coalesce("_copy_b", "_dk_b").alias("_dk_b"),
        pl.col("_split").fill_null(False),
    )
    if frame["_after"].is_not_null().any():
        # A copy placed before the row its first copy went into (a newest-first file) moves
        # right after it.
        moved = pl.coalesce("_after", "_i").cast(pl.Int64) * 2 + pl.col("_after").is_not_null()
        frame = frame.sort(moved)
    return frame.drop("_i", "_keep", "_joined", "_copy_a", "_copy_b", "_after")


def _note_bad_timestamps(frame: pl.DataFrame, ctx: ReadContext) -> None:
    """Quarantine notes for entries whose ``timestamp`` is present but not RFC 3339."""
    bad = frame.filter(pl.col("timestamp").is_not_null() & pl.col("_ts").is_null())
    for line, offset, value in bad.select("line", "offset", "timestamp").iter_rows():
        ctx.repaired(
            line,
            offset,
            f"timestamp {value[:64]!r} is not an RFC 3339 time; the row has no time from it",
        )
