"""What a captured name stands for: the host behind a task, worker, pod hostname, address,
IP or instance ID, resolved through the case's host map (never guessed)."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Final

from analyzer.diagnose.findings import Message, SubjectKind
from analyzer.hosts import HostMap

#: ``/job:jax_worker/replica:0/task:7``, ``task:7``, ``task 7``, ``process 7``.
_TASK: Final = re.compile(r"(?:^|/|\b)(?:task|process)[:= ]?(?P<n>\d+)\b")
_NUMBER: Final = re.compile(r"^\d+$")
#: Capture groups whose bare number is a JAX task / process index.
_TASK_GROUPS: Final = frozenset({"task", "process", "process_id", "task_id", "first_task"})


#: An IPv4 address, with a port or not.
_IP: Final = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")
#: Capture groups whose value is a rank (Ascend/NCCL ranks, a torchrun rank).
_RANK_GROUPS: Final = frozenset(
    {"rank", "remote_rank", "unconnected_ranks", "src_rank", "dst_rank"}
)
#: Capture groups whose value names a pod, a node or a TPU worker.
_KIND_OF_GROUP: Final = {"pod": "pod", "node": "node", "worker": "worker"}


def kind_of(name: str, group: str) -> SubjectKind:
    """What kind of subject a captured ``name`` is: a task (``/job:…/task:7``, a task
    group), a rank, a worker, an IP address, a pod, a node, else a host name."""
    if _TASK.search(name) or (group in _TASK_GROUPS and _NUMBER.match(name)):
        return "task"
    if group in _RANK_GROUPS:
        return "rank"
    if _IP.match(name):
        return "ip"
    return _KIND_OF_GROUP.get(group, "host")  # type: ignore[return-value]


@dataclass(frozen=True)
class Subject:
    """A name a row gives to the component at fault, and the host it resolves to."""

    name: str
    host: str | None
    #: How the name was resolved ("task 7 of llm-pretrain (attempt 0)", "pod hostname", …).
    how: str
    kind: SubjectKind = "host"
    #: ``how`` as a catalogue message.
    how_message: Message | None = None


def capture_value(captures: str, group: str) -> str | None:
    """The value of ``group`` in a captures JSON text (None when absent)."""
    value = json.loads(captures or "{}").get(group)
    return str(value) if value not in (None, "") else None


def resolve(
    value: str,
    group: str,
    *,
    host_map: HostMap,
    workload: str | None,
    attempt: int | None,
) -> list[Subject]:
    """The subjects a captured ``value`` names (a list for comma-separated names)."""
    names = [v.strip() for v in value.split(",") if v.strip()] if "," in value else [value]
    return [
        dataclasses.replace(
            _one(name, group, host_map, workload, attempt), kind=kind_of(name, group)
        )
        for name in names
    ]


def _one(
    name: str, group: str, host_map: HostMap, workload: str | None, attempt: int | None
) -> Subject:
    direct = host_map.lookup(name)
    if direct is not None:
        return Subject(
            name, direct, "a name of that host in the case", how_message=Message(key="how.alias")
        )
    task = _TASK.search(name)
    number = (
        task.group("n")
        if task
        else (name if group in _TASK_GROUPS and _NUMBER.match(name) else None)
    )
    if number is not None:
        for candidate_attempt in (attempt, None):
            for candidate_workload in _workloads(host_map, workload):
                host = host_map.task(candidate_workload, candidate_attempt, int(number))
                if host is not None:
                    how = f"JAX task {number} of {candidate_workload}"
                    said = Message(
                        key="how.jax_task",
                        params={"task": number, "workload": candidate_workload},
                    )
                    if candidate_attempt is not None:
                        how += f" (restart attempt {candidate_attempt})"
                        said = Message(
                            key="how.jax_task.attempt",
                            params={**said.params, "attempt": candidate_attempt},
                        )
                    return Subject(name, host, how, how_message=said)
    return Subject(
        name, None, "not found in the case's host map", how_message=Message(key="how.not_found")
    )


def _workloads(host_map: HostMap, preferred: str | None) -> list[str]:
    """The reporter's own workload first, then every workload the host map knows (a
    coordination-service line may come from a row without workload labels)."""
    ordered = [preferred] if preferred else []
    return ordered + [w for w in host_map.task_workloads if w != preferred]
