"""The plan for a JobSet (or any labelled set of pods) on GKE, TPU or not.

Discovery first (``kubectl get pods`` of the workload, ``kubectl get nodes`` of the nodes
they run on, the ML Diagnostics pods when they are deployed), then, from what it found:

* container logs of every pod, current and (for restarted containers) previous, with
  ``--timestamps``, as ``kubectl/<node>/<pod>.<container>[.previous].log``;
* Cloud Logging, every query limited to the window: the workload's containers (all its
  restart attempts, deleted pods included), the kubelet, container runtime and
  node-problem-detector of its nodes, Kubernetes events, the GCE system events
  (preemption, maintenance, host errors) and serial console of the instances behind the
  nodes, and the cluster's admin-activity audit entries for the namespace's objects, as
  ``gcloud/*.json`` arrays (what ``gcloud logging read --format=json`` prints);
* ML Diagnostics: its daemon's logs per node (``nodes/<node>/<pod>.log``), the connection
  operator's, and the ML runs.

The Kubernetes objects listed (pods, nodes, the JobSet, its Jobs, events) are kept as JSON in
the collection's record (``culprit-collect/k8s/``) for people: they are not logs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from analyzer.collect import logging_filter as lf
from analyzer.collect.plan import RECORD_DIR, Plan, Step
from analyzer.errors import CollectError, UsageError

#: Namespaces the ML Diagnostics ("Diagon") components run in (formats.md §4: the SDK README
#: says ``gke-mldiagnostics``, the samples ``gke-diagon``).
DIAGON_NAMESPACES: Final = ("gke-mldiagnostics", "gke-diagon")
NODE_LOGS: Final = ("kubelet", "container-runtime", "node-problem-detector")
_JOBSET_LABEL: Final = "jobset.sigs.k8s.io/jobset-name"
_LABEL_KEY: Final = re.compile(
    r"^(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_NAME: Final = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_PROVIDER: Final = re.compile(r"^gce://(?P<project>[^/]+)/(?P<zone>[^/]+)/(?P<instance>[^/]+)$")

_K8S: Final = f"{RECORD_DIR}/k8s"
_VIEWER: Final = "roles/container.viewer"
_RBAC_PODS: Final = (
    f"Kubernetes RBAC: list pods in {{ns}} (GKE IAM: container.pods.list, {_VIEWER})"
)
_RBAC_LOGS: Final = (
    f"Kubernetes RBAC: get pods/log in {{ns}} (GKE IAM: container.pods.getLogs, {_VIEWER})"
)
_RBAC_NODES: Final = (
    f"Kubernetes RBAC: get nodes, cluster-wide (GKE IAM: container.nodes.get, {_VIEWER})"
)
_RBAC_JOBSETS: Final = (
    f"Kubernetes RBAC: get jobsets.jobset.x-k8s.io in {{ns}} (GKE IAM: {_VIEWER})"
)
_RBAC_JOBS: Final = (
    f"Kubernetes RBAC: list jobs.batch in {{ns}} (GKE IAM: container.jobs.list, {_VIEWER})"
)
_RBAC_EVENTS: Final = (
    f"Kubernetes RBAC: list events in {{ns}} (GKE IAM: container.events.list, {_VIEWER})"
)
_LOGGING: Final = "IAM: logging.logEntries.list on project {project} (roles/logging.viewer)"
_MLDIAG: Final = (
    "IAM: read access to ML Diagnostics runs in project {project} (the Cluster Director API "
    "enabled; see the ML Diagnostics prerequisites); gcloud's alpha component"
)


@dataclass(frozen=True)
class GkeTarget:
    """What to collect: the workload's pods (``--jobset`` or ``--selector``) in a cluster."""

    project: str
    cluster: str
    location: str
    namespace: str
    jobset: str | None
    selector: str | None
    window: tuple[str, str]
    context: str | None = None

    def __post_init__(self) -> None:
        if (self.jobset is None) == (self.selector is None):
            raise UsageError("give --jobset NAME or --selector SELECTOR (one of them)")
        for option, value in (("--namespace", self.namespace), ("--jobset", self.jobset)):
            if value is not None and not _NAME.match(value):
                raise UsageError(f"{option} {value!r} is not a Kubernetes name")
        self.labels()  # refuse a selector Cloud Logging cannot express, before anything runs

    @property
    def pod_selector(self) -> str:
        return f"{_JOBSET_LABEL}={self.jobset}" if self.jobset else str(self.selector)

    def labels(self) -> list[tuple[str, str]]:
        """The selector as ``key=value`` pairs (what a Cloud Logging filter can express).

        Raises:
            UsageError: a set-based or negated selector.
        """
        pairs = []
        for term in self.pod_selector.split(","):
            key, equals, value = term.strip().partition("=")
            key, value = key.rstrip("="), value.lstrip("=")
            if not equals or not _LABEL_KEY.match(key) or not re.match(r"^[-A-Za-z0-9_.]*$", value):
                raise UsageError(
                    f"--selector {self.pod_selector!r}: only key=value terms (joined by commas) "
                    "can be turned into a Cloud Logging filter"
                )
            pairs.append((key, value))
        return pairs

    @property
    def region(self) -> str:
        """The cluster's region (a zonal cluster's zone without its letter)."""
        return re.sub(r"^([a-z]+-[a-z]+\d+)-[a-z]$", r"\1", self.location)

    def kubectl(self, *words: str) -> tuple[str, ...]:
        context = ("--context", self.context) if self.context else ()
        return ("kubectl", *context, *words)

    def as_record(self) -> dict[str, str]:
        record = {
            "project": self.project,
            "cluster": self.cluster,
            "location": self.location,
            "namespace": self.namespace,
            "selector": self.pod_selector,
        }
        if self.context:
            record["context"] = self.context
        return record


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    node: str | None
    containers: tuple[str, ...]
    #: Containers that restarted: their previous instance's log may still be there.
    restarted: tuple[str, ...]


@dataclass(frozen=True)
class Node:
    name: str
    #: The GCE instance behind it (``spec.providerID``), and its zone.
    instance: str
    zone: str | None


def _items(data: bytes, where: str) -> list[dict[str, Any]]:
    """The ``items`` of a ``kubectl get … -o json`` list."""
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CollectError(f"not the JSON kubectl prints: {exc}", path=where) from None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise CollectError("no `items` list: not `kubectl get … -o json` output", path=where)
    return [i for i in items if isinstance(i, dict)]


def parse_pods(data: bytes, where: str) -> list[Pod]:
    """The pods of a ``kubectl get pods -o json`` list."""
    pods = []
    for item in _items(data, where):
        meta, spec, status = (item.get(k) or {} for k in ("metadata", "spec", "status"))
        name = meta.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            continue
        containers = tuple(
            c["name"] for c in spec.get("containers") or [] if isinstance(c.get("name"), str)
        )
        restarted = tuple(
            c["name"]
            for c in status.get("containerStatuses") or []
            if isinstance(c.get("name"), str) and (c.get("restartCount") or 0) > 0
        )
        node = spec.get("nodeName")
        pods.append(
            Pod(
                name=name,
                namespace=str(meta.get("namespace") or ""),
                node=node if isinstance(node, str) and _NAME.match(node) else None,
                containers=tuple(c for c in containers if _NAME.match(c)),
                restarted=tuple(c for c in restarted if _NAME.match(c)),
            )
        )
    return sorted(pods, key=lambda p: p.name)


def parse_nodes(data: bytes, where: str) -> list[Node]:
    """The nodes of a ``kubectl get nodes -o json`` list, with their instances."""
    nodes = []
    for item in _items(data, where):
        name = (item.get("metadata") or {}).get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            continue
        match = _PROVIDER.match(str((item.get("spec") or {}).get("providerID") or ""))
        instance = match["instance"] if match else name
        nodes.append(Node(name, instance, match["zone"] if match else None))
    return sorted(nodes, key=lambda n: n.name)


# -- the steps ----------------------------------------------------------------------------------


def pods_step(target: GkeTarget, cap: int) -> Step:
    return Step(
        id="k8s-pods",
        source="kubectl",
        argv=target.kubectl(
            "get",
            "pods",
            "--namespace",
            target.namespace,
            "--selector",
            target.pod_selector,
            "--output",
            "json",
        ),
        output=f"{_K8S}/pods.json",
        why="which pods the workload has, the nodes they run on, which containers restarted",
        permission=_RBAC_PODS.format(ns=target.namespace),
        cap=cap,
        discovery=True,
    )


def nodes_step(target: GkeTarget, nodes: list[str], cap: int) -> Step:
    return Step(
        id="k8s-nodes",
        source="kubectl",
        argv=target.kubectl("get", "nodes", *nodes, "--output", "json"),
        output=f"{_K8S}/nodes.json",
        why="the GCE instance (and zone) behind each node, its labels (TPU type, topology)",
        permission=_RBAC_NODES,
        cap=cap,
        discovery=True,
    )


def diagon_step(target: GkeTarget, namespace: str, cap: int) -> Step:
    return Step(
        id=f"k8s-diagon-{namespace}",
        source="kubectl",
        argv=target.kubectl("get", "pods", "--namespace", namespace, "--output", "json"),
        output=f"{_K8S}/pods-{namespace}.json",
        why="whether ML Diagnostics is deployed, and its daemon's pod on each node",
        permission=_RBAC_PODS.format(ns=namespace),
        cap=cap,
        discovery=True,
    )


def _objects(target: GkeTarget, cap: int) -> list[Step]:
    ns = target.namespace
    steps = []
    if target.jobset:
        steps.append(
            Step(
                id="k8s-jobset",
                source="kubectl",
                argv=target.kubectl(
                    "get", "jobsets", target.jobset, "--namespace", ns, "--output", "json"
                ),
                output=f"{_K8S}/jobset.json",
                why="the JobSet's spec and status: restarts so far, failure policy, why it ended",
                permission=_RBAC_JOBSETS.format(ns=ns),
                cap=cap,
            )
        )
    steps += [
        Step(
            id="k8s-jobs",
            source="kubectl",
            argv=target.kubectl(
                "get",
                "jobs",
                "--namespace",
                ns,
                "--selector",
                target.pod_selector,
                "--output",
                "json",
            ),
            output=f"{_K8S}/jobs.json",
            why="the Jobs behind the pods: completions, failures and their conditions",
            permission=_RBAC_JOBS.format(ns=ns),
            cap=cap,
        ),
        Step(
            id="k8s-events",
            source="kubectl",
            argv=target.kubectl("get", "events", "--namespace", ns, "--output", "json"),
            output=f"{_K8S}/events.json",
            why="the namespace's events while they last (the API keeps them about an hour)",
            permission=_RBAC_EVENTS.format(ns=ns),
            cap=cap,
        ),
    ]
    return steps


def _logs(target: GkeTarget, pod: Pod, cap: int, *, diagon: bool = False) -> list[Step]:
    folder = f"nodes/{pod.node}" if diagon and pod.node else "mldiagnostics"
    steps = []
    for container in pod.containers:
        for previous in (False, True):
            if previous and container not in pod.restarted:
                continue
            suffix = ".previous" if previous else ""
            prefix = "diagon" if diagon else "logs"
            output = (
                f"{folder}/{pod.name}.{container}{suffix}.log"
                if diagon
                else f"kubectl/{pod.node or 'unscheduled'}/{pod.name}.{container}{suffix}.log"
            )
            steps.append(
                Step(
                    id=f"{prefix}-{pod.name}-{container}{suffix}",
                    source="kubectl",
                    argv=target.kubectl(
                        "logs",
                        pod.name,
                        "--namespace",
                        pod.namespace or target.namespace,
                        "--container",
                        container,
                        "--timestamps",
                        f"--since-time={target.window[0]}",
                        *(["--previous"] if previous else []),
                    ),
                    output=output,
                    why=(
                        "the ML Diagnostics component's own log (liveness of its node)"
                        if diagon
                        else "the container's log as the runtime kept it, "
                        + ("before its last restart" if previous else "current")
                        + " (stamped by the runtime)"
                    ),
                    permission=_RBAC_LOGS.format(ns=pod.namespace or target.namespace),
                    cap=cap,
                )
            )
    return steps


def _read(target: GkeTarget, id: str, output: str, query: str, why: str, cap: int) -> Step:
    return Step(
        id=id,
        source="cloud-logging",
        argv=(
            "gcloud",
            "logging",
            "read",
            query,
            f"--project={target.project}",
            "--format=json",
            "--order=asc",
        ),
        output=output,
        why=why,
        permission=_LOGGING.format(project=target.project),
        cap=cap,
    )


def _numbered(base: str, index: int, count: int) -> str:
    return base if count == 1 else f"{base}-{index + 1:02d}"


def _logging(target: GkeTarget, nodes: list[Node], cap: int) -> list[Step]:
    p, c, window = target.project, target.cluster, lf.in_window(*target.window)
    cluster = f"resource.labels.cluster_name={lf.quoted(c)}"
    labels = [f'labels."k8s-pod/{k.replace(".", "_")}"={lf.quoted(v)}' for k, v in target.labels()]
    steps = [
        _read(
            target,
            "logging-containers",
            "gcloud/containers.json",
            lf.conjunction(
                'resource.type="k8s_container"',
                cluster,
                f"resource.labels.namespace_name={lf.quoted(target.namespace)}",
                *labels,
                lf.log_names(p, ["stdout", "stderr"]),
                window,
            ),
            "the workload's containers over every restart attempt, deleted pods included",
            cap,
        ),
        _read(
            target,
            "logging-events",
            "gcloud/events.json",
            lf.conjunction(
                lf.log_names(p, ["events"]),
                cluster,
                f"(resource.labels.namespace_name={lf.quoted(target.namespace)} "
                'OR resource.type="k8s_node")',
                window,
            ),
            "Kubernetes events of the namespace and the nodes, kept past the API's hour",
            cap,
        ),
        _read(
            target,
            "logging-audit",
            "gcloud/activity.json",
            lf.conjunction(
                lf.log_names(p, ["cloudaudit.googleapis.com/activity"]),
                'resource.type="k8s_cluster"',
                cluster,
                f"protoPayload.resourceName:{lf.quoted(f'namespaces/{target.namespace}/')}",
                window,
            ),
            "who created, changed or deleted the workload's objects (admin-activity audit)",
            cap,
        ),
    ]
    names = [n.name for n in nodes]
    groups = lf.chunks(names, "resource.labels.node_name")
    for i, group in enumerate(groups):
        steps.append(
            _read(
                target,
                _numbered("logging-nodes", i, len(groups)),
                _numbered("gcloud/nodes", i, len(groups)) + ".json",
                lf.conjunction(
                    'resource.type="k8s_node"',
                    cluster,
                    lf.any_of("resource.labels.node_name", group),
                    lf.log_names(p, NODE_LOGS),
                    window,
                ),
                "the kubelet, container runtime and node-problem-detector of the workload's "
                "nodes (OOM kills, evictions, shutdowns, device plugin errors)",
                cap,
            )
        )
    resources = [
        f"projects/{p}/zones/{n.zone}/instances/{n.instance}" for n in nodes if n.zone is not None
    ]
    groups = lf.chunks(resources, "protoPayload.resourceName")
    for i, group in enumerate(groups):
        steps.append(
            _read(
                target,
                _numbered("logging-system-events", i, len(groups)),
                _numbered("gcloud/system_event", i, len(groups)) + ".json",
                lf.conjunction(
                    'resource.type="gce_instance"',
                    lf.log_names(p, ["cloudaudit.googleapis.com/system_event"]),
                    lf.any_of("protoPayload.resourceName", group),
                    window,
                ),
                "GCE system events of the instances behind the nodes: preemption, host "
                "maintenance, host errors",
                cap,
            )
        )
    instances = [n.instance for n in nodes]
    field = 'labels."compute.googleapis.com/resource_name"'
    groups = lf.chunks(instances, field)
    for i, group in enumerate(groups):
        steps.append(
            _read(
                target,
                _numbered("logging-serial-console", i, len(groups)),
                _numbered("gcloud/serial_port_1_output", i, len(groups)) + ".json",
                lf.conjunction(
                    'resource.type="gce_instance"',
                    lf.log_names(p, ["serialconsole.googleapis.com/serial_port_1_output"]),
                    lf.any_of(field, group),
                    window,
                ),
                "the instances' serial console: kernel messages (OOM killer, hardware "
                "errors) when serial port logging is on",
                cap,
            )
        )
    return steps


def plan(
    target: GkeTarget,
    discover: Callable[[Step], bytes],
    *,
    cap: int,
    total_cap: int,
) -> Plan:
    """The whole plan: discovery through ``discover`` (it runs a step and returns its
    output), then every command built from what it found.

    Raises:
        CollectError: the workload's pods cannot be listed, or none match.
    """
    first = pods_step(target, cap)
    pods = parse_pods(discover(first), first.output)
    if not pods:
        raise CollectError(
            f"no pod in namespace {target.namespace} matches {target.pod_selector} "
            "(a finished JobSet's pods may be gone: Cloud Logging still has their logs; "
            "check the namespace and selector)",
            path=first.output,
        )
    steps = [first]
    node_names = sorted({p.node for p in pods if p.node})
    nodes: list[Node] = []
    notes: list[str] = []
    if node_names:
        step = nodes_step(target, node_names, cap)
        steps.append(step)
        try:
            nodes = parse_nodes(discover(step), step.output)
        except CollectError as exc:
            notes.append(f"nodes not listed ({exc}); instance names taken from node names")
        known = {n.name for n in nodes}
        nodes += [Node(n, n, None) for n in node_names if n not in known]
    diagon: list[Pod] = []
    for namespace in DIAGON_NAMESPACES:
        step = diagon_step(target, namespace, cap)
        steps.append(step)
        try:
            found = parse_pods(discover(step), step.output)
        except CollectError:
            continue  # not deployed there (or not visible): recorded, nothing to collect
        diagon += [p for p in found if p.node in node_names or "operator" in p.name]
    steps += _objects(target, cap)
    for pod in pods:
        steps += _logs(target, pod, cap)
    steps += _logging(target, nodes, cap)
    for pod in diagon:
        steps += _logs(target, pod, cap, diagon=True)
    if diagon:
        steps.append(
            Step(
                id="mldiagnostics-runs",
                source="mldiagnostics",
                argv=(
                    "gcloud",
                    "alpha",
                    "mldiagnostics",
                    "machine-learning-run",
                    "list",
                    f"--location={target.region}",
                    f"--project={target.project}",
                    "--format=json",
                ),
                output="mldiagnostics/machine-learning-runs.json",
                why="ML Diagnostics runs: the workload's run, its state and configuration",
                permission=_MLDIAG.format(project=target.project),
                cap=cap,
            )
        )
    if any(n.zone is None for n in nodes):
        notes.append("some nodes have no GCE providerID: their system events are not asked for")
    return Plan(
        platform="gke",
        target=target.as_record(),
        window=target.window,
        steps=tuple(steps),
        total_cap=total_cap,
        notes=tuple(notes),
    )
