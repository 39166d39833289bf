"""Free space for an ingest: what it needs and where, checked before anything is written; and
a disk that fills up anyway, turned into one clear error.

An ingest writes its case into a staging directory beside the target: the row files (worker
processes write theirs there too), and a part rewritten beside itself while hosts and
duplicates are settled. Remote inputs are mirrored into a scratch directory first (the
system's temporary directory, or ``--scratch``); their size is not known before they are
listed, so only a write that fails there is named by it. The estimate comes from measured
ingests (``docs/reliability.md``).
"""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from analyzer.errors import DiskSpaceError

#: Bytes of case per byte of the bundle on disk: measured cases were 0.06 (Cloud Logging
#: JSON, a generated incident) to 0.26 (plain container text) of their bundle.
CASE_RATIO: Final = 0.3
#: While hosts and duplicates are settled, a part file (up to a million rows; 80 bytes a row
#: at most, measured) is rewritten beside itself: the staging directory peaks at its case plus
#: one part.
REWRITE_BYTES: Final = 128 << 20
#: What a full file system or an exhausted quota reports.
_FULL_CODES: Final = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True)
class Place:
    """One file system an ingest writes to: the directory named in messages, the bytes the
    ingest needs there, and what was free when the ingest started (``None``: the system
    would not say)."""

    directory: Path
    needed: int
    free: int | None


@dataclass(frozen=True)
class Need:
    """Where an ingest writes its case and how much, and the scratch directory remote inputs
    are mirrored into (``None``: the system's temporary directory)."""

    case: Place
    scratch_dir: Path | None

    def place_of(self, written: str | None) -> Place:
        """The place a failed write went to, by its file name (the case's when unknown): the
        scratch directory when the write was in it."""
        scratch = self.scratch_dir
        if written is None or scratch is None:
            return self.case
        inside = Path(written)
        if inside != scratch and scratch not in inside.parents:
            return self.case
        return Place(scratch, 0, _free(scratch))


def estimate(target: Path, input_bytes: int, scratch: Path | None) -> Need:
    """What an ingest of ``input_bytes`` into ``target`` needs, with remote inputs mirrored
    into ``scratch``."""
    case = int(input_bytes * CASE_RATIO)
    case_dir = target.parent
    return Need(Place(case_dir, case + min(case, REWRITE_BYTES), _free(case_dir)), scratch)


def check(need: Need) -> None:
    """Refuse an ingest that will not fit, before anything is written.

    Raises:
        DiskSpaceError: a place has less free space than the ingest needs there.
    """
    place = need.case
    if place.free is not None and place.needed > place.free:
        raise DiskSpaceError(
            f"not enough free space: this ingest needs about {_size(place.needed)} here, "
            f"and {_size(place.free)} is free; {_advice(need, place)} "
            "(the estimate is an upper bound: --no-space-check tries anyway)",
            path=str(place.directory),
        )


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says a file system or a quota is full. polars and
    Ray report it in their message only, pyarrow and the OS with an errno."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _FULL_CODES:
            return True
        text = str(current)
        if any(os.strerror(code) in text for code in _FULL_CODES):
            return True
        current = current.__cause__
    return False


def disk_full(need: Need, exc: BaseException) -> DiskSpaceError:
    """The one-line error for a write that found the disk full half-way (the caller has
    thrown away what was written)."""
    written = exc.filename if isinstance(exc, OSError) and exc.filename else None
    place = need.place_of(str(written) if written is not None else None)
    said = ""
    if place.needed:
        said = f"; this ingest needs about {_size(place.needed)} here"
        if place.free is not None:
            said += f", and {_size(place.free)} was free when it started"
    return DiskSpaceError(
        f"no space left on device, nothing half-written was kept{said}; {_advice(need, place)}",
        path=str(place.directory),
    )


def _advice(need: Need, place: Place) -> str:
    if place is not need.case:
        return "free some space, or mirror remote inputs elsewhere with --scratch DIR"
    return "free some space, or write the case elsewhere (-o)"


def _existing(path: Path) -> Path:
    """``path``, or its nearest ancestor that exists (the case directory may not yet)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _free(path: Path) -> int | None:
    try:
        return shutil.disk_usage(_existing(path)).free
    except OSError:
        return None


def _size(count: int) -> str:
    """Bytes for a person: 3.4 MB, 324 MB, 12 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            value = count / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{count} bytes"
