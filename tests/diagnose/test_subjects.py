"""Captured names resolved through the host map, never guessed."""

from __future__ import annotations

import polars as pl

from analyzer.diagnose.subjects import capture_value, resolve
from analyzer.hosts import HOSTS_SCHEMA, HostMap

NODE = "gke-pool-0-abcd"


def _map(rows: list[tuple[str, str, str]]) -> HostMap:
    table = pl.DataFrame(
        [
            {
                "host": h,
                "alias": a,
                "kind": k,
                "file_id": 0,
                "line": i + 1,
                "row_id": i,
                "rows": 1,
                "conflict": False,
            }
            for i, (h, a, k) in enumerate(rows)
        ],
        schema=HOSTS_SCHEMA,
    )
    return HostMap(table)


HOSTS = _map(
    [
        (NODE, NODE, "node"),
        (NODE, "job-slice-0-3", "pod_hostname"),
        (NODE, "task:job#0:3", "task"),
        ("other", "task:job#1:3", "task"),
    ]
)


def test_a_tsl_task_name_resolves_within_the_reporters_attempt() -> None:
    [subject] = resolve(
        "/job:jax_worker/replica:0/task:3", "task", host_map=HOSTS, workload="job", attempt=0
    )
    assert subject.host == NODE
    assert "task 3" in subject.how
    [later] = resolve(
        "/job:jax_worker/replica:0/task:3", "task", host_map=HOSTS, workload="job", attempt=1
    )
    assert later.host == "other"


def test_an_address_resolves_by_its_first_label() -> None:
    [subject] = resolve(
        "job-slice-0-3.job:8471", "worker_address", host_map=HOSTS, workload=None, attempt=None
    )
    assert subject.host == NODE


def test_an_unknown_name_stays_unresolved() -> None:
    [subject] = resolve("10.0.0.9", "server_id", host_map=HOSTS, workload="job", attempt=0)
    assert subject.host is None


def test_a_bare_number_is_a_task_only_for_task_groups() -> None:
    assert resolve("3", "task", host_map=HOSTS, workload="job", attempt=0)[0].host == NODE
    assert resolve("3", "device", host_map=HOSTS, workload="job", attempt=0)[0].host is None


def test_comma_lists_give_one_subject_each() -> None:
    found = resolve(f"{NODE}, nowhere", "hosts", host_map=HOSTS, workload=None, attempt=None)
    assert [s.host for s in found] == [NODE, None]


def test_capture_value_reads_the_captures_json() -> None:
    assert capture_value('{"task":"7"}', "task") == "7"
    assert capture_value("{}", "task") is None
