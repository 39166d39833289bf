"""The cases under the served directory, and the summary the case list shows of each.

A case is found only where ``culprit`` puts one: the served directory itself, its immediate
subdirectories, and ``<sub>/case`` (``culprit analyze -o OUT`` writes ``OUT/case``). A case
is reached by its id, the path relative to the served directory, and only ids found by that
walk are served, so a crafted id (``..``, an absolute path, a symlink out) reaches nothing.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Generic, TypeVar

from analyzer import api
from analyzer.case.layout import MATCHES_FILE, META_FILE
from analyzer.diagnose.findings import Findings
from analyzer.errors import AnalyzerError, CaseError
from analyzer.serve.problems import DAMAGE, first_line

#: Where ``culprit analyze -o OUT`` puts the case of a bundle.
CASE_SUBDIR: Final = api.CASE_SUBDIR


@dataclass(frozen=True)
class CaseEntry:
    """A case found under the served directory: its URL id and resolved path."""

    id: str
    path: Path


def find_cases(root: Path) -> list[CaseEntry]:
    """The cases at ``root`` (itself a case, or a folder of them), sorted by path.

    Raises:
        CaseError: ``root`` cannot be listed.
    """
    base = root.resolve()
    if _is_case(base):
        return [CaseEntry(base.name or CASE_SUBDIR, base)]
    try:
        subdirs = sorted(p for p in base.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise CaseError(f"cannot list the directory: {exc.strerror}", path=str(root)) from None
    found = []
    for sub in subdirs:
        for candidate, case_id in ((sub, sub.name), (sub / CASE_SUBDIR, f"{sub.name}/case")):
            resolved = candidate.resolve()
            # A symlinked subdirectory may point anywhere: serve only what lies under root.
            if _is_case(resolved) and resolved.is_relative_to(base) and resolved != base:
                found.append(CaseEntry(case_id, resolved))
    return found


def find_case(root: Path, case_id: str) -> CaseEntry | None:
    """The case with this id under ``root``, or None (unknown ids are not resolved as paths
    at all, which is what keeps ``..`` and absolute paths out)."""
    return next((entry for entry in find_cases(root) if entry.id == case_id), None)


def _is_case(path: Path) -> bool:
    try:
        return (path / META_FILE).is_file()
    except OSError:
        return False


@dataclass(frozen=True)
class Summary:
    """One line of the case list. ``findings`` is None when there is no verdict, and
    ``problem`` then says why (not analyzed yet, or not a readable case)."""

    entry: CaseEntry
    rows: int | None
    hosts: int | None
    first_ts: dt.datetime | None
    last_ts: dt.datetime | None
    findings: Findings | None
    problem: str | None


def summarize(entry: CaseEntry) -> Summary:
    """Open the case, count its hosts and diagnose it; nothing in the case is written."""
    try:
        case = api.load_case(entry.path)
        with case.connect() as connection:
            found = connection.execute("SELECT count(DISTINCT host) FROM rows").fetchone()
    except CaseError as exc:
        return Summary(entry, None, None, None, None, None, exc.message)
    except DAMAGE as exc:
        # A damaged Parquet file: one case must not take the whole list down.
        unreadable = f"cannot read the case: {first_line(exc)}"
        return Summary(entry, None, None, None, None, None, unreadable)
    meta = case.meta
    hosts = int(found[0]) if found is not None else 0
    findings: Findings | None = None
    problem: str | None = None
    try:
        findings = api.diagnose_case(entry.path)
    except CaseError:
        problem = f"not analyzed: run `culprit analyze {entry.path}`"
    except AnalyzerError as exc:
        problem = str(exc)
    except DAMAGE as exc:
        problem = f"cannot diagnose the case: {first_line(exc)}"
    return Summary(entry, meta.counts.rows, hosts, meta.first_ts, meta.last_ts, findings, problem)


def host_errors(entry: CaseEntry) -> api.HostErrors | None:
    """Every host's errors as the diagnosis reads them; None when the case is not analyzed
    (with this catalogue), as the case list says of it."""
    try:
        return api.host_errors(entry.path)
    except CaseError:
        return None


_Stamp = tuple[int | None, int | None]
_Value = TypeVar("_Value")


def _stamp(path: Path) -> _Stamp:
    """What changes when a case is re-ingested (case.json) or re-matched (matches.parquet)."""

    def mtime(file: Path) -> int | None:
        try:
            return file.stat().st_mtime_ns
        except OSError:
            return None

    return mtime(path / META_FILE), mtime(path / MATCHES_FILE)


class CaseCache(Generic[_Value]):
    """Values computed from a case, kept in memory: a diagnosis takes seconds on a large
    case and the pages are reloaded often. An entry is reused while case.json and
    matches.parquet keep their modification times, so a case analyzed meanwhile shows its
    verdict on the next load."""

    def __init__(self, compute: Callable[[CaseEntry], _Value]) -> None:
        self._compute = compute
        self._cache: dict[CaseEntry, tuple[_Stamp, _Value]] = {}
        self._lock = threading.Lock()

    def get(self, entry: CaseEntry) -> _Value:
        """The value for ``entry``, computed unless cached for its current files."""
        stamp = _stamp(entry.path)
        with self._lock:
            cached = self._cache.get(entry)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        # Computed outside the lock: two requests may both compute a case once, which is
        # cheaper than making every other case wait for it.
        value = self._compute(entry)
        with self._lock:
            self._cache[entry] = (stamp, value)
        return value


class Summaries(CaseCache[Summary]):
    """The case list's summaries (:func:`summarize`), cached."""

    def __init__(self) -> None:
        super().__init__(summarize)
