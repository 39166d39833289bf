"""``culprit replay``: the repository's suite passes; a changed signature makes a spec fail
with a readable difference, ``--accept`` freezes the new verdict, and JUnit XML is written."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.diagnose.findings import Findings
from analyzer.errors import UsageError
from analyzer.replay.spec import read_spec
from analyzer.report.registry import renderer
from tests.conftest import REPO

SUITE = REPO / "fixtures" / "replay"
runner = CliRunner(env={"COLUMNS": "200"})

#: A site signature that makes an ordinary start-up line of the host-crash bundle a root
#: cause with the highest precedence: it must move the verdict.
EARLY_ROOT = """\
code = "NODE-SITE-901"
name = "site-absl-before-initialize"
title = "A site rule that treats absl's early-logging warning as a failure"
family = "node"
knowledge = "node-kernel-fault"
sources = ["cloud_logging", "text"]
role = "root"
scope = "host"
culprit = "emitter"
severity = "error"
precedence = 100
anchors = ["before absl::InitializeLog() is called"]
regex = '''All log messages before absl::InitializeLog\\(\\) is called'''

[[examples]]
line = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"

[[counter_examples]]
line = "absl::InitializeLog() was called"
"""


def test_the_repository_suite_passes(tmp_path: Path) -> None:
    """…and every spec's report in the modelarts-zh template is Chinese: the script
    tests/report/english.py finds no English outside citations, log lines, identifiers and
    text quoted in English from the catalogue (the same run, so no second analysis)."""
    junit, work = tmp_path / "replay.xml", tmp_path / "work"
    result = runner.invoke(
        app,
        ["replay", str(SUITE), "--junit", str(junit), "--jobs", "2", "--work", str(work)],
    )
    assert result.exit_code == 0, result.output
    assert "17 of 17 specs pass" in result.stdout
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "17" and suite.get("failures") == "0"
    chinese = renderer("modelarts-zh")
    written = []
    for findings in sorted(work.glob("*/findings.json")):
        report = findings.with_name("report.zh.md")
        report.write_text(chinese(Findings.model_validate_json(findings.read_bytes())), "utf-8")
        written.append(str(report))
    assert len(written) == 17
    check = subprocess.run(
        [sys.executable, "-m", "tests.report.english", *written],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (check.returncode, check.stdout) == (0, "")


def test_a_new_signature_fails_replay_readably_and_accept_freezes_it(tmp_path: Path) -> None:
    spec = tmp_path / "host-crash-heartbeat"
    shutil.copytree(SUITE / "host-crash-heartbeat", spec)
    site = tmp_path / "site" / "node"
    site.mkdir(parents=True)
    (site / "site-absl-before-initialize.toml").write_text(EARLY_ROOT, encoding="utf-8")
    signatures = ["--signatures", str(tmp_path / "site")]

    failed = runner.invoke(app, ["replay", str(spec), *signatures])
    assert failed.exit_code == 1, failed.output
    assert "attempt 0 first_error: expected 'gcs/stderr/" in failed.stdout
    assert "attempt 0 failure_mode: expected 'tpu_hw_fatal', got 'node_kernel_fault'" in (
        failed.stdout
    )
    assert "0 of 1 specs pass" in failed.stdout

    accepted = runner.invoke(app, ["replay", str(spec), *signatures, "--accept"])
    assert accepted.exit_code == 0, accepted.output
    assert read_spec(spec).expected.attempts[0].failure_mode == "node_kernel_fault"

    again = runner.invoke(app, ["replay", str(spec), *signatures])
    assert again.exit_code == 0, again.output
    # Without the site signature the frozen verdict no longer holds.
    assert runner.invoke(app, ["replay", str(spec)]).exit_code == 1


def test_a_broken_spec_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "expected.toml").write_text('input = "nowhere"\n', encoding="utf-8")
    with pytest.raises(UsageError, match="attempts"):
        api.replay([tmp_path / "bad"])
    result = runner.invoke(app, ["replay", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert "no such directory" in result.stderr


def test_a_broken_signature_folder_stops_replay_once(tmp_path: Path) -> None:
    site = tmp_path / "site" / "node"
    site.mkdir(parents=True)
    (site / "broken.toml").write_text(EARLY_ROOT.replace('"error"', '"loud"'), encoding="utf-8")
    result = runner.invoke(
        app, ["replay", str(SUITE / "host-crash-heartbeat"), "--signatures", str(tmp_path / "site")]
    )
    assert result.exit_code == 2
    assert "broken.toml:10: severity" in result.stderr
