"""``report.html``: what it holds, that it is self-contained and deterministic, and the heat
strip's rows (one per host or group, culprit first), checked in data and in a real browser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.diagnose.evidence import load
from analyzer.report import heat
from analyzer.report.html import _script_json
from analyzer.report.redact import redact
from analyzer.signatures.catalog import load as load_catalogue
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import EXAMPLE, small

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, api.AnalyzeResult]:
    """Two scenarios analyzed with --html: 64 hosts (so hosts collapse into groups) and a
    ModelArts job."""
    root = tmp_path_factory.mktemp("html")
    done = {}
    for name, hosts in (("host-crash-heartbeat", 64), ("hccl-timeout-modelarts", 8)):
        generate(name, small(hosts, 3), root / name / "gen")
        done[name] = api.analyze(
            [root / name / "gen" / BUNDLE_DIR],
            root / name / "out",
            api.AnalyzeSettings(jobs=1, html=True),
        )
    return done


def _strip(result: api.AnalyzeResult) -> dict[str, Any]:
    case = api.load_case(result.case)
    catalogue = load_catalogue()
    return heat.heat_strip(load(case, catalogue), result.findings, redact)


def _hosts_with_time(result: api.AnalyzeResult) -> int:
    counted = api.query(
        result.case,
        "SELECT count(DISTINCT host) FROM rows WHERE host IS NOT NULL AND ts IS NOT NULL",
    )
    return int(counted.column(0)[0].as_py())


@pytest.mark.parametrize("scenario", ["host-crash-heartbeat", "hccl-timeout-modelarts"])
def test_strip_has_every_host_once_with_the_culprit_first(
    analyzed: dict[str, api.AnalyzeResult], scenario: str
) -> None:
    result = analyzed[scenario]
    strip = _strip(result)
    assert sum(row["hosts"] for row in strip["rows"]) == _hosts_with_time(result)
    assert strip["rows"][0]["label"] == result.findings.verdict.culprit.host
    assert all(len(row["codes"]) == heat.BUCKETS for row in strip["rows"])
    first = [m for m in strip["markers"] if m["kind"] == "first-error"]
    cited = result.findings.verdict.first_error
    assert cited is not None and first
    assert (first[-1]["path"], first[-1]["line"]) == (cited.citation.path, cited.citation.line)
    assert first[-1]["row"] == 0
    # The first error's cell holds a root code and lists the row.
    bucket = first[-1]["bucket"]
    assert strip["rows"][0]["codes"][bucket] == "4"
    listed = [strip["evidence"][i] for i in strip["cells"][f"0,{bucket}"]]
    assert [cited.citation.path, cited.citation.line] in [e[:2] for e in listed]


def test_hosts_beyond_the_single_rows_collapse_into_counted_groups(
    analyzed: dict[str, api.AnalyzeResult],
) -> None:
    result = analyzed["host-crash-heartbeat"]
    strip = _strip(result)
    assert len(strip["rows"]) < 64
    groups = [row for row in strip["rows"] if row["hosts"] > 1]
    assert groups and all(re.match(r"[\d,]+ hosts like ", row["label"]) for row in groups)
    assert [row["hosts"] for row in strip["rows"][: heat.SINGLE_ROWS]] == [1] * heat.SINGLE_ROWS


def test_groups_fall_back_to_first_error_buckets(
    analyzed: dict[str, api.AnalyzeResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heat, "SINGLE_ROWS", 2)
    monkeypatch.setattr(heat, "MAX_GROUPS", 1)
    result = analyzed["host-crash-heartbeat"]
    strip = _strip(result)
    assert sum(row["hosts"] for row in strip["rows"]) == _hosts_with_time(result)
    assert strip["rows"][0]["label"] == result.findings.verdict.culprit.host


def test_page_is_self_contained_and_deterministic(analyzed: dict[str, api.AnalyzeResult]) -> None:
    result = analyzed["hccl-timeout-modelarts"]
    page = (result.report_path.parent / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)
    assert "url(" not in page
    assert "default-src 'none'" in page
    assert page == api.report_html(result.case)
    verdict = result.findings.verdict
    assert verdict.summary.split(":")[0] in page
    first = verdict.first_error
    assert first is not None and f'id="row-{first.citation.row_id}"' in page
    assert f'id="kb-{first.knowledge}"' in page
    assert "Around the first error, host by host" in page
    # The lines around the first error, the cited one marked, for several hosts.
    crash = analyzed["host-crash-heartbeat"]
    timeline = {row.host for row in crash.findings.verdict.timeline}
    page = (crash.report_path.parent / "report.html").read_text(encoding="utf-8")
    assert len(timeline) > 2 and page.count('<tr class="first">') >= 3


def test_json_in_the_page_cannot_close_its_script() -> None:
    text = _script_json({"m": "</script><script>alert(1)</script> & <b>"})
    assert "<" not in text and ">" not in text and "&" not in text


def test_report_command_writes_each_format(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.analyze([EXAMPLE], out, api.AnalyzeSettings(jobs=1))
    for fmt, name in (("html", "report.html"), ("md", "report.md"), ("json", "findings.json")):
        result = runner.invoke(
            app, ["report", str(out / "case"), "--format", fmt, "-o", str(tmp_path / fmt)]
        )
        assert result.exit_code == 0, result.output
        assert (tmp_path / fmt / name).is_file()
    assert (tmp_path / "md" / "report.md").read_bytes() == (out / "report.md").read_bytes()
    result = runner.invoke(app, ["report", str(out / "case"), "--format", "pdf"])
    assert result.exit_code != 0 and "unknown format 'pdf'" in result.output


def test_report_of_an_unmatched_case_says_so(tmp_path: Path) -> None:
    case = api.ingest([EXAMPLE], tmp_path / "case", jobs=1).case
    result = runner.invoke(app, ["report", str(case), "--format", "html"])
    assert result.exit_code != 0
    assert "not matched" in result.output


# -- in a real browser ---------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["host-crash-heartbeat", "hccl-timeout-modelarts"])
def test_report_in_the_browser(
    analyzed: dict[str, api.AnalyzeResult], offline_page: Any, scenario: str
) -> None:
    result = analyzed[scenario]
    verdict = result.findings.verdict
    opened = offline_page()
    page = opened.page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((result.report_path.parent / "report.html").as_uri())
    assert page.inner_text("#verdict .cause").startswith("Cause: ")
    assert verdict.failure_mode in page.inner_text("#failure-table")
    rows = page.locator("#heat-svg .heat-row")
    counts = [int(rows.nth(i).get_attribute("data-hosts")) for i in range(rows.count())]
    assert sum(counts) == _hosts_with_time(result)
    assert rows.first.get_attribute("data-label") == verdict.culprit.host
    page.locator(".first-error-marker").last.click()
    first = verdict.first_error
    assert first is not None
    listed = page.inner_text("#cell-rows")
    assert f"{first.citation.path}:{first.citation.line}" in listed
    page.locator("#cell-rows a.cite").first.click()
    assert page.evaluate("location.hash") == f"#row-{first.citation.row_id}"
    # A coloured cell lists its rows too (the first error's own cell lies under its marker).
    page.locator("#heat-svg rect.cell[data-code='3']").first.click()
    assert page.locator("#cell-rows li.cited").count() >= 1
    opened.screenshot(f"report-{scenario}")
    assert errors == []
    assert opened.blocked == []
