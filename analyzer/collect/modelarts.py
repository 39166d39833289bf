"""The plan for a ModelArts training job: the diagnosis flow of the ModelArts API through
KooCLI (``hcloud ModelArts <operation> --cli-region=R --param=value``).

ShowTrainingJobDetails first (it names the tasks when ``--task-id`` is not given), then
ListTrainingJobEvents once per level (Error, Warning, Info: each page holds at most 100
events, so errors are never crowded out by info), ListTrainingJobStages, and per task the log
preview (ShowTrainingJobLogsPreview) and the full log from OBS: ShowObsUrlOfTrainingJobLogs
prints a short-lived URL (``--cli-query=obs_url --cli-output=tsv``) that ``curl`` downloads.
The OBS object's name carries the node's IP, so the log is saved under that name, in the
layout the readers know (``modelarts/<job>/job-<job>-*.json`` and
``modelarts/<job>/log/modelarts-job-<job>-…-worker-N-<ip>-….log``).

The previews are kept in the collection's record (``culprit-collect/modelarts/``): the end
of each task's log as the API showed it, for a person to read when the OBS log cannot be had
(a 404, a refused permission); they are not read as logs (the OBS log holds the same lines).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from analyzer.collect.plan import RECORD_DIR, Capture, Plan, Step
from analyzer.errors import CollectError, UsageError

_UUID: Final = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_TASK: Final = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_REGION: Final = re.compile(r"^[a-z]{2}(?:-[a-z0-9]+)+$")
_PROJECT: Final = re.compile(r"^[A-Za-z0-9-]{1,64}$")
#: ListTrainingJobEvents levels, each asked for separately (a page holds at most 100).
LEVELS: Final = ("Error", "Warning", "Info")
EVENTS_LIMIT: Final = 100

_READ: Final = (
    "ModelArts: read access to training job {job} (the API page's Authorization Information "
    "names the action, e.g. modelarts:trainJob:get)"
)
_LOG_EXPORT: Final = "ModelArts: modelarts:trainJob:logExport on training job {job}"
_OBS: Final = "none beyond the URL: it is signed and valid for 5 minutes"


@dataclass(frozen=True)
class ModelArtsTarget:
    """What to collect: one training job in one region."""

    job_id: str
    region: str
    project_id: str | None = None
    tasks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _UUID.match(self.job_id):
            raise UsageError(f"--job-id {self.job_id!r} is not a training job id (a UUID)")
        if not _REGION.match(self.region):
            raise UsageError(f"--region {self.region!r} is not a region (cn-north-4)")
        if self.project_id is not None and not _PROJECT.match(self.project_id):
            raise UsageError(f"--project-id {self.project_id!r} is not a project id")
        for task in self.tasks:
            if not _TASK.match(task):
                raise UsageError(f"--task-id {task!r} is not a task name (worker-0)")

    def hcloud(self, operation: str, *params: str) -> tuple[str, ...]:
        project = (f"--project_id={self.project_id}",) if self.project_id else ()
        return (
            "hcloud",
            "ModelArts",
            operation,
            f"--cli-region={self.region}",
            *project,
            f"--training_job_id={self.job_id}",
            *params,
        )

    def as_record(self) -> dict[str, str]:
        record = {"job_id": self.job_id, "region": self.region}
        if self.project_id:
            record["project_id"] = self.project_id
        if self.tasks:
            record["tasks"] = ",".join(self.tasks)
        return record

    @property
    def folder(self) -> str:
        return f"modelarts/{self.job_id}"


def details_step(target: ModelArtsTarget, cap: int) -> Step:
    job = target.job_id
    return Step(
        id="modelarts-details",
        source="modelarts",
        argv=target.hcloud("ShowTrainingJobDetails"),
        output=f"{target.folder}/job-{job}-details.json",
        why="the job's phase, its tasks' exit codes and messages, every running and recover "
        "record (restarts, fault scenarios, the related task)",
        permission=_READ.format(job=job),
        cap=cap,
        discovery=True,
    )


def tasks_of(data: bytes, where: str) -> list[str]:
    """The tasks (``status.tasks``) ShowTrainingJobDetails names."""
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CollectError(
            f"not the JSON ShowTrainingJobDetails returns: {exc}", path=where
        ) from None
    status = document.get("status") if isinstance(document, dict) else None
    tasks = status.get("tasks") if isinstance(status, dict) else None
    if not isinstance(tasks, list):
        raise CollectError("no status.tasks: not a ShowTrainingJobDetails response", path=where)
    return [t for t in tasks if isinstance(t, str) and _TASK.match(t)]


def preview_output(target: ModelArtsTarget, task: str) -> str:
    return f"{RECORD_DIR}/{target.folder}/preview-{task}.json"


def obs_fallback_name(target: ModelArtsTarget, task: str) -> str:
    """The name a task's log gets when the OBS object does not name it (the old form)."""
    return f"{target.folder}/log/modelarts-job-{target.job_id}-{task}.log"


def plan(
    target: ModelArtsTarget,
    discover: Callable[[Step], bytes],
    *,
    cap: int,
    total_cap: int,
) -> Plan:
    """The whole plan (the tasks from ShowTrainingJobDetails, unless they are given).

    Raises:
        CollectError: the job's details cannot be had, or name no task.
    """
    job = target.job_id
    first = details_step(target, cap)
    if target.tasks:
        # Every task is given: nothing to discover (a script can be written without access).
        first = replace(first, discovery=False)
        tasks = list(target.tasks)
    else:
        tasks = tasks_of(discover(first), first.output)
    if not tasks:
        raise CollectError("the job names no task (status.tasks is empty)", path=first.output)
    read = _READ.format(job=job)
    steps = [first]
    for level in LEVELS:
        steps.append(
            Step(
                id=f"modelarts-events-{level.lower()}",
                source="modelarts",
                argv=target.hcloud(
                    "ListTrainingJobEvents", f"--level={level}", f"--limit={EVENTS_LIMIT}"
                ),
                output=f"{target.folder}/job-{job}-events-{level.lower()}.json",
                why=f"the job's {level} events (platform, Kubernetes and task events)",
                permission=read,
                cap=cap,
            )
        )
    steps.append(
        Step(
            id="modelarts-stages",
            source="modelarts",
            argv=target.hcloud("ListTrainingJobStages"),
            output=f"{target.folder}/job-{job}-stages.json",
            why="scheduling, preparing, running and end of every running record, with times",
            permission=read,
            cap=cap,
        )
    )
    for task in tasks:
        steps.append(
            Step(
                id=f"modelarts-preview-{task}",
                source="modelarts",
                argv=target.hcloud("ShowTrainingJobLogsPreview", f"--task_id={task}"),
                output=preview_output(target, task),
                why=f"the end of {task}'s log as the API shows it (stands in if OBS fails)",
                permission=read,
                cap=cap,
            )
        )
    for task in tasks:
        url = Capture(
            target.hcloud(
                "ShowObsUrlOfTrainingJobLogs",
                f"--task_id={task}",
                "--cli-query=obs_url",
                "--cli-output=tsv",
            )
        )
        steps.append(
            Step(
                id=f"obs-log-{task}",
                source="obs",
                argv=(
                    "curl",
                    "--fail",
                    "--silent",
                    "--show-error",
                    "--location",
                    "--max-filesize",
                    str(cap),
                    url,
                ),
                output=obs_fallback_name(target, task),
                name_from_url=True,
                why=f"{task}'s whole log (training process, ModelArts platform, CANN) from OBS",
                permission=f"{_LOG_EXPORT.format(job=job)} (for the URL); {_OBS}",
                cap=cap,
            )
        )
    return Plan(
        platform="modelarts",
        target=target.as_record(),
        window=None,
        steps=tuple(steps),
        total_cap=total_cap,
    )
