"""``culprit diff``: a healthy and a failed run of the same generated job; two healthy runs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from fixtures.generate import generate
from fixtures.healthy import generate_healthy
from fixtures.truth import BUNDLE_DIR
from tests.conftest import small

SCENARIO = "host-crash-heartbeat"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Cases of two healthy runs and a failed run of the same job (8 hosts)."""
    root = tmp_path_factory.mktemp("diff")
    options = small(8, 1)
    cases: dict[str, Path] = {}
    for run in (0, 1):
        bundle = generate_healthy(SCENARIO, options, root / f"healthy{run}", run=run)
        api.ingest([bundle], root / f"healthy{run}-case")
        cases[f"healthy{run}"] = root / f"healthy{run}-case"
    truth = generate(SCENARIO, options, root / "failed")
    api.ingest([root / "failed" / BUNDLE_DIR], root / "failed-case")
    cases["failed"] = root / "failed-case"
    first = truth.attempts[0].first_error
    (root / "first").write_text(f"{first.path}:{first.line}")
    cases["first"] = root / "first"
    return cases


def test_the_planted_failure_is_listed_first(runs: dict[str, Path]) -> None:
    result = api.diff(runs["healthy0"], runs["failed"])
    assert result.entries, "the failed run logged nothing new"
    top = result.entries[0]
    assert top.kind == "new" and top.error
    assert f"{top.path}:{top.line}" == runs["first"].read_text()


def test_two_healthy_runs_list_nothing(runs: dict[str, Path]) -> None:
    assert api.diff(runs["healthy0"], runs["healthy1"]).entries == []
    assert api.diff(runs["healthy1"], runs["healthy0"]).entries == []


def test_the_cli_prints_the_diff_and_json(runs: dict[str, Path]) -> None:
    runner = CliRunner()
    quiet = runner.invoke(app, ["diff", str(runs["healthy0"]), str(runs["healthy1"])])
    assert quiet.exit_code == 0, quiet.output
    assert "nothing above the baseline's noise floor" in quiet.output
    loud = runner.invoke(app, ["diff", str(runs["healthy0"]), str(runs["failed"]), "--json"])
    assert loud.exit_code == 0, loud.output
    data = json.loads(loud.output)
    assert data["rule"] == "cross-run-diff"
    first = data["entries"][0]["citation"]
    assert f"{first['path']}:{first['line']}" == runs["first"].read_text()


def test_a_baseline_keeps_the_healthy_run_out_of_the_leads(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    case = tmp_path / "case"
    shutil.copytree(runs["failed"], case)
    settings = api.settings(builtin_signatures=False, baseline=runs["healthy0"])
    verdict = api.analyze([case], tmp_path / "out", settings).findings.verdict
    from analyzer.diagnose.patterns import baseline_templates, load_patterns

    healthy = baseline_templates(api.load_case(runs["healthy0"]))
    patterns = load_patterns(api.load_case(case))
    ids = [lead.citation.row_id for lead in verdict.leads]
    lead_templates = (
        patterns.rows.filter(pl.col("row_id").is_in(ids))
        .collect()
        .join(patterns.templates, on="template_id")["template"]
        .to_list()
    )
    assert healthy and lead_templates
    assert not set(lead_templates) & healthy
    assert f"{verdict.leads[0].citation.path}:{verdict.leads[0].citation.line}" == (
        runs["first"].read_text()
    )
    assert "leaving out every template the baseline run also logged" in " ".join(
        s.text for s in verdict.statements
    )


def test_a_bundle_needs_an_output_directory(runs: dict[str, Path], tmp_path: Path) -> None:
    from analyzer.errors import UsageError

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a.log").write_text("hello\n")
    with pytest.raises(UsageError, match="give -o DIR"):
        api.diff(runs["healthy0"], bundle)
