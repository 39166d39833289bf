"""Cloud Logging entries to canonical rows: which LogEntry fields are taken, and how each
column of the canonical row is derived from them (formats.md §1.8).

The reader (:mod:`analyzer.ingest.readers.cloud_logging`) extracts :data:`SPEC`'s fields from
every entry in bulk; :func:`derive_rows` turns them into rows in named steps, every one a
polars expression over the whole chunk: the message, the in-line prefix of the payload, the
keys that decide folding, the folding itself
(:mod:`analyzer.ingest.readers.cloud_logging_folding`), then one expression per column.
The in-line prefix of ``textPayload`` (klog/absl/Python level) decides the severity, because
GKE stamps every stderr line ERROR; the entry's own severity is kept in ``extra``.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from analyzer.hosts import chip_location
from analyzer.ingest.base import ReadContext
from analyzer.ingest.columns import k8s
from analyzer.ingest.columns.extra import compact_json
from analyzer.ingest.columns.timestamps import rfc3339
from analyzer.ingest.json.fields import FieldSpec
from analyzer.ingest.lines.parse import parse_lines
from analyzer.ingest.readers.cloud_logging_folding import fold_entries
from analyzer.schema import host_expr, plausible_ts, severity_expr

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
FIELDS: Final[dict[str, list[str]]] = {
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
RAW: Final[dict[str, list[str]]] = {
    "resource": ["$.resource"],
    "labels": ["$.labels"],
    "jsonPayload": ["$.jsonPayload", "$.json_payload"],
    "protoPayload": ["$.protoPayload", "$.proto_payload"],
    "operation": ["$.operation"],
    "sourceLocation": ["$.sourceLocation"],
    "split": ["$.split"],
    "httpRequest": ["$.httpRequest"],
}

# Node-level logs (kubelet journal, node agents, serial console) and Kubernetes events are the
# kubelet source wherever they were exported from; ML Diagnostics SDK metrics are diagon.
_NODE_LOGS: Final = (
    r"/logs/(?:kubelet|node-problem-detector|container-runtime|docker|kube-node-installation|"
    r"kube-node-configuration|kube-container-runtime-monitor|events|"
    r"serialconsole\.googleapis\.com%2Fserial_port_\d+_output)$"
)
_DIAGON_LOGS: Final = r"/logs/ml_diagnostics_metric$"

#: What the reader extracts from every entry.
SPEC: Final = FieldSpec(FIELDS, RAW)

#: Resource types of container logs (``container`` is the legacy GKE name).
_CONTAINER_TYPES: Final = ("k8s_container", "container")


def derive_rows(frame: pl.DataFrame, tz: str, ctx: ReadContext, framing: str) -> pl.DataFrame:
    """Canonical rows from extracted LogEntry fields (formats.md §1.8).

    ``framing`` is the reader suffix (``jsonl``, ``json_array``, ``csv``, ``api_response``).
    Multi-line records of container text entries are folded into one row on the way.
    """
    frame = _with_message(frame)
    frame = _with_payload_prefix(frame, tz, ctx)
    _note_bad_timestamps(frame, ctx)
    frame = fold_entries(_with_fold_keys(frame), ctx)
    return _canonical(frame, framing)


# -- steps -----------------------------------------------------------------------------------


def _is_event() -> pl.Expr:
    """A Kubernetes event (as the event exporter writes it, or in an ``events`` log)."""
    return (pl.col("j_kind") == "Event") | pl.col("log_name").str.ends_with("/events")


def _stream_log() -> pl.Expr:
    """An entry of a container's stdout/stderr log."""
    return pl.col("log_name").str.contains(r"/logs/(?:stdout|stderr)$")


def _with_message(frame: pl.DataFrame) -> pl.DataFrame:
    """``_message`` (the entry's text, whatever payload holds it), ``_ts`` (the envelope's
    time), ``_received`` (when Cloud Logging received it) and ``_anchor`` (the date that gives
    year-less stamps inside the payload a year)."""
    # Parsed once into columns: an eager frame evaluates an expression again at every use.
    frame = frame.with_columns(
        rfc3339(pl.col("timestamp")).alias("_ts"), rfc3339(pl.col("receive")).alias("_received")
    )
    text_message = pl.col("text_payload").str.replace(r"\r?\n$", "")
    event_message = pl.when(_is_event() & pl.col("j_reason").is_not_null()).then(
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
    return frame.with_columns(
        message.alias("_message"),
        pl.coalesce("_ts", "_received").dt.date().alias("_anchor"),
    )


def _with_payload_prefix(frame: pl.DataFrame, tz: str, ctx: ReadContext) -> pl.DataFrame:
    """The message parsed with the common line grammars, as ``in_*`` columns: a container
    line keeps its own level, logger, stamp and wrappers inside the payload."""
    inner = parse_lines(
        frame["_message"], anchor=frame["_anchor"].fill_null(ctx.anchor_date()), tz=tz
    )
    return pl.concat([frame, inner.select(pl.all().name.prefix("in_"))], how="horizontal")


def _with_fold_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """What folding needs: ``_dk_a``/``_dk_b``, the de-duplication key of the entry
    (``logName``, ``timestamp``, ``insertId``), and ``_foldable``, whether it is a container
    text entry whose lines may fold together."""
    dedup_text = pl.concat_str(
        [pl.col("log_name").fill_null(""), pl.col("timestamp").fill_null(""), pl.col("insert_id")],
        separator="|",
    )
    container_text = (
        pl.col("text_payload").is_not_null()
        & pl.col("_ts").is_not_null()
        & ~_is_event().fill_null(False)
        & (
            pl.col("rtype").is_in(list(_CONTAINER_TYPES))
            | (pl.col("rtype").is_null() & (pl.col("r_container").is_not_null() | _stream_log()))
        )
    ).fill_null(False)
    # The entry's text was only needed for the message: do not carry it through folding.
    return frame.drop("entry").with_columns(
        dedup_text.hash(seed=1).alias("_dk_a"),
        dedup_text.hash(seed=2).alias("_dk_b"),
        container_text.alias("_foldable"),
    )


def _canonical(frame: pl.DataFrame, framing: str) -> pl.DataFrame:
    """The canonical columns of the (folded) entries, one expression per column."""
    # Values several columns use are computed once, as columns (an eager frame evaluates an
    # expression again at every use). Structured kubelet messages name the pod as
    # pod="namespace/name" (formats.md §2.2).
    frame = frame.with_columns(
        k8s.kubelet_pod(pl.col("in_message")).alias("_kubelet_pod"),
        *[severity_expr(pl.col(column)).alias(f"_level_{column}") for column in _LEVELS],
    )
    kubelet_named = pl.col("_kubelet_pod")
    frame = frame.with_columns(
        pl.coalesce(
            pl.col("r_pod"),
            pl.when(pl.col("j_obj_kind") == "Pod").then(pl.col("j_obj_name")),
            kubelet_named.struct.field("name"),
        ).alias("_pod")
    )
    pod = pl.col("_pod")
    frame = frame.with_columns(k8s.pod_parts(pod).alias("_pod_parts"))
    pod_parts = pl.col("_pod_parts")
    severity, origin = _severity()
    ts, quality = _timestamp()
    return frame.select(
        pl.col("line"),
        pl.col("offset"),
        _source().alias("source"),
        pl.lit(f"cloud_logging.{framing}").alias("reader"),
        ts.alias("ts"),
        quality.alias("ts_quality"),
        severity.alias("severity"),
        host_expr(_host()).alias("host"),
        pod.alias("pod"),
        _container().alias("container"),
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
        _logger().alias("logger"),
        pl.col("in_message").alias("message"),
        _extra(origin).alias("extra"),
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


# -- columns ---------------------------------------------------------------------------------


def _source() -> pl.Expr:
    """Node logs and Kubernetes events are the ``kubelet`` source wherever they were exported
    from, ML Diagnostics metrics ``diagon``; the rest ``cloud_logging``."""
    return (
        pl.when(pl.col("log_name").str.contains(_NODE_LOGS) | (pl.col("rtype") == "k8s_node"))
        .then(pl.lit("kubelet"))
        .when(pl.col("log_name").str.contains(_DIAGON_LOGS) | (pl.col("rtype") == "generic_node"))
        .then(pl.lit("diagon"))
        .otherwise(pl.lit("cloud_logging"))
    )


def _timestamp() -> tuple[pl.Expr, pl.Expr]:
    """``ts`` and ``ts_quality``: the envelope's time, else the payload's own stamp, else the
    time Cloud Logging received the entry."""
    ts = pl.coalesce(pl.col("_ts"), pl.col("in_ts"), pl.col("_received"))
    quality = (
        pl.when(pl.col("_ts").is_not_null())
        .then(pl.lit("exact"))
        .when(pl.col("in_ts").is_not_null())
        .then(pl.col("in_ts_quality"))
        .when(ts.is_not_null())
        .then(pl.lit("exact"))
    )
    return ts, quality


#: The levels an entry may carry, most trusted first: the payload's own, the JSON payload's,
#: journald's PRIORITY, the entry's (``_canonical`` maps each onto the scale as ``_level_*``).
_LEVELS: Final = ("in_level", "j_severity", "j_priority", "severity")


def _severity() -> tuple[pl.Expr, pl.Expr]:
    """``severity`` and where it came from (for ``extra``): the payload's own level first,
    because GKE marks every stderr line ERROR, then the JSON payload's, journald's PRIORITY,
    and last the entry's."""
    payload_level, json_level, priority_level, entry_level = (
        pl.col(f"_level_{column}") for column in _LEVELS
    )
    origin = (
        pl.when(payload_level.is_not_null())
        .then(pl.lit("payload"))
        .when(json_level.is_not_null())
        .then(pl.lit("json"))
        .when(priority_level.is_not_null())
        .then(pl.lit("priority"))
        .when(entry_level.is_not_null() & _stream_log())
        .then(pl.lit("stream_default"))
        .when(entry_level.is_not_null())
        .then(pl.lit("entry"))
    )
    return pl.coalesce(payload_level, json_level, priority_level, entry_level), origin


def _host() -> pl.Expr:
    """The node or VM an entry is about, from the most specific field that names one."""
    return pl.coalesce(
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


def _container() -> pl.Expr:
    """The container: the resource's, an event's object field path, the payload's wrapper or
    a structured kubelet message's ``containerName``."""
    return pl.coalesce(
        pl.col("r_container"),
        pl.col("j_obj_field").str.extract(r"spec\.(?:initContainers|containers)\{([^}]+)\}", 1),
        pl.col("in_container"),
        k8s.kubelet_container(pl.col("in_message")),
    )


def _logger() -> pl.Expr:
    """The payload's logger, journald's identifier, an event's reason, an audit entry's
    method, or the entry's source location."""
    source_location = pl.when(pl.col("src_file").is_not_null()).then(
        pl.concat_str([pl.col("src_file"), pl.lit(":"), pl.col("src_line")], ignore_nulls=True)
    )
    return pl.coalesce(
        pl.col("in_logger"),
        pl.col("j_ident"),
        pl.when(_is_event()).then(pl.col("j_reason")),
        pl.col("p_method"),
        source_location,
    )


def _extra(origin: pl.Expr) -> pl.Expr:
    """``extra``: envelope fields, how a folded row was made, kubelet fields and the entry's
    sub-objects verbatim."""
    return compact_json(
        [
            ("logName", pl.col("log_name"), "text"),
            ("severity", pl.col("severity"), "text"),
            ("severity_origin", origin, "token"),
            ("receiveTimestamp", pl.col("receive"), "text"),
            (
                "payload_ts",
                pl.when(pl.col("_ts").is_not_null() & plausible_ts(pl.col("in_ts")))
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
            *[(name, pl.col(f"raw_{name}"), "raw") for name in RAW],
        ]
    )


def _note_bad_timestamps(frame: pl.DataFrame, ctx: ReadContext) -> None:
    """Quarantine notes for entries whose ``timestamp`` is present but not RFC 3339."""
    bad = frame.filter(pl.col("timestamp").is_not_null() & pl.col("_ts").is_null())
    for line, offset, value in bad.select("line", "offset", "timestamp").iter_rows():
        ctx.repaired(
            line,
            offset,
            f"timestamp {value[:64]!r} is not an RFC 3339 time; the row has no time from it",
        )
