"""The collection's record inside the bundle (``culprit-collect/``): ``plan.json`` (every
command, why, the permission it takes, its byte cap), ``results.jsonl`` (one line per command
run: tool version, start and end, exit status, attempts, bytes and sha256 of what it wrote,
what failed and why) and ``manifest.json`` (name -> sha256 and size of every file collected,
the same :class:`~analyzer.provenance.manifest.MemberEntry` as a handoff's manifest), and the
check of a bundle against them.

``results.jsonl`` is appended to, one complete line after each command, so a collection cut
short (Ctrl-C, a lost connection) still says what it holds; the script that
``--print-commands`` writes appends the same lines.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer import __version__
from analyzer.collect.plan import (
    FORMAT,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORD_DIR,
    RESULTS_FILE,
    Capture,
    Plan,
)
from analyzer.errors import CollectError
from analyzer.provenance.manifest import MemberEntry, member_problem

Status = Literal["ok", "truncated", "failed", "skipped"]
#: A command's output is in the bundle (cut at its cap, for ``truncated``).
COLLECTED: tuple[Status, ...] = ("ok", "truncated")


class StepResult(BaseModel):
    """One line of ``results.jsonl``: one command as it ran (its latest line wins)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    status: Status
    #: The command's exit status (``None``: stopped by culprit, or never started).
    exit_status: int | None = None
    start: str | None = None
    end: str | None = None
    attempts: Annotated[int, Field(ge=0)] = 0
    bytes: Annotated[int, Field(ge=0)] = 0
    sha256: str | None = None
    #: The file written (the plan's, or the name the captured URL gave it).
    output: str | None = None
    tool: str
    version: str | None = None
    #: Why it failed or was cut, in one line (``None`` when it is ``ok``).
    error: str | None = None
    #: The end of its error output, redacted (run by culprit).
    stderr: str | None = None
    #: The file holding its error output (run by the printed script).
    stderr_file: str | None = None


def now() -> str:
    """The time as the record writes it (UTC, seconds, ``Z``)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def plan_document(plan: Plan) -> dict[str, Any]:
    """``plan.json``: the plan as data (a capture as ``{"output_of": argv}``)."""

    def arg(value: str | Capture) -> Any:
        return value if isinstance(value, str) else {"output_of": list(value.argv)}

    return {
        "format": FORMAT,
        "tool_version": __version__,
        "platform": plan.platform,
        "target": plan.target,
        "window": None if plan.window is None else {"start": plan.window[0], "end": plan.window[1]},
        "total_cap": plan.total_cap,
        "notes": list(plan.notes),
        "steps": [
            {
                "id": s.id,
                "source": s.source,
                "argv": [arg(a) for a in s.argv],
                "output": s.output,
                "name_from_url": s.name_from_url,
                "why": s.why,
                "permission": s.permission,
                "cap": s.cap,
            }
            for s in plan.steps
        ],
    }


def plan_json(plan: Plan) -> str:
    """``plan.json``'s text: one line (the script embeds it in a here-document)."""
    return json.dumps(plan_document(plan), sort_keys=True, separators=(",", ":"))


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def append_result(bundle: Path, result: StepResult) -> None:
    """Add one line to ``results.jsonl``, on disk before this returns."""
    line = result.model_dump_json(exclude_none=True) + "\n"
    path = bundle / RESULTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def read_results(bundle: Path) -> dict[str, StepResult]:
    """The latest result of each command in ``results.jsonl`` (empty when there is none).

    Raises:
        CollectError: a line that is not a result (naming its line); a last line cut short
            by a crash is skipped: the command it records runs again.
    """
    path = bundle / RESULTS_FILE
    if not path.exists():
        return {}
    latest: dict[str, StepResult] = {}
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            result = StepResult.model_validate_json(line)
        except ValidationError as exc:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                continue  # the line a crash cut short
            raise CollectError(
                f"not a collection result: {exc.errors()[0]['msg']}", path=RESULTS_FILE, line=number
            ) from None
        latest[result.id] = result
    return latest


def file_digest(path: Path) -> tuple[int, str]:
    """Size and sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        for block in iter(partial(handle.read, 1 << 20), b""):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def complete(bundle: Path, result: StepResult | None) -> bool:
    """Whether a command's result says its output is in the bundle, and the file there has
    the bytes and sha256 it records (a re-run skips it)."""
    if result is None or result.status not in COLLECTED or result.output is None:
        return False
    path = bundle / result.output
    if not path.is_file() or path.stat().st_size != result.bytes:
        return False
    return file_digest(path)[1] == result.sha256


def members(results: Iterable[StepResult]) -> dict[str, MemberEntry]:
    """The manifest's ``members``: every file a command wrote, by bundle path."""
    found = {
        r.output: MemberEntry(sha256=r.sha256, bytes=r.bytes)
        for r in results
        if r.status in COLLECTED and r.output is not None and r.sha256 is not None
    }
    return dict(sorted(found.items()))


class CollectionManifest(BaseModel):
    """``manifest.json``."""

    model_config = ConfigDict(extra="forbid")

    format: str
    tool_version: str
    platform: str
    written: str
    #: Every command ran (some may have failed: ``failed``); false when interrupted.
    complete: bool
    commands: int
    failed: list[str]
    members: dict[str, MemberEntry]


def write_manifest(bundle: Path, plan: Plan, *, interrupted: bool) -> CollectionManifest:
    """Write ``manifest.json`` from the results so far."""
    results = read_results(bundle)
    ran = [results[s.id] for s in plan.steps if s.id in results]
    manifest = CollectionManifest(
        format=FORMAT,
        tool_version=__version__,
        platform=plan.platform,
        written=now(),
        complete=not interrupted and len(ran) == len(plan.steps),
        commands=len(plan.steps),
        failed=[r.id for r in ran if r.status not in COLLECTED],
        members=members(ran),
    )
    data = json.dumps(manifest.model_dump(), indent=2, sort_keys=True) + "\n"
    write_atomic(bundle / MANIFEST_FILE, data.encode())
    return manifest


# -- checking a collected bundle -------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    """What :func:`verify` found."""

    bundle: Path
    platform: str
    complete: bool
    members: int
    bytes: int
    #: Members missing, changed or unlisted (empty: intact).
    problems: list[str]
    #: Commands that failed or were skipped, with why.
    failed: list[str]

    @property
    def intact(self) -> bool:
        return not self.problems


def _read_manifest(bundle: Path) -> CollectionManifest | None:
    path = bundle / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        return CollectionManifest.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(the document)"
        raise CollectError(f"{field}: {first['msg']}", path=MANIFEST_FILE) from None


def verify(bundle: Path) -> Verified:
    """Check every collected file against the record: the manifest's size and sha256 (or,
    for a bundle the printed script wrote, the results'), no file missing, none unlisted.

    Raises:
        CollectError: ``bundle`` holds no collection record.
    """
    if not (bundle / PLAN_FILE).is_file():
        raise CollectError(f"no {PLAN_FILE}: not a collected bundle", path=str(bundle))
    try:
        plan = json.loads((bundle / PLAN_FILE).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CollectError(f"not JSON: {exc}", path=PLAN_FILE) from None
    results = read_results(bundle)
    manifest = _read_manifest(bundle)
    listed = manifest.members if manifest is not None else members(results.values())
    problems: list[str] = []
    for name, entry in listed.items():
        path = bundle / name
        if not path.is_file():
            problems.append(f"{name} is missing")
            continue
        size, digest = file_digest(path)
        problem = member_problem(name, entry, size, digest)
        if problem is not None:
            problems.append(problem)
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        name = path.relative_to(bundle).as_posix()
        if name.split("/", 1)[0] != RECORD_DIR and name not in listed:
            problems.append(f"{name} is not in the record (added after the collection?)")
    steps = [s["id"] for s in plan.get("steps", [])]
    failed = [
        f"{r.id}: {r.status}" + (f": {r.error}" if r.error else "")
        for r in (results[i] for i in steps if i in results)
        if r.status not in COLLECTED
    ]
    failed += [f"{i}: not run" for i in steps if i not in results]
    return Verified(
        bundle=bundle,
        platform=str(plan.get("platform", "")),
        complete=manifest.complete if manifest is not None else all(i in results for i in steps),
        members=len(listed),
        bytes=sum(e.bytes for e in listed.values()),
        problems=problems,
        failed=failed,
    )
