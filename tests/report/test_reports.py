"""``culprit analyze`` as users run it: the terminal verdict, --json, the ModelArts template,
snapshots of report.md and findings.json, determinism, and a case no signature explains.

Snapshots live in tests/report/snapshots/; after an intended change, rewrite them with
``CULPRIT_UPDATE_SNAPSHOTS=1 pytest tests/report`` and review the diff."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.diagnose.findings import Findings
from tests.conftest import EXAMPLE, Generated
from tests.report.english import english_phrases

runner = CliRunner(env={"COLUMNS": "200"})
SNAPSHOTS = Path(__file__).parent / "snapshots"
SNAPSHOT_SCENARIOS = ["host-crash-heartbeat", "silent-host", "hbm-oom-compile", "restart-loop"]


def test_analyze_prints_the_verdict_and_writes_both_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Cause: ")
    assert lines[1].startswith("Culprit: node gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-p4vd")
    assert lines[2].startswith("Confidence: HIGH")
    assert "First error: gcloud/node-and-system-events.json:63" in result.stdout
    assert (out / "case" / "case.json").is_file()
    findings = Findings.model_validate_json((out / "findings.json").read_text(encoding="utf-8"))
    assert findings.verdict.first_error is not None
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# culprit report")


def test_json_prints_the_findings_only(tmp_path: Path) -> None:
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    parsed = json.loads(result.stdout)
    assert parsed["schema_version"] == "culprit-findings/1"
    assert parsed["verdict"]["culprit"]["kind"] == "infrastructure"


def test_schema_findings_is_the_models_json_schema() -> None:
    result = runner.invoke(app, ["schema", "findings"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["title"] == "Findings"
    assert {"verdict", "attempts", "bundle", "schema_version"} <= set(schema["properties"])


def test_a_bundle_needs_an_output_directory_and_a_bad_template_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["analyze", str(EXAMPLE)])
    assert result.exit_code == 2
    assert "needs -o DIR" in result.stderr
    bad = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", str(tmp_path), "--template", "x"])
    assert bad.exit_code == 2
    assert "unknown template" in bad.stderr


def test_a_case_is_reused_and_its_reports_go_into_it(tmp_path: Path) -> None:
    first = api.analyze([EXAMPLE], tmp_path)
    assert first.ingested and first.matched
    again = api.analyze([first.case])
    assert not again.ingested and not again.matched
    assert again.findings_path == first.case / "findings.json"
    assert again.findings == first.findings


def test_modelarts_template_keeps_the_citations(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    made = generated("npu-in-use-modelarts", 64)
    result = api.analyze([made.case], tmp_path, api.AnalyzeSettings(template="modelarts-zh"))
    text = result.report_path.read_text(encoding="utf-8")
    for heading in ("## 诊断结论", "| 任务 | 当前状态 | 故障级别 |", "## 根因", "置信度：高（"):
        assert heading in text
    assert "## 修复建议" in text and "## 后续步骤" in text
    first = result.findings.verdict.first_error
    assert first is not None
    assert f"`{first.citation.path}:{first.citation.line}`" in text
    assert "需用户确认" in text  # the page's cluster-changing steps are marked
    assert english_phrases(text) == []


def test_analysis_is_deterministic(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    made = generated("restart-loop", 8)
    one = api.analyze([made.case], tmp_path / "one")
    two = api.analyze([made.case], tmp_path / "two")
    assert one.findings_path.read_bytes() == two.findings_path.read_bytes()
    assert one.report_path.read_bytes() == two.report_path.read_bytes()


def test_no_known_signature_gives_a_low_verdict_with_cited_leads(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text(
        "2026-11-29T18:00:00.000Z INFO starting worker\n"
        "2026-11-29T18:00:01.000Z ERROR widget 17 exploded in frobnicator\n"
        "2026-11-29T18:00:02.000Z ERROR widget 18 exploded in frobnicator\n"
        "2026-11-29T18:00:04.000Z ERROR sprocket misaligned at 0x1f\n",
        encoding="utf-8",
    )
    result = api.analyze([log], tmp_path / "out")
    verdict = result.findings.verdict
    assert verdict.confidence == "LOW"
    assert verdict.first_error is None
    assert verdict.culprit.kind == "undetermined" and verdict.culprit.host is None
    assert verdict.failure_mode == "undetermined"
    assert [(r.citation.path, r.citation.line) for r in verdict.leads] == [
        ("app.log", 2),
        ("app.log", 4),
    ]
    report = result.report_path.read_text(encoding="utf-8")
    assert "Cause not determined" in report and "`app.log:2`" in report


def test_no_redact_keeps_the_text_and_redaction_keeps_the_citation(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text(
        "2026-11-29T18:00:01.000Z ERROR upload to https://bob:s3cret@example.com failed\n",
        encoding="utf-8",
    )
    redacted = api.analyze([log], tmp_path / "a").findings.verdict.leads[0]
    kept = api.analyze(
        [log], tmp_path / "b", api.AnalyzeSettings(redact=False)
    ).findings.verdict.leads[0]
    assert "s3cret" not in redacted.message and "s3cret" in kept.message
    assert redacted.citation == kept.citation
    assert "s3cret" not in (tmp_path / "a" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", SNAPSHOT_SCENARIOS)
def test_reports_match_their_snapshots(
    generated: Callable[[str, int], Generated], tmp_path: Path, name: str
) -> None:
    made = generated(name, 8)
    result = api.analyze([made.case], tmp_path)
    for produced, suffix in ((result.report_path, "md"), (result.findings_path, "json")):
        snapshot = SNAPSHOTS / f"{name}.{suffix}"
        text = produced.read_text(encoding="utf-8")
        if os.environ.get("CULPRIT_UPDATE_SNAPSHOTS"):
            snapshot.write_text(text, encoding="utf-8")
        assert snapshot.is_file(), (
            f"no snapshot {snapshot.name}; run with CULPRIT_UPDATE_SNAPSHOTS=1"
        )
        assert text == snapshot.read_text(encoding="utf-8"), f"{snapshot.name} changed"
