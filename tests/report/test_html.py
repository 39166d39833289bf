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
from analyzer.redact.case import for_case
from analyzer.report import heat
from analyzer.report.html import _script_json
from analyzer.signatures.catalog import load as load_catalogue
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import EXAMPLE, serious_violations, small

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
    return heat.heat_strip(load(case, catalogue), result.findings, for_case(case))


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
    # The ◆ lets a click through to its cell, whose rows include the first error.
    page.locator("#strip-wrap").scroll_into_view_if_needed()
    marker = page.locator(".first-error-marker").last.bounding_box()
    assert marker is not None
    page.mouse.click(marker["x"] + marker["width"] / 2, marker["y"] + marker["height"] / 2)
    first = verdict.first_error
    assert first is not None
    listed = page.inner_text("#cell-rows")
    assert f"{first.citation.path}:{first.citation.line}" in listed
    assert "first error of attempt" in listed
    page.locator("#cell-rows a.cite").first.click()
    assert page.evaluate("location.hash") == f"#row-{first.citation.row_id}"
    # A coloured cell lists its rows too (the first error's own cell lies under its marker).
    page.locator("#heat-svg rect.cell[data-code='3']").first.click()
    assert page.locator("#cell-rows li.cited").count() >= 1
    opened.screenshot(f"report-{scenario}")
    assert errors == []
    assert opened.blocked == []


# -- an exact and accessible strip ---------------------------------------------------------------


def test_strip_times_are_exact_bucket_bounds_in_one_format(
    analyzed: dict[str, api.AnalyzeResult],
) -> None:
    """Every cited row of a cell lies within the bounds its title states; every time of the
    strip is written one way (UTC said once, by the page)."""
    strip = _strip(analyzed["hccl-timeout-modelarts"])
    edges = strip["edges"]
    assert len(edges) == heat.BUCKETS + 1 and edges == sorted(edges)
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}")
    assert all(stamp.fullmatch(edge) for edge in edges)
    checked = 0
    for key, indexes in strip["cells"].items():
        bucket = int(key.split(",")[1])
        for index in indexes:
            ts = strip["evidence"][index][3]
            assert stamp.fullmatch(ts)
            if 0 < bucket < heat.BUCKETS - 1:  # the end buckets also hold clipped rows
                assert edges[bucket] <= ts < edges[bucket + 1], (key, ts)
                checked += 1
    assert checked > 0
    labels = [tick["label"] for tick in strip["ticks"]]
    assert labels and len(labels) == len(set(labels)), "no tick label repeats"


def test_page_has_one_h1_a_main_a_text_alternative_and_a_dark_mode(
    analyzed: dict[str, api.AnalyzeResult],
) -> None:
    result = analyzed["host-crash-heartbeat"]
    page = (result.report_path.parent / "report.html").read_text(encoding="utf-8")
    assert page.count("<h1") == 1 and page.count("<main>") == 1
    assert "prefers-color-scheme: dark" in page
    assert 'aria-live="polite"' in page
    assert "<noscript>" in page
    strip = _strip(result)
    for index, row in enumerate(strip["rows"]):
        assert f'<tr id="strip-row-{index}">' in page
        for member in row.get("members", []):
            assert member in page, "a group lists its hosts"
    # A space between the culprit's support and its first citation.
    assert not re.search(r"hosts\)<a", page)


def _tab_to(page: Any, element_id: str, limit: int = 400) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return
    pytest.fail(f"#{element_id} is not reachable with Tab")


def test_the_strip_works_from_the_keyboard(
    analyzed: dict[str, api.AnalyzeResult], offline_page: Any
) -> None:
    """Tab reaches the strip; the cursor starts on the first error's cell, Enter lists it,
    the arrow keys move; every row label is a link to its line of the table."""
    result = analyzed["host-crash-heartbeat"]
    first = result.findings.verdict.first_error
    assert first is not None
    page = offline_page().page
    page.goto((result.report_path.parent / "report.html").as_uri())
    _tab_to(page, "heat-grid")
    page.keyboard.press("Enter")
    assert f"{first.citation.path}:{first.citation.line}" in page.inner_text("#cell-rows")
    before = page.inner_text("#cell-rows strong")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    after = page.inner_text("#cell-rows strong")
    assert after != before and " UTC" in after
    links = page.locator("#strip-labels a.row-link")
    assert links.count() == page.locator("#heat-svg .heat-row").count()
    group = page.locator("#strip-labels a.row-link", has_text="hosts like").first
    group.focus()
    page.keyboard.press("Enter")
    target = page.evaluate("location.hash")
    assert re.fullmatch(r"#strip-row-\d+", target)
    assert "hosts like" in page.inner_text(target)


def test_with_javascript_off_a_notice_and_the_table_stand_in(
    analyzed: dict[str, api.AnalyzeResult], browser: Any
) -> None:
    result = analyzed["host-crash-heartbeat"]
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((result.report_path.parent / "report.html").as_uri())
        assert page.locator("#no-script").is_visible()
        assert "JavaScript is off" in page.inner_text("#no-script")
        assert page.locator("#heat-svg").count() == 0
        page.locator("#strip-text > summary").click()
        rows = page.locator("#strip-table tbody tr")
        assert rows.count() == len(_strip(result)["rows"])
        assert rows.first.is_visible()
    finally:
        context.close()


@pytest.fixture(scope="module")
def hosts_256(tmp_path_factory: pytest.TempPathFactory) -> api.AnalyzeResult:
    root = tmp_path_factory.mktemp("html-256")
    generate("host-crash-heartbeat", small(256, 3), root / "gen")
    return api.analyze(
        [root / "gen" / BUNDLE_DIR], root / "out", api.AnalyzeSettings(jobs=1, html=True)
    )


@pytest.mark.parametrize(
    ("which", "scheme"), [("4 hosts", "light"), ("4 hosts", "dark"), ("256 hosts", "light")]
)
def test_axe_finds_no_violation_at_all(
    analyzed: dict[str, api.AnalyzeResult],
    request: pytest.FixtureRequest,
    offline_page: Any,
    which: str,
    scheme: str,
    tmp_path: Path,
) -> None:
    if which == "4 hosts":
        result = api.analyze([EXAMPLE], tmp_path / "out", api.AnalyzeSettings(html=True))
    else:
        result = request.getfixturevalue("hosts_256")
    assert result.findings.bundle.hosts == int(which.split()[0])
    page = offline_page().page
    page.emulate_media(color_scheme=scheme)
    page.goto((result.report_path.parent / "report.html").as_uri())
    assert page.locator("#heat-svg").count() == 1
    page.locator("#heat-svg rect.cell").first.click()
    # Not even a minor one (the page once had no main landmark and content outside any).
    assert serious_violations(page, ("minor", "moderate", "serious", "critical")) == []
