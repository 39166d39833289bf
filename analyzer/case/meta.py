"""Build ``case.json`` from an ingest's inventory, whether one process or many shards read it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from analyzer import __version__
from analyzer.bundle import Bundle, BundleLimits, content_hash_of
from analyzer.case.inputs import ReadOptions
from analyzer.case.layout import BundleInfo, CaseMeta, Counts, InputInfo

_REFUSED = ("refused", "damaged", "binary", "unreadable")
_SUMMED = (
    "records",
    "rows",
    "folded",
    "blank",
    "quarantined",
    "repaired",
    "duplicates",
    "out_of_range",
)


def ingest_settings(
    options: ReadOptions, limits: BundleLimits, reader: str | None
) -> dict[str, Any]:
    """The options a case was ingested with, as ``case.json`` stores them (plain JSON)."""
    settings = {
        "read": dataclasses.asdict(options),
        "limits": dataclasses.asdict(limits),
        "reader": reader,
    }
    return json.loads(json.dumps(settings))  # type: ignore[no-any-return]


def input_infos(bundle: Bundle) -> list[InputInfo]:
    """The bundle's inputs as given on the command line."""
    return [
        InputInfo(
            path=str(path.resolve()),
            kind="directory" if path.is_dir() else "file",
            bytes=bundle.input_bytes if len(bundle.inputs) == 1 else _size(path),
        )
        for path in bundle.inputs
    ]


def build_meta(
    inputs: Sequence[InputInfo],
    fingerprint: str,
    settings: dict[str, Any],
    files: Sequence[dict[str, Any]],
) -> CaseMeta:
    """``case.json`` from the final inventory records (in file_id order)."""
    counts = Counts(files=len(files))
    first: int | None = None
    last: int | None = None
    disk: list[tuple[str, str]] = []
    for record in files:
        status = record["status"]
        if status in ("read", "partial"):
            counts.files_read += 1
        if status == "partial":
            counts.files_partial += 1
        if status in _REFUSED:
            counts.files_refused += 1
        if record["reader"] == "unrecognized":
            counts.files_unrecognized += 1
        for key in _SUMMED:
            setattr(counts, key, getattr(counts, key) + (record.get(key) or 0))
        if record["ts_min"] is not None:
            first = record["ts_min"] if first is None else min(first, record["ts_min"])
            last = record["ts_max"] if last is None else max(last, record["ts_max"])
        if record["on_disk"] and record["sha256"]:
            disk.append((record["path"], record["sha256"]))
    return CaseMeta(
        tool_version=__version__,
        created_at=dt.datetime.now(tz=dt.UTC),
        bundle=BundleInfo(
            inputs=list(inputs), fingerprint=fingerprint, content_hash=content_hash_of(disk)
        ),
        options=settings,
        counts=counts,
        first_ts=_from_ns(first),
        last_ts=_from_ns(last),
    )


def _from_ns(value: int | None) -> dt.datetime | None:
    if value is None:
        return None
    return dt.datetime.fromtimestamp(value // 1_000_000_000, tz=dt.UTC).replace(
        microsecond=(value % 1_000_000_000) // 1000
    )


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
