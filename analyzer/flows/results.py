"""What an analysis hands back, and how its files are written (shared by the analysis of a
bundle or case and that of a received handoff)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.diagnose.findings import Findings

if TYPE_CHECKING:
    # Only a handoff's analysis makes one: the verifier (and its cryptography) stays out of
    # the start-up of every other analysis.
    from analyzer.provenance.compare import HandoffCheck


@dataclass(frozen=True)
class AnalyzeResult:
    """What :func:`analyzer.api.analyze` wrote and concluded."""

    case: Path
    findings_path: Path
    report_path: Path
    findings: Findings
    ingested: bool
    matched: bool
    #: For a handoff: what its verification proved, and the re-diagnosis's comparison.
    handoff: HandoffCheck | None = None


def write_text(path: Path, text: str) -> None:
    """Write atomically (a reader never sees half a report), and leave nothing behind when
    the write fails (a full disk)."""
    temporary = path.with_name(f".{path.name}.partial")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
