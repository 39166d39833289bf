"""What a file as a whole says about its rows: the year of year-less stamps, the zone, and
the node or pod its path names.

Decided once per file, from its path and the head of its content, so a row's values do not
depend on how the file is cut into chunks.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Final

import polars as pl

from analyzer.hosts import POD_NAME
from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines import grammars
from analyzer.ingest.lines.grammars import Grammar
from analyzer.ingest.lines.head import any_dated, any_yearless
from analyzer.ingest.lines.parse import parse_lines
from analyzer.schema import TS_EARLIEST, TS_LATEST, plausible_ts

# Node names as they appear in bundle paths (GKE nodes, TPU VMs, IPs).
_PATH_HOST: Final = re.compile(r"^(?:gke-[a-z0-9-]+|[a-z0-9-]+-w-\d+|\d{1,3}(?:\.\d{1,3}){3})$")
_POD_FILE: Final = re.compile(POD_NAME)


def path_host(path: str) -> str | None:
    """A node name in the bundle path (``nodes/gke-…/kubelet.log``), if there is one."""
    for part in reversed(path.split("/")[:-1]):
        if _PATH_HOST.match(part.lower()):
            return part
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    for piece in (stem, stem.removeprefix("kubelet-"), stem.removesuffix("-kubelet")):
        if _PATH_HOST.match(piece.lower()):
            return piece
    return None


def path_pod(path: str) -> str | None:
    """A JobSet pod name used as the file name (``kubectl logs POD > POD.log``)."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return stem if _POD_FILE.match(stem) else None


@dataclass
class FileHints:
    """What a file as a whole says about its rows.

    ``anchor`` gives year-less stamps their year; ``tz`` is the zone of local stamps; the
    other fields fill the row columns of the same name where a line does not say; ``extra``
    goes into every row's ``extra``.
    """

    anchor: dt.date
    tz: str
    host: str | None = None
    pod: str | None = None
    container: str | None = None
    workload: str | None = None
    worker: int | None = None
    extra: dict[str, str] = field(default_factory=dict)


#: How many head lines are looked at for a stamp that carries its year.
_ANCHOR_LINES: Final = 500


def year_anchor(
    head: bytes,
    ctx: ReadContext,
    tz: str,
    grammar_set: tuple[Grammar, ...] = grammars.GRAMMARS,
) -> dt.date:
    """A date near this file's logs, for stamps without a year.

    In order: ``--year``; the glog/klog ``Log file created at:`` header; the first line in the
    file's head whose own stamp carries a year; the file's modification time. Decided from the
    head of the file so it does not depend on how the file is cut into chunks. Where the year
    came from is recorded in ``ctx.year_from`` (``option``, ``header``, ``file``, ``mtime``):
    years taken from the modification time are checked again against the rest of the bundle
    when the case is finished.
    """
    if ctx.options.year is not None:
        ctx.year_from = "option"
        return dt.date(ctx.options.year, 7, 2)
    lines = head.decode("utf-8", "replace").splitlines()[:_ANCHOR_LINES]
    for line in lines[:20]:
        match = re.match(grammars.LOG_FILE_HEADER, line)
        if match:
            try:
                anchor = dt.date(*(int(part) for part in match.groups()))
            except ValueError:
                break
            if not TS_EARLIEST.year <= anchor.year < TS_LATEST.year:
                break
            ctx.year_from = "header"
            return anchor
    ctx.year_from = "mtime"
    fallback = ctx.anchor_date()
    if not lines or not any_yearless(lines, grammar_set):
        return fallback  # nothing in this head needs a year
    if not any_dated(lines, grammar_set):
        return fallback  # nothing in this head could give one (a journal, a klog file)
    text = pl.Series(lines, dtype=pl.String).str.replace_all(grammars.ANSI_ESCAPE, "")
    parsed = parse_lines(text, anchor=fallback, tz=tz, grammars=grammar_set)
    # A placeholder stamp (9999-12-31, 0001-01-01) must not give every other line its year.
    dated = parsed.filter(
        pl.col("ts_quality").is_in(["exact", "inferred_tz"]) & plausible_ts(pl.col("ts"))
    )["ts"]
    if dated.len():
        ctx.year_from = "file"
        first = dated.item(0)
        return first.date()  # type: ignore[no-any-return]
    return fallback
