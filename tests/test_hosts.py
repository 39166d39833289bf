"""One host, one name: the host map (analyzer/hosts.py) and its use in ingest."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl

from analyzer import api
from analyzer.hosts import canonical_host, evidence, resolve
from tests.helpers import read_table

Ingest = Callable[..., Path]
NODE = "gke-tpu-pool-{:02d}"


def _rows(records: list[dict[str, object]]) -> pl.DataFrame:
    schema = {
        "row_id": pl.Int64,
        "file_id": pl.Int32,
        "line": pl.Int32,
        "host": pl.String,
        "pod": pl.String,
        "workload": pl.String,
        "slice": pl.Int32,
        "worker": pl.Int32,
        "attempt": pl.Int32,
    }
    filled = [{key: record.get(key) for key in schema} for record in records]
    return pl.DataFrame(filled, schema=schema)


def test_aliases_resolve_and_conflicts_are_kept_apart() -> None:
    rows = _rows(
        [
            {
                "row_id": 1,
                "file_id": 0,
                "line": 1,
                "host": "node-a",
                "pod": "job-s-0-0-abcde",
                "workload": "job",
                "slice": 0,
                "worker": 0,
                "attempt": 0,
            },
            {
                "row_id": 2,
                "file_id": 0,
                "line": 2,
                "host": "node-b",
                "pod": "job-s-0-1-fghij",
                "workload": "job",
                "slice": 0,
                "worker": 1,
                "attempt": 0,
            },
            # the same pod name seen on two nodes: a conflict, never used
            {"row_id": 3, "file_id": 1, "line": 1, "host": "node-a", "pod": "shared-pod"},
            {"row_id": 4, "file_id": 1, "line": 2, "host": "node-b", "pod": "shared-pod"},
            # a pod name that is not a JobSet pod: still an alias, no hostname derived
            {"row_id": 5, "file_id": 1, "line": 3, "host": "node-b", "pod": "weird_pod"},
            # an instance ID seen as a host, named by an audit row
            {"row_id": 6, "file_id": 2, "line": 1, "host": "1437928523886234104"},
            # an instance ID nobody names: it stays its own host
            {"row_id": 7, "file_id": 2, "line": 2, "host": "999999999999999999"},
        ]
    )
    named = pl.DataFrame(
        {
            "row_id": [8],
            "file_id": [3],
            "line": [7],
            "host": ["node-b"],
            "alias": ["1437928523886234104"],
            "kind": ["instance_id"],
        }
    )
    host_map = resolve(evidence(rows.lazy(), named).collect())
    mapping = host_map.mapping()
    assert mapping["job-s-0-0-abcde"] == "node-a"
    assert mapping["job-s-0-0"] == "node-a"  # the pod hostname (no random suffix)
    assert mapping["worker:job#0:0/1"] == "node-b"
    assert mapping["task:job#0:1"] == "node-b"
    assert mapping["weird_pod"] == "node-b"
    assert "weird" not in " ".join(k for k in mapping if k != "weird_pod")
    assert mapping["1437928523886234104"] == "node-b"
    assert mapping["999999999999999999"] == "999999999999999999"
    assert "shared-pod" not in mapping
    conflict = host_map.conflicts
    assert sorted(conflict["host"]) == ["node-a", "node-b"]
    assert set(conflict["alias"]) == {"shared-pod"}
    evidence_row = host_map.table.filter(pl.col("alias") == "1437928523886234104").row(
        0, named=True
    )
    assert (evidence_row["file_id"], evidence_row["line"]) == (3, 7)
    assert host_map.lookup("job-s-0-0.headless-svc:8471") == "node-a"
    assert host_map.task("job", 0, 1) == "node-b"
    assert host_map.worker("job", 0, 0, 0) == "node-a"
    assert host_map.worker("job", 1, 0, 0) is None  # another restart attempt: not known
    assert host_map.lookup("nobody") is None
    # Rows without a host get one from their pod or worker; numeric IDs get the name.
    orphans = _rows(
        [
            {"row_id": 9, "file_id": 4, "line": 1, "pod": "job-s-0-0-abcde"},
            {
                "row_id": 10,
                "file_id": 4,
                "line": 2,
                "workload": "job",
                "slice": 0,
                "worker": 1,
                "attempt": 0,
            },
            {"row_id": 11, "file_id": 4, "line": 3, "host": "1437928523886234104"},
            {"row_id": 12, "file_id": 4, "line": 4, "pod": "shared-pod"},
        ]
    )
    assert canonical_host(orphans, host_map).to_list() == ["node-a", "node-b", "node-b", None]


def _entry(node: int, pod: str, worker: int, second: int, text: str) -> dict[str, object]:
    return {
        "insertId": f"{node:02d}{second:04d}",
        "labels": {
            "compute.googleapis.com/resource_name": NODE.format(node),
            "k8s-pod/batch_kubernetes_io/job-completion-index": str(worker),
            "k8s-pod/jobset_sigs_k8s_io/job-index": "0",
            "k8s-pod/jobset_sigs_k8s_io/jobset-name": "train",
            "k8s-pod/jobset_sigs_k8s_io/restart-attempt": "0",
        },
        "logName": "projects/p/logs/stderr",
        "resource": {
            "type": "k8s_container",
            "labels": {"pod_name": pod, "container_name": "jax", "namespace_name": "default"},
        },
        "severity": "ERROR",
        "textPayload": text + "\n",
        "timestamp": f"2026-11-29T18:{second // 60:02d}:{second % 60:02d}.000000{node:03d}Z",
    }


def make_mixed_bundle(root: Path, hosts: int = 16) -> Path:
    """Cloud Logging for ``hosts`` JAX workers, the kubelet journal of each node, and one
    Diagon daemon log dumped with kubectl from a DaemonSet pod on node 5."""
    pods = [f"train-slice-0-{i}-{chr(97 + i % 26)}b2c3" for i in range(hosts)]
    entries = []
    for i, pod in enumerate(pods):
        for step in range(3):
            entries.append(
                _entry(
                    i,
                    pod,
                    i,
                    60 + step,
                    f"I1129 18:01:{step:02d}.000000 1 train.py:211] completed step: {step}",
                )
            )
    sink = root / "stderr" / "2026" / "11" / "29" / "18:00:00_18:59:59_S0.json"
    sink.parent.mkdir(parents=True)
    sink.write_text("".join(json.dumps(e) + "\n" for e in entries))
    for i, pod in enumerate(pods):
        lines = [
            f'Nov 29 18:00:{i:02d} {NODE.format(i)} kubelet[2218]: I1129 18:00:{i:02d}.000001    2218 kubelet.go:2445] "SyncLoop ADD" source="api" pods=["default/{pod}"]',
            f'Nov 29 18:00:{i:02d} {NODE.format(i)} kubelet[2218]: I1129 18:00:{i:02d}.500000    2218 kuberuntime_container.go:809] "Killing container with a grace period" pod="default/{pod}" containerName="jax"',
        ]
        if i == 5:
            lines.append(
                f'Nov 29 18:00:30 {NODE.format(i)} kubelet[2218]: I1129 18:00:30.000000    2218 kubelet.go:2468] "SyncLoop (PLEG): event for pod" pod="gke-mldiagnostics/diagon-daemon-x7k2p" containerName="daemon"'
            )
        journal = root / "nodes" / NODE.format(i) / "kubelet.journal.txt"
        journal.parent.mkdir(parents=True)
        journal.write_text("\n".join(lines) + "\n")
    daemon = root / "diagon" / "daemon.log"
    daemon.parent.mkdir(parents=True)
    daemon.write_text(
        "[pod/diagon-daemon-x7k2p/daemon] I1129 18:35:15.123456       1 stream_client.cc:88] Stream established.\n"
        "[pod/diagon-daemon-x7k2p/daemon] I1129 18:35:15.201377       1 daemon.cc:142] Received successful DaemonRegistrationResponse from backend\n"
        "[pod/diagon-daemon-x7k2p/daemon] I1129 18:35:45.201902       1 heartbeat.cc:61] Sending DaemonHeartbeatRequest\n"
    )
    return root


def test_mixed_bundle_has_one_id_per_host(tmp_path: Path, ingest_case: Ingest) -> None:
    case = ingest_case(make_mixed_bundle(tmp_path / "bundle"))
    rows = read_table(case, "rows")
    nodes = {NODE.format(i) for i in range(16)}
    assert set(rows["host"].drop_nulls().cast(pl.String)) == nodes
    # Every container row, every kubelet row and the Diagon daemon rows have their node.
    assert rows["host"].null_count() == 0
    daemon = rows.filter(pl.col("pod") == "diagon-daemon-x7k2p")
    assert set(daemon["host"].cast(pl.String)) == {NODE.format(5)}
    hosts = read_table(case, "hosts")
    assert set(hosts.filter(~pl.col("conflict"))["host"]) == nodes
    assert hosts["conflict"].sum() == 0
    joined = api.query(
        case,
        "SELECT c.host, count(DISTINCT c.row_id) AS container_rows, count(DISTINCT k.row_id) AS kubelet_rows "
        "FROM rows c JOIN rows k ON c.host = k.host "
        "WHERE c.source = 'cloud_logging' AND k.source = 'kubelet' GROUP BY c.host ORDER BY c.host",
    )
    assert joined.num_rows == 16
    assert set(joined.column("container_rows").to_pylist()) == {3}
    assert min(joined.column("kubelet_rows").to_pylist()) >= 2
