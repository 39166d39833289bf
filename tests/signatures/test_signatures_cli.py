"""``culprit signatures list|show|lint|test``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli import app
from tests.signatures.conftest import signature_text

runner = CliRunner(env={"COLUMNS": "200"})


def test_list_shows_one_line_per_signature(folder: Callable[..., Path]) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    result = runner.invoke(app, ["signatures", "list", "--signatures", str(extra)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(line.startswith("COORD-HB-001 ") for line in lines)
    assert any(line.split()[:2] == ["COORD-T-001", "root"] for line in lines)
    only = runner.invoke(app, ["signatures", "list", "--family", "coordination", "--role", "root"])
    assert only.exit_code == 0
    assert all(" root " in line for line in only.stdout.splitlines())


def test_show_prints_the_file_and_the_page() -> None:
    result = runner.invoke(app, ["signatures", "show", "coordination-heartbeat-timeout"])
    assert result.exit_code == 0, result.output
    assert 'code = "COORD-HB-001"' in result.stdout
    assert "knowledge: " in result.stdout
    missing = runner.invoke(app, ["signatures", "show", "NOPE-X-001"])
    assert missing.exit_code == 2
    assert "no signature has code or name 'NOPE-X-001'" in missing.stderr


def test_lint_exit_codes(folder: Callable[..., Path]) -> None:
    clean = runner.invoke(app, ["signatures", "lint"])
    assert clean.exit_code == 0, clean.output
    assert "no problems" in clean.stderr
    broken = folder(
        {
            "coordination/test-widget-failed.toml": signature_text(
                regex="widget failed on chip (?P<chip>[0-9]+"
            )
        }
    )
    result = runner.invoke(app, ["signatures", "lint", "--signatures", str(broken)])
    assert result.exit_code == 1
    assert "regex does not compile" in result.stdout


def test_test_runs_examples_and_matches_a_line(folder: Callable[..., Path]) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    path = extra / "coordination" / "test-widget-failed.toml"
    result = runner.invoke(app, ["signatures", "test", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 signature(s), every example passes" in result.stderr
    line = runner.invoke(
        app, ["signatures", "test", "--signatures", str(extra), "--line", "widget failed on chip 3"]
    )
    assert line.exit_code == 0, line.output
    assert line.stdout == 'COORD-T-001\ttest-widget-failed\troot\t{"chip": "3"}\n'
    none = runner.invoke(app, ["signatures", "test", "--line", "all is well"])
    assert none.exit_code == 1
    assert "no signature matches" in none.stderr


def test_test_reports_failing_examples(folder: Callable[..., Path]) -> None:
    text = signature_text().replace('captures = { chip = "7" }', 'captures = { chip = "8" }')
    extra = folder({"coordination/test-widget-failed.toml": text})
    result = runner.invoke(
        app, ["signatures", "test", str(extra / "coordination" / "test-widget-failed.toml")]
    )
    assert result.exit_code == 1
    assert "example 1 captures {'chip': '7'}, expected {'chip': '8'}" in result.stdout
