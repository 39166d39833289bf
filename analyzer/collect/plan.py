"""A collection as data: a :class:`Plan` is a list of :class:`Step`, each one command (an argv
list, never a shell line), the bundle file its standard output becomes, why it is needed, the
permission it takes and how many bytes it may write.

The same plan is run by :mod:`analyzer.collect.runner` (subprocesses, no shell) and printed by
:mod:`analyzer.collect.script` as a bash script writing the same layout, so what a customer
reviews is what culprit would have run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlsplit

from analyzer.bundle import COLLECTION_DIR

Platform = Literal["gke", "modelarts"]

#: The collection's own record (plan, results, error output, listed objects): never read as
#: logs (:data:`analyzer.bundle.COLLECTION_DIR`).
RECORD_DIR: Final = COLLECTION_DIR
PLAN_FILE: Final = f"{RECORD_DIR}/plan.json"
RESULTS_FILE: Final = f"{RECORD_DIR}/results.jsonl"
MANIFEST_FILE: Final = f"{RECORD_DIR}/manifest.json"
STDERR_DIR: Final = f"{RECORD_DIR}/stderr"
PARTIAL_DIR: Final = f"{RECORD_DIR}/partial"
#: Held (flock) by the collection writing into the folder.
LOCK_FILE: Final = f"{RECORD_DIR}/lock"
#: Format of plan.json, results.jsonl and manifest.json.
FORMAT: Final = "culprit-collect/1"

#: How each tool says its version (recorded with every command that tool ran).
VERSION_ARGV: Final[dict[str, tuple[str, ...]]] = {
    "kubectl": ("kubectl", "version", "--client"),
    "gcloud": ("gcloud", "version"),
    "hcloud": ("hcloud", "version"),
    "curl": ("curl", "--version"),
}

_STEP_ID: Final = re.compile(r"^[a-z0-9][a-z0-9._-]{0,199}$")
_SAFE_PATH: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*$")
#: An object name usable as a file name (an OBS worker log carries the node's IP in it).
_URL_FILE_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,250}\.log$")


@dataclass(frozen=True)
class Capture:
    """An argument that is another command's standard output, surrounding blanks stripped
    (``"$(…)"`` in the script): the short-lived URL ``hcloud … --cli-query=obs_url`` prints.
    Never written anywhere: it carries a signature."""

    argv: tuple[str, ...]

    @property
    def tool(self) -> str:
        return self.argv[0]


Arg = str | Capture


@dataclass(frozen=True)
class Step:
    """One command of a collection.

    Args:
        id: unique in the plan, ``[a-z0-9._-]``; names the command in the record.
        source: what kind of data it is (``kubectl``, ``cloud-logging``, ``modelarts``,
            ``obs``, ``mldiagnostics``): one progress bar each, the summary groups by it.
        argv: the command; a :class:`Capture` stands for another command's output.
        output: the bundle-relative file its standard output becomes.
        why: what the analysis gets from it.
        permission: what the caller needs (IAM role, RBAC verb, ModelArts action).
        cap: bytes it may write; the output is cut there and marked ``truncated``.
        name_from_url: name the output after the captured URL's last path segment (when it
            is a plain ``*.log`` name), in ``output``'s folder.
        discovery: its output decides the rest of the plan (run first, parsed).
    """

    id: str
    source: str
    argv: tuple[Arg, ...]
    output: str
    why: str
    permission: str
    cap: int
    name_from_url: bool = False
    discovery: bool = False

    def __post_init__(self) -> None:
        if not _STEP_ID.match(self.id):
            raise ValueError(f"step id {self.id!r} is not [a-z0-9._-]")
        if not _SAFE_PATH.match(self.output) or ".." in self.output.split("/"):
            raise ValueError(f"step {self.id}: output {self.output!r} is not a plain path")
        if not self.argv or not isinstance(self.argv[0], str):
            raise ValueError(f"step {self.id}: no command")

    @property
    def tool(self) -> str:
        """The executable (``kubectl``, ``gcloud``, ``hcloud``, ``curl``)."""
        first = self.argv[0]
        assert isinstance(first, str)
        return first

    @property
    def captures(self) -> tuple[Capture, ...]:
        return tuple(a for a in self.argv if isinstance(a, Capture))

    def shown(self) -> list[str]:
        """The argv as words, a capture shown as ``$(…)`` (for the record and messages)."""
        return [a if isinstance(a, str) else "$(" + " ".join(a.argv) + ")" for a in self.argv]


@dataclass(frozen=True)
class Plan:
    """Every command of one collection, discovery first, in the order they are listed.

    ``target`` names what is collected (project, cluster, job…) and ``window`` the time span
    (ISO 8601, UTC) the commands ask for; both are recorded in ``plan.json``.
    """

    platform: Platform
    target: dict[str, str]
    window: tuple[str, str] | None
    steps: tuple[Step, ...]
    total_cap: int
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        ids = [s.id for s in self.steps]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"step ids used twice: {twice}")
        outputs = [s.output for s in self.steps]
        shared = sorted({o for o in outputs if outputs.count(o) > 1})
        if shared:
            raise ValueError(f"outputs written twice: {shared}")

    @property
    def tools(self) -> list[str]:
        """Every executable the plan runs, captures included, in first-use order."""
        seen: dict[str, None] = {}
        for step in self.steps:
            for capture in step.captures:
                seen.setdefault(capture.tool, None)
            seen.setdefault(step.tool, None)
        return list(seen)


def url_file_name(url: str) -> str | None:
    """The last path segment of ``url`` when it is a plain ``*.log`` file name, else
    ``None`` (the query, with its signature, is never part of it)."""
    # Not unquoted: the printed script names the file from the URL's text alike.
    name = urlsplit(url.strip()).path.rsplit("/", 1)[-1]
    return name if _URL_FILE_NAME.match(name) else None


def output_of(step: Step, url: str | None) -> str:
    """Where ``step`` writes, given the URL its capture printed (when it names its output)."""
    if not step.name_from_url or url is None:
        return step.output
    name = url_file_name(url)
    if name is None:
        return step.output
    folder = step.output.rsplit("/", 1)[0] if "/" in step.output else ""
    return f"{folder}/{name}" if folder else name
