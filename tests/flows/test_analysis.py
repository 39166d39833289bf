"""The analysis flow reads a case's evidence once for the diagnosis and every picture, and
what it writes is what the separate steps write."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import api
from analyzer.case.store import Case
from analyzer.diagnose import evidence
from analyzer.diagnose import run as diagnose_run
from analyzer.report import html, timeline
from analyzer.report.registry import HTML_FILE, REPORT_FILE
from analyzer.report.timeline import TIMELINE_FILE
from analyzer.signatures.catalog import Catalogue
from tests.conftest import EXAMPLE


def test_evidence_read_once_and_reports_as_the_report_command_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = evidence.load

    def counting(case: Case, catalogue: Catalogue) -> evidence.CaseData:
        calls.append(case.path)
        return real(case, catalogue)

    # Every module that reads evidence, under the name it imported it by.
    for module in (evidence, diagnose_run, timeline, html):
        monkeypatch.setattr(module, "load", counting)
    out = tmp_path / "out"
    api.analyze([EXAMPLE], out, api.AnalyzeSettings(jobs=1, html=True))
    # Diagnosis, timeline.svg and report.html: one read.
    assert len(calls) == 1
    monkeypatch.undo()

    # The report command (which diagnoses and reads on its own) writes the same files.
    again = tmp_path / "again"
    api.report(out / "case", "md", again)
    api.report(out / "case", "html", again)
    for name in (REPORT_FILE, TIMELINE_FILE, HTML_FILE):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
