"""Kubernetes names inside log lines, as polars expressions shared by several readers.

Structured kubelet messages carry ``pod="namespace/name"``, ``podUID=…``,
``containerName="…"``, ``containerID="containerd://…"`` and ``err="…"`` (formats.md §2.2);
JobSet pod names encode the JobSet, job index and pod index (§5.4). Every reader that meets
them derives the same columns the same way.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from analyzer.hosts import POD_NAME
from analyzer.ingest.columns.extra import Kind

KUBELET_POD: Final = r'\bpod="(?P<ns>[^/"\s]+)/(?P<name>[^"\s]+)"'
# SyncLoop ADD/UPDATE/DELETE name their pods as a list: pods=["ns/name"].
_KUBELET_PODS: Final = r'\bpods=\["(?P<ns>[^/"\s]+)/(?P<name>[^"\s]+)"\]'
_CONTAINER: Final = r'\bcontainerName="([^"]+)"'
_POD_UID: Final = r'\bpodUID="?([0-9a-f][0-9a-f-]{7,})"?'
_CONTAINER_ID: Final = r'\bcontainerID="?([a-z]+://[0-9a-f]+)"?'
_ERR: Final = r'\berr="((?:[^"\\]|\\.)*)"'
_EXIT_CODE: Final = r"\bexitCode=(-?\d+)"


def kubelet_pod(message: pl.Expr) -> pl.Expr:
    """Struct with ``ns`` and ``name`` of the pod a structured kubelet message names
    (``pod="ns/name"``, or a one-pod list ``pods=["ns/name"]``)."""
    return named_pod(*kubelet_pod_matches(message))


def kubelet_pod_matches(message: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """The two matches :func:`kubelet_pod` combines (``pod="…"``, ``pods=[…]``): structs of
    ``ns`` and ``name``, to be kept as columns where an eager frame would otherwise run each
    regex twice."""
    return message.str.extract_groups(KUBELET_POD), message.str.extract_groups(_KUBELET_PODS)


def named_pod(one: pl.Expr, listed: pl.Expr) -> pl.Expr:
    """The pod of :func:`kubelet_pod` from its two matches."""
    return pl.struct(
        pl.coalesce(one.struct.field("ns"), listed.struct.field("ns")).alias("ns"),
        pl.coalesce(one.struct.field("name"), listed.struct.field("name")).alias("name"),
    )


def kubelet_container(message: pl.Expr) -> pl.Expr:
    """The ``containerName`` a structured kubelet message names."""
    return message.str.extract(_CONTAINER, 1)


def kubelet_extra(message: pl.Expr) -> list[tuple[str, pl.Expr, Kind]]:
    """Further kubelet key=value fields worth keeping in ``extra``."""
    return [
        ("podUID", message.str.extract(_POD_UID, 1), "token"),
        ("containerID", message.str.extract(_CONTAINER_ID, 1), "text"),
        ("exitCode", message.str.extract(_EXIT_CODE, 1).cast(pl.Int64, strict=False), "number"),
        ("err", message.str.extract(_ERR, 1), "text"),
    ]


def pod_parts(pod: pl.Expr) -> pl.Expr:
    """Struct with ``base`` (JobSet + replicated job), ``job`` and ``idx`` of a JobSet pod."""
    return pod.str.extract_groups(POD_NAME)


#: ``kubectl describe`` output: a block per object, opened by its ``Name:`` line.
_DESCRIBE_NAME: Final = r"^Name:\s+([^\s/]+)\s*$"
#: The node a described pod runs on (``Node: gke-pool-1-abc/10.0.0.7``, or ``Host:`` in
#: old releases); an unscheduled pod has ``Node: <none>``.
_DESCRIBE_NODE: Final = r"^(?:Node|Host):\s+([^\s/<][^\s/]*)"
#: Fields only a pod's description has, and fields only a node's has.
_POD_FIELDS: Final = r"^(?:Namespace|Node|Host|Image\(s\)|Controlled By|Containers|QoS Class):"
#: The scheduler's event that places a pod: it names the pod and node of the event table.
_ASSIGNED: Final = r"Successfully assigned (?:[^/\s]+/)?(?P<pod>[^\s/]+) to (?P<node>[^\s/]+)"
_NODE_FIELDS: Final = r"^(?:Roles|Taints|Unschedulable|Addresses|Capacity|System Info):"


def describe_subjects(lines: pl.LazyFrame) -> pl.LazyFrame:
    """Fill ``pod`` and ``host`` of the lines of ``kubectl describe pod|node`` output from the
    block they are in: a pod block names the pod (its ``Name:``) and its node (``Node:``),
    a node block names the node. Lines outside such blocks, and lines that name their own
    pod or host, keep theirs. The rows of an event table (``grammar`` of the kubectl family)
    whose block does not say take the pod and node from the table's ``Scheduled`` event
    ("Successfully assigned ns/pod to node"), as excerpts that start at ``Events:`` show them.
    ``lines`` needs ``text``, ``grammar``, ``pod``, ``host`` and ``batch_file`` (blocks never
    run from one file into the next)."""
    text = pl.col("text")
    event = pl.col("grammar").str.starts_with("kubectl").fill_null(False)
    # Without a block or an event table, no line changes: the windows below cost a group-by
    # each, and most text has neither.
    if not lines.select((text.str.contains(_DESCRIBE_NAME) | event).any()).collect().item():
        return lines
    block = text.str.contains(_DESCRIBE_NAME).cast(pl.UInt32).cum_sum().over("batch_file")
    within = ["batch_file", "_block"]
    marked = lines.with_columns(block.alias("_block")).with_columns(
        text.str.extract(_DESCRIBE_NAME, 1).first().over(within).alias("_name"),
        text.str.extract(_DESCRIBE_NODE, 1).drop_nulls().first().over(within).alias("_node"),
        text.str.contains(_POD_FIELDS).any().over(within).alias("_is_pod"),
        text.str.contains(_NODE_FIELDS).any().over(within).alias("_is_node"),
        text.str.extract(_ASSIGNED, 1).drop_nulls().first().over(within).alias("_assigned_pod"),
        text.str.extract(_ASSIGNED, 2).drop_nulls().first().over(within).alias("_assigned_node"),
    )
    in_block = pl.col("_block") > 0
    is_pod = in_block & pl.col("_is_pod") & pl.col("_name").is_not_null()
    is_node = in_block & ~pl.col("_is_pod") & pl.col("_is_node") & pl.col("_name").is_not_null()
    return marked.with_columns(
        pl.coalesce(
            pl.col("pod"),
            pl.when(is_pod).then(pl.col("_name")),
            pl.when(event).then(pl.col("_assigned_pod")),
        ).alias("pod"),
        pl.coalesce(
            pl.col("host"),
            pl.when(is_pod).then(pl.col("_node")).when(is_node).then(pl.col("_name")),
            pl.when(event).then(pl.col("_assigned_node")),
        ).alias("host"),
    ).drop("_block", "_name", "_node", "_is_pod", "_is_node", "_assigned_pod", "_assigned_node")
