"""A generated scenario's bundle turned into what the live clouds would answer, for the fakes.

GKE: the current pods (the last restart attempt's) and their nodes as ``kubectl get -o json``
lists; each pod's lines as ``kubectl logs --timestamps`` prints them; the scenario's sink
entries, events, system events and serial console as ``gcloud logging read --format=json``
arrays; each node's journal as the Cloud Logging entries GKE exports (kubelet and containerd
as ``kubelet``/``container-runtime`` journald entries, kernel lines on the serial console);
the ML Diagnostics daemon logs and ML run. ModelArts: the job's API documents (events split
by level), each task's log preview, its OBS URL, and the log itself behind the URL.

Every output is derived from the files the generator wrote, so the formats are the ones the
readers are tested on; nothing here looks at culprit's code.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixtures.writers.cloud_logging import array_element
from tests.collect.fakes import FakeCloud, Rule

_JOURNAL = re.compile(
    r"^(?P<month>\w{3}) (?P<day>\d{2}) (?P<time>\d{2}:\d{2}:\d{2}\.\d{6}) (?P<node>\S+) "
    r"(?P<ident>[\w.-]+)(?:\[(?P<pid>\d+)\])?: (?P<message>.*)$"
)
_GLOG = re.compile(r"^[IWEF](?P<md>\d{4}) (?P<time>\d{2}:\d{2}:\d{2}\.\d{6})")
_YEAR = re.compile(r"Logs begin at \w{3} (\d{4})-")


def gcloud_array(entries: list[dict[str, Any]]) -> str:
    """Entries as ``gcloud logging read --format=json --order=asc`` prints them."""
    if not entries:
        return "[]\n"
    ordered = sorted(entries, key=lambda e: (e["timestamp"], e.get("insertId", "")))
    return "[\n" + ",\n".join(array_element(e) for e in ordered) + "\n]\n"


def _insert_id(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _k8s_list(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=4) + "\n"


@dataclass
class GkeWorld:
    """The scenario's names: what ``culprit collect gke`` is asked for."""

    project: str
    cluster: str
    location: str
    namespace: str
    jobset: str
    zone: str
    pods: dict[str, str]  # current pod -> node
    container: str
    nodes: list[str]
    start: str
    end: str

    def args(self) -> list[str]:
        return [
            "--project",
            self.project,
            "--cluster",
            self.cluster,
            "--location",
            self.location,
            "--namespace",
            self.namespace,
            "--jobset",
            self.jobset,
            "--start",
            self.start,
            "--end",
            self.end,
        ]


def gke_target_args(jobset: str) -> list[str]:
    """``culprit collect gke`` arguments naming a workload of no particular world."""
    names = ("--project", "p", "--cluster", "c", "--location", "us-east5", "--namespace", "ml")
    return [*names, "--jobset", jobset]


def _sink_entries(bundle: Path) -> list[dict[str, Any]]:
    entries = []
    for path in sorted((bundle / "gcs").rglob("*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entries.append(json.loads(line))
    return entries


def _journal_entries(
    bundle: Path, project: str, cluster: str, location: str, zone: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each node's journal as Cloud Logging entries: (k8s_node entries, serial console)."""
    nodes, serial = [], []
    for path in sorted((bundle / "nodes").glob("*/journal.log")):
        text = path.read_text(encoding="utf-8").splitlines()
        year = _YEAR.search(text[0])
        assert year, path
        for line in text[1:]:
            match = _JOURNAL.match(line)
            assert match, line
            when = datetime.strptime(
                f"{year[1]} {match['month']} {match['day']} {match['time']}", "%Y %b %d %H:%M:%S.%f"
            ).replace(tzinfo=UTC)
            stamp = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            node, ident = match["node"], match["ident"]
            iid = _insert_id(node, stamp, match["message"])
            if ident == "kernel":
                serial.append(
                    {
                        "insertId": iid,
                        "labels": {"compute.googleapis.com/resource_name": node},
                        "logName": f"projects/{project}/logs/serialconsole.googleapis.com%2Fserial_port_1_output",
                        "receiveTimestamp": stamp,
                        "resource": {
                            "labels": {
                                "instance_id": str(int(iid, 16) % 10**19),
                                "project_id": project,
                                "zone": zone,
                            },
                            "type": "gce_instance",
                        },
                        "textPayload": match["message"],
                        "timestamp": stamp,
                    }
                )
                continue
            log = {"kubelet": "kubelet", "containerd": "container-runtime"}[ident]
            nodes.append(
                {
                    "insertId": iid,
                    "jsonPayload": {
                        "MESSAGE": match["message"],
                        "PRIORITY": "6",
                        "SYSLOG_IDENTIFIER": ident,
                        "_HOSTNAME": node,
                        "_PID": match["pid"],
                        "_SYSTEMD_UNIT": f"{ident}.service",
                        "_TRANSPORT": "stdout",
                    },
                    "logName": f"projects/{project}/logs/{log}",
                    "receiveTimestamp": stamp,
                    "resource": {
                        "labels": {
                            "cluster_name": cluster,
                            "location": location,
                            "node_name": node,
                            "project_id": project,
                        },
                        "type": "k8s_node",
                    },
                    "timestamp": stamp,
                }
            )
    return nodes, serial


def _gcloud_file(bundle: Path, name: str) -> list[dict[str, Any]]:
    path = bundle / "gcloud" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def gke_world(bundle: Path, cloud: FakeCloud) -> GkeWorld:
    """Rules and files for the fakes from a generated GKE scenario's ``bundle``."""
    entries = _sink_entries(bundle)
    first = entries[0]
    project = first["logName"].split("/")[1]
    labels, resource = first["labels"], first["resource"]["labels"]
    cluster, location = resource["cluster_name"], resource["location"]
    namespace, container = resource["namespace_name"], resource["container_name"]
    jobset = labels["k8s-pod/jobset_sigs_k8s_io/jobset-name"]
    system = _gcloud_file(bundle, "system_event.json")
    zone = system[0]["resource"]["labels"]["zone"] if system else f"{location}-a"
    attempt = max(int(e["labels"]["k8s-pod/jobset_sigs_k8s_io/restart-attempt"]) for e in entries)
    pods: dict[str, str] = {}
    lines: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for entry in entries:
        pod = entry["resource"]["labels"]["pod_name"]
        lines[pod].append((entry["timestamp"], entry["textPayload"].rstrip("\n")))
        if int(entry["labels"]["k8s-pod/jobset_sigs_k8s_io/restart-attempt"]) == attempt:
            pods[pod] = entry["labels"]["compute.googleapis.com/resource_name"]
    nodes = sorted(set(pods.values()))
    stamps = sorted(e["timestamp"] for e in entries)
    world = GkeWorld(
        project,
        cluster,
        location,
        namespace,
        jobset,
        zone,
        dict(sorted(pods.items())),
        container,
        nodes,
        stamps[0][:16] + ":00Z",
        "2027-01-01T00:00:00Z",
    )
    selector = f"jobset.sigs.k8s.io/jobset-name={jobset}"
    pod_items = [
        {
            "metadata": {
                "name": pod,
                "namespace": namespace,
                "labels": {"jobset.sigs.k8s.io/jobset-name": jobset},
            },
            "spec": {"nodeName": node, "containers": [{"name": container}]},
            "status": {
                "phase": "Failed",
                "containerStatuses": [{"name": container, "restartCount": 0}],
            },
        }
        for pod, node in world.pods.items()
    ]
    cloud.add(
        Rule(
            "kubectl",
            ["get", "pods", "--namespace", namespace, "--selector", selector, "--output", "json"],
            stdout=cloud.file("pods.json", _k8s_list(pod_items)),
        )
    )
    node_items = [
        {
            "metadata": {
                "name": n,
                "labels": {"cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice"},
            },
            "spec": {"providerID": f"gce://{project}/{zone}/{n}"},
        }
        for n in nodes
    ]
    cloud.add(
        Rule(
            "kubectl",
            ["get", "nodes", *nodes, "--output", "json"],
            stdout=cloud.file("nodes.json", _k8s_list(node_items)),
        )
    )
    cloud.add(
        Rule(
            "kubectl",
            ["get", "jobsets", jobset, "--namespace", namespace],
            text=json.dumps({"kind": "JobSet", "metadata": {"name": jobset}, "status": {}}),
        )
    )
    cloud.add(
        Rule(
            "kubectl",
            ["get", "jobs", "--namespace", namespace, "--selector", selector],
            text=_k8s_list([]),
        )
    )
    cloud.add(Rule("kubectl", ["get", "events", "--namespace", namespace], text=_k8s_list([])))
    for pod in world.pods:
        text = "".join(f"{t} {m}\n" for t, m in sorted(lines[pod]))
        cloud.add(
            Rule(
                "kubectl",
                ["logs", pod, "--namespace", namespace, "--container", container, "--timestamps"],
                contains=[f"--since-time={world.start}"],
                stdout=cloud.file(f"logs/{pod}.log", text),
            )
        )
    daemons = []
    for path in sorted((bundle / "nodes").glob("*/diagon-daemon.log")):
        node = path.parent.name
        if node not in nodes:
            continue
        pod = "diagon-daemon-" + hashlib.sha256(node.encode()).hexdigest()[:5]
        pod = pod[:-5] + "".join("bcdfghjklmnpqrstvwxz2456789"[int(c, 16)] for c in pod[-5:])
        daemons.append(
            {
                "metadata": {"name": pod, "namespace": "gke-mldiagnostics"},
                "spec": {"nodeName": node, "containers": [{"name": "daemon"}]},
                "status": {},
            }
        )
        year = stamps[0][:4]
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            glog = _GLOG.match(line)
            assert glog, line
            out.append(f"{year}-{glog['md'][:2]}-{glog['md'][2:]}T{glog['time']}000Z {line}\n")
        cloud.add(
            Rule(
                "kubectl",
                ["logs", pod, "--namespace", "gke-mldiagnostics", "--container", "daemon"],
                stdout=cloud.file(f"logs/{pod}.log", "".join(out)),
            )
        )
    cloud.add(
        Rule(
            "kubectl", ["get", "pods", "--namespace", "gke-mldiagnostics"], text=_k8s_list(daemons)
        )
    )
    cloud.add(Rule("kubectl", ["get", "pods", "--namespace", "gke-diagon"], text=_k8s_list([])))
    run = bundle / "mldiagnostics" / "machine-learning-run.json"
    if run.exists():
        cloud.add(
            Rule(
                "gcloud",
                ["alpha", "mldiagnostics", "machine-learning-run", "list", "--format=json"],
                contains=[f"--project={project}"],
                text=json.dumps([json.loads(run.read_text(encoding="utf-8"))], indent=2) + "\n",
            )
        )
    node_entries, serial = _journal_entries(bundle, project, cluster, location, zone)
    serial += _gcloud_file(bundle, "serial_port_1_output.json")
    read = ["logging", "read", f"--project={project}", "--format=json", "--order=asc"]
    window = [f'timestamp>="{world.start}"', f'resource.labels.cluster_name="{cluster}"']
    for log, data in (
        ("logs/stdout", entries),
        ("logs/kubelet", node_entries),
        ("logs/events", _gcloud_file(bundle, "events.json")),
        ("cloudaudit.googleapis.com%2Factivity", []),
    ):
        cloud.add(
            Rule(
                "gcloud",
                read,
                contains=[log, *window],
                stdout=cloud.file(f"gcloud/{log.replace('/', '_')}.json", gcloud_array(data)),
            )
        )
    for log, data in (("system_event", system), ("serial_port_1_output", serial)):
        cloud.add(
            Rule(
                "gcloud",
                read,
                contains=[log, 'resource.type="gce_instance"', window[0], nodes[0]],
                stdout=cloud.file(f"gcloud/{log}.json", gcloud_array(data)),
            )
        )
    return world


# -- ModelArts --------------------------------------------------------------------------------


@dataclass
class ModelArtsWorld:
    job: str
    region: str
    tasks: list[str]
    #: task -> the OBS object name of its log (the file name the generator wrote).
    logs: dict[str, str]

    def args(self) -> list[str]:
        return ["--job-id", self.job, "--region", self.region]

    def url(self, task: str) -> str:
        return (
            f"https://modelarts-logs.obs.{self.region}.myhuaweicloud.com/{self.job}/{self.logs[task]}"
            "?AccessKeyId=AKIAFAKEFAKEFAKEFAKE&Expires=1795976400&Signature=c2lnbmF0dXJlZmFrZQ%3D%3D"
        )


def modelarts_world(bundle: Path, cloud: FakeCloud, region: str = "cn-north-4") -> ModelArtsWorld:
    """Rules and files for the fakes from a generated ModelArts scenario's ``bundle``."""
    folder = next((bundle / "modelarts").iterdir())
    job = folder.name
    details = json.loads((folder / f"job-{job}-details.json").read_text(encoding="utf-8"))
    events = json.loads((folder / f"job-{job}-events.json").read_text(encoding="utf-8"))
    tasks = details["status"]["tasks"]
    logs = {}
    for path in sorted((folder / "log").glob("*.log")):
        task = re.search(r"-(worker-\d+)(?:-|\.log$)", path.name)
        assert task, path.name
        logs[task[1]] = path.name
    world = ModelArtsWorld(job, region, tasks, logs)
    common = [f"--cli-region={region}", f"--training_job_id={job}"]
    cloud.add(
        Rule(
            "hcloud",
            ["ModelArts", "ShowTrainingJobDetails", *common],
            stdout=cloud.file("details.json", (folder / f"job-{job}-details.json").read_bytes()),
        )
    )
    for level in ("Error", "Warning", "Info"):
        chosen = [e for e in events["events"] if e["level"] == level]
        body = {**events, "total": len(chosen), "limit": 100, "events": chosen}
        cloud.add(
            Rule(
                "hcloud",
                ["ModelArts", "ListTrainingJobEvents", *common, f"--level={level}", "--limit=100"],
                text=json.dumps(body, indent=2, ensure_ascii=False) + "\n",
            )
        )
    cloud.add(
        Rule(
            "hcloud",
            ["ModelArts", "ListTrainingJobStages", *common],
            stdout=cloud.file("stages.json", (folder / f"job-{job}-stages.json").read_bytes()),
        )
    )
    for task in tasks:
        text = (folder / "log" / logs[task]).read_text(encoding="utf-8")
        tail = text[-2000:]
        preview = {
            "content": tail,
            "current_size": len(tail.encode()),
            "full_size": len(text.encode()),
        }
        cloud.add(
            Rule(
                "hcloud",
                ["ModelArts", "ShowTrainingJobLogsPreview", *common, f"--task_id={task}"],
                text=json.dumps(preview, ensure_ascii=False) + "\n",
            )
        )
        cloud.add(
            Rule(
                "hcloud",
                [
                    "ModelArts",
                    "ShowObsUrlOfTrainingJobLogs",
                    *common,
                    f"--task_id={task}",
                    "--cli-query=obs_url",
                    "--cli-output=tsv",
                ],
                text=world.url(task) + "\n",
            )
        )
        cloud.add(
            Rule(
                "curl",
                ["--fail", world.url(task)],
                stdout=cloud.file(f"obs/{logs[task]}", (folder / "log" / logs[task]).read_bytes()),
            )
        )
    return world
