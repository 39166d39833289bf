"""A replay spec may name a baseline: a healthy run of the same job whose templates never
become leads of the replayed incident."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.errors import UsageError
from analyzer.replay.run import run_spec
from analyzer.replay.spec import read_spec

EXPECTED = """\
input = "failed.log"
baseline = "{baseline}"

[[attempts]]
index = 0
failure_mode = "undetermined"
first_error = "none"
culprit_kind = "undetermined"
"""


def _spec(root: Path, baseline: str) -> Path:
    spec = root / "spec"
    spec.mkdir()
    (spec / "failed.log").write_text(
        "ERROR metrics export failed, will retry\nstarting step 1\n"
        "ERROR metrics export failed, will retry\nERROR widget calibration failed on unit 7\n",
        encoding="utf-8",
    )
    (spec / "expected.toml").write_text(EXPECTED.format(baseline=baseline), encoding="utf-8")
    return spec


def test_a_missing_baseline_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="baseline 'healthy.log' does not exist"):
        read_spec(_spec(tmp_path, "healthy.log"))


def test_the_baseline_keeps_its_templates_out_of_the_leads(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "healthy.log")
    (spec / "healthy.log").write_text(
        "ERROR metrics export failed, will retry\nstarting step 1\n", encoding="utf-8"
    )
    outcome = run_spec(read_spec(spec), tmp_path / "work")
    assert outcome.error is None and outcome.differences == []
    findings = json.loads((tmp_path / "work" / "findings.json").read_text(encoding="utf-8"))
    leads = [row["message"] for row in findings["verdict"]["leads"]]
    assert leads == ["ERROR widget calibration failed on unit 7"]
