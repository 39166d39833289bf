"""Names that ModelArts files and records use, shared by its two readers.

Worker log file names (the only place the job, task and node IP of a worker log appear), task
names (``worker-N``), job ids in the paths of saved API responses, and the CANN / torch_npu
error codes (``EI0002``, ``ERR02200``) by which users quote and search failures (formats.md
§3.4, §3.5, §3.7).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

#: formats.md §3.4, plus the compression suffix a bundle may keep.
_WORKER_LOG_NAME: Final = re.compile(
    r"^modelarts-job-(?P<job>[0-9a-f-]{36})-(?:(?P<comp>.+?)-)?(?P<task>worker-(?P<n>\d+))"
    r"(?:-(?P<ip>\d{1,3}(?:\.\d{1,3}){3})-(?P<sfx>\w+))?\.log(?:\.gz|\.zst)?$"
)
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TASK: Final = re.compile(r"^worker-(\d+)$")


@dataclass(frozen=True)
class WorkerLogName:
    """What a worker log's file name says: the job, the task, and (new names) the node."""

    job: str
    task: str
    worker: int
    component: str | None = None
    ip: str | None = None
    suffix: str | None = None


def parse_worker_log_name(path: str) -> WorkerLogName | None:
    """The parts of a ModelArts worker log name, or ``None`` for any other file name.

    The file name is the only place the job, task and node IP appear: the lines themselves
    name none of them.
    """
    match = _WORKER_LOG_NAME.match(path.rsplit("/", 1)[-1])
    if match is None:
        return None
    return WorkerLogName(
        job=match["job"],
        task=match["task"],
        worker=int(match["n"]),
        component=match["comp"],
        ip=match["ip"],
        suffix=match["sfx"],
    )


def job_id_in_path(path: str) -> str | None:
    """The last job UUID in a path (API JSON saved as ``<job id>-events.json`` and the like)."""
    for text in (path.rsplit("/", 1)[-1], path):
        found = _UUID.findall(text.lower())
        if found:
            return str(found[-1])
    return None


def worker_of_task(task: object) -> int | None:
    """The N of a task name ``worker-N``, or ``None``."""
    match = _TASK.match(task) if isinstance(task, str) else None
    return int(match.group(1)) if match else None


#: A CANN (``E[0-9A-Z]NNNN``) or torch_npu (``ERRNNNNN``) error code in free text.
ERROR_CODE: Final = r"\b(ERR\d{5}|E[0-9A-Z]\d{4})\b"


def error_code_in(text: str | None) -> str | None:
    """The first error code in ``text``, or ``None``."""
    match = re.search(ERROR_CODE, text) if text else None
    return match.group(1) if match else None
