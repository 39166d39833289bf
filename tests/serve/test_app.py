"""``culprit serve``'s app through Starlette's TestClient: the case list and its verdicts, the
report, the host list and pages (errors as the diagnosis reads them), the read-only SQL box,
ids that try to leave the served directory, and the CLI's refusal of a non-loopback address.
The limits and the cross-site defences are in tests/hardening/test_dashboard.py."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app as cli_app
from analyzer.diagnose.findings import Findings
from analyzer.errors import CaseError, UsageError
from analyzer.serve import hosts as hosts_mod
from analyzer.serve.app import create_app, trusted_hosts
from analyzer.serve.cases import find_cases
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import small

runner = CliRunner(env={"COLUMNS": "200"})


def build_cases(root: Path) -> Path:
    """A folder of cases as ``culprit analyze -o`` leaves them: two analyzed (``OUT/case``)
    and one only ingested, never matched."""
    generate("host-crash-heartbeat", small(8, 1), root / "gen1")
    generate("silent-host", small(8, 2), root / "gen2")
    cases = root / "cases"
    api.analyze([root / "gen1" / BUNDLE_DIR], cases / "inc1", api.AnalyzeSettings(jobs=1))
    api.analyze([root / "gen2" / BUNDLE_DIR], cases / "inc2", api.AnalyzeSettings(jobs=1))
    api.ingest([root / "gen1" / BUNDLE_DIR], cases / "fresh", jobs=1)
    (cases / "notes").mkdir()  # not a case: ignored
    return cases


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cases(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def findings(cases: Path) -> Findings:
    return api.diagnose_case(cases / "inc1" / "case")


@pytest.fixture(scope="module")
def client(cases: Path) -> Iterator[TestClient]:
    # One server for the module, as a user has one: its caches (verdicts, host errors) are
    # computed once, and every test sees them as a page view after the first would.
    with TestClient(create_app(cases)) as test_client:
        yield test_client


@pytest.fixture
def stub_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for ``api.report_html``: the real report is tested in tests/report."""

    def render(case: str | Path, **_: Any) -> str:
        verdict = api.diagnose_case(case).verdict
        return (
            f"<!doctype html><html><body><h1>stub report</h1><p>{verdict.summary}</p></body></html>"
        )

    monkeypatch.setattr(api, "report_html", render)


def _text(page: str) -> str:
    """The page's text, without tags and entities."""
    without_style = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", without_style)))


def form_token(client: TestClient, case_id: str = "inc1/case") -> str:
    """The token of the dashboard's SQL form (made once per server)."""
    page = client.get(f"/case/{case_id}/sql")
    found = re.search(r'<input type="hidden" name="token" value="([^"]+)">', page.text)
    assert found is not None, page.text
    return found.group(1)


def run_sql(client: TestClient, sql: str, case_id: str = "inc1/case") -> Any:
    """Run ``sql`` as the SQL form does: POST with the form's token."""
    return client.post(
        f"/case/{case_id}/sql", data={"q": sql, "token": form_token(client, case_id)}
    )


# -- the case list --------------------------------------------------------------------------


def test_finds_cases_one_and_two_levels_deep_sorted_by_path(cases: Path) -> None:
    found = find_cases(cases)
    assert [e.id for e in found] == ["fresh", "inc1/case", "inc2/case"]
    assert all(e.path.is_relative_to(cases.resolve()) for e in found)


def test_case_list_shows_each_verdict_and_the_case_not_analyzed(
    client: TestClient, cases: Path, findings: Findings
) -> None:
    fresh = cases / "fresh"
    before = {p.name: p.stat().st_mtime_ns for p in fresh.iterdir()}
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    text = _text(page.text)
    verdict = findings.verdict
    assert verdict.failure_mode in text
    assert f"{verdict.culprit.kind}: {verdict.culprit.host}" in text
    assert verdict.confidence in text
    other = api.diagnose_case(cases / "inc2" / "case").verdict
    assert other.failure_mode in text and other.failure_mode != verdict.failure_mode
    # Relative to the served directory: no page shows the machine's absolute paths.
    assert "not analyzed: run `culprit analyze fresh`" in text
    assert str(cases.resolve()) not in page.text
    assert text.index("fresh") < text.index("inc1/case") < text.index("inc2/case")
    assert "notes" not in text
    meta = api.load_case(cases / "inc1" / "case").meta
    assert f"{meta.counts.rows:,}" in text
    assert "2026-" in text and " 8 " in text  # time range, distinct hosts
    for route in ("report", "hosts", "sql"):
        assert f'href="/case/inc1/case/{route}"' in page.text
        assert f'href="/case/fresh/{route}"' in page.text
    # Listing never analyzes: the unmatched case is exactly as it was.
    assert {p.name: p.stat().st_mtime_ns for p in fresh.iterdir()} == before
    assert not (fresh / "matches.parquet").exists()


def test_findings_are_cached_until_the_case_changes(
    cases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = api.diagnose_case

    def counting(case: str | Path, **kwargs: Any) -> Findings:
        calls.append(Path(case))
        return real(case, **kwargs)

    monkeypatch.setattr(api, "diagnose_case", counting)
    with TestClient(create_app(cases)) as test_client:
        test_client.get("/")
        test_client.get("/")
        assert len(calls) == 3  # once per case, not once per page view
        meta = cases / "inc2" / "case" / "case.json"
        stat = meta.stat()
        os.utime(meta, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        test_client.get("/")
        assert len(calls) == 4
        assert calls[-1].name == "case"


def test_a_root_that_is_a_case_is_served_alone(cases: Path, stub_report: None) -> None:
    with TestClient(create_app(cases / "inc1" / "case")) as test_client:
        page = test_client.get("/")
        assert page.status_code == 200
        assert 'href="/case/case/report"' in page.text
        assert "inc2" not in page.text
        assert test_client.get("/case/case/report").status_code == 200


def test_an_empty_folder_says_so(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as test_client:
        page = test_client.get("/")
        assert page.status_code == 200
        assert "No case found here" in page.text


# -- the report -----------------------------------------------------------------------------


def test_report_is_served_as_report_html_returns_it(
    client: TestClient, cases: Path, stub_report: None
) -> None:
    page = client.get("/case/inc1/case/report")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.text == api.report_html(cases / "inc1" / "case")
    assert "stub report" in page.text


def test_report_of_a_case_that_cannot_be_diagnosed_is_409(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(case: str | Path, **_: Any) -> str:
        raise CaseError("the case is not matched with this catalogue; run `culprit match`")

    monkeypatch.setattr(api, "report_html", refuse)
    page = client.get("/case/fresh/report")
    assert page.status_code == 409
    assert "the case is not matched with this catalogue" in _text(page.text)
    assert "Traceback" not in page.text


def test_the_real_report_is_served_and_an_unmatched_case_is_409(
    client: TestClient, findings: Findings
) -> None:
    # Only the wiring: the report's content is tested in tests/report.
    page = client.get("/case/inc1/case/report")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert findings.verdict.failure_mode in page.text
    refused = client.get("/case/fresh/report")
    assert refused.status_code == 409
    assert "not matched" in _text(refused.text)


# -- hosts ----------------------------------------------------------------------------------


def _host_rows(page: str) -> list[tuple[str, str]]:
    """(class, host) of each row of the host table, in order."""
    return [
        (cls, html.unescape(name))
        for cls, name in re.findall(
            r'<tr class="(host[^"]*)">\s*<td class="mono"><a href="[^"]+">([^<]+)</a>', page
        )
    ]


def _expected_order(case: Path, culprit: str | None, attempt: int | None) -> list[str]:
    """Hosts by the page's rule: the culprit, then those with a first error (as the
    diagnosis picks it) by its time, then the rest, each by name."""
    hosts = api.query(case, "SELECT DISTINCT host FROM rows WHERE host IS NOT NULL")
    firsts: dict[str, Any] = {}
    if attempt is not None:
        by_host = api.host_errors(case).by_host(attempt)
        firsts = {r["host"]: r["first_ts"] for r in by_host.to_dicts() if r["first_row"]}
    names = [r["host"] for r in hosts.to_pylist()]
    names.sort(
        key=lambda h: (
            h != culprit,
            h not in firsts,
            firsts.get(h) is None,
            firsts.get(h) or 0,
            h,
        )
    )
    return names


def test_hosts_page_lists_the_culprit_first_then_by_first_error(
    client: TestClient, cases: Path, findings: Findings
) -> None:
    culprit = findings.verdict.culprit.host
    assert culprit is not None
    page = client.get("/case/inc1/case/hosts")
    assert page.status_code == 200
    rows = _host_rows(page.text)
    assert len(rows) == 8
    assert rows[0] == ("host culprit", culprit)
    assert all(cls == "host" for cls, _ in rows[1:])
    attempt = findings.verdict.attempt
    assert [name for _, name in rows] == _expected_order(cases / "inc1" / "case", culprit, attempt)
    assert page.text.count('<svg class="spark"') == 8
    assert f'href="/case/inc1/case/hosts/{culprit}"' in page.text
    assert '<th class="n">matches</th>' in page.text


def test_hosts_page_of_a_case_not_analyzed_has_no_culprit_and_no_matches(
    client: TestClient, cases: Path
) -> None:
    page = client.get("/case/fresh/hosts")
    assert page.status_code == 200
    rows = _host_rows(page.text)
    assert [name for _, name in rows] == _expected_order(cases / "fresh", None, None)
    assert "(none named)" in page.text
    assert '<th class="n">matches</th>' not in page.text


def _diagnosis(case: Path, findings: Findings) -> hosts_mod.Diagnosis:
    return hosts_mod.Diagnosis(api.host_errors(case), findings.verdict.attempt)


def test_host_list_pages_and_counts(cases: Path, findings: Findings) -> None:
    case = api.load_case(cases / "inc1" / "case")
    culprit = findings.verdict.culprit.host
    diagnosis = _diagnosis(case.path, findings)
    first = hosts_mod.host_list(case, culprit=culprit, diagnosis=diagnosis, offset=0, limit=3)
    last = hosts_mod.host_list(case, culprit=culprit, diagnosis=diagnosis, offset=6, limit=3)
    beyond = hosts_mod.host_list(case, culprit=culprit, diagnosis=diagnosis, offset=30, limit=3)
    assert (len(first.hosts), len(last.hosts), len(beyond.hosts)) == (3, 2, 0)
    assert first.total == last.total == beyond.total == 8
    assert first.hosts[0].host == culprit
    everything = hosts_mod.host_list(case, culprit=culprit, diagnosis=diagnosis)
    assert [h.host for h in first.hosts + everything.hosts[3:6] + last.hosts] == [
        h.host for h in everything.hosts
    ]
    counted = api.query(
        case.path, "SELECT host, count(*) AS n FROM rows WHERE host IS NOT NULL GROUP BY 1"
    ).to_pylist()
    assert {h.host: h.rows for h in everything.hosts} == {r["host"]: r["n"] for r in counted}
    matched = api.query(case.path, "SELECT host, count(*) AS n FROM matches GROUP BY 1")
    by_host = {r["host"]: r["n"] for r in matched.to_pylist()}
    assert {h.host: h.matches for h in everything.hosts} == {
        h.host: by_host.get(h.host, 0) for h in everything.hosts
    }
    # Error rows as the diagnosis counts them: each row a root or secondary match, once.
    errors = diagnosis.errors
    assert errors is not None
    rows_of = errors.rows.group_by("host").len()
    expected = {r["host"]: r["len"] for r in rows_of.to_dicts()}
    assert {h.host: h.errors for h in everything.hosts} == {
        h.host: expected.get(h.host, 0) for h in everything.hosts
    }
    not_analyzed = hosts_mod.host_list(case, culprit=None, diagnosis=hosts_mod.Diagnosis.none())
    assert {h.errors for h in not_analyzed.hosts} == {None}


def test_hosts_page_is_paginated(
    client: TestClient, findings: Findings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hosts_mod, "PAGE_SIZE", 3)
    first = client.get("/case/inc1/case/hosts")
    assert len(_host_rows(first.text)) == 3
    assert _host_rows(first.text)[0][1] == findings.verdict.culprit.host
    assert "Showing hosts 1–3 of 8 (3 a page)" in _text(first.text)
    assert '<a href="?page=2">next →</a>' in first.text
    last = client.get("/case/inc1/case/hosts", params={"page": "3"})
    assert len(_host_rows(last.text)) == 2
    assert "Showing hosts 7–8 of 8" in _text(last.text)
    assert "next →" not in last.text
    past = client.get("/case/inc1/case/hosts", params={"page": "4"})
    assert _host_rows(past.text) == []
    assert "Page 4 is past the last host" in _text(past.text)


def _row_classes(page: str) -> list[tuple[str, str]]:
    """(row id, class) of each row of a host page's row table, in order."""
    return re.findall(r'<tr id="row-(\d+)" class="(first|error|)">', page)


def test_host_page_shows_the_verdicts_first_error_and_its_error_rows(
    client: TestClient, cases: Path, findings: Findings
) -> None:
    # Issue #24, item 12: the host page's first error was the first ERROR-severity row,
    # which is not the row the verdict cites (and a culprit could show "0 error rows").
    first_error = findings.verdict.first_error
    assert first_error is not None and first_error.host is not None
    page = client.get(f"/case/inc1/case/hosts/{first_error.host}")
    assert page.status_code == 200
    text = _text(page.text)
    assert first_error.host in text
    assert '<svg class="spark" width="960"' in page.text
    assert first_error.signature in text  # among the host's matches
    rows = _row_classes(page.text)
    assert 0 < len(rows) <= hosts_mod.ROWS_SHOWN
    assert [row_id for row_id, cls in rows if cls == "first"] == [str(first_error.citation.row_id)]
    # The same rule and the same row: the severity-based first error is another row here.
    severity_first = api.query(
        cases / "inc1" / "case",
        f"SELECT row_id FROM rows WHERE host = '{first_error.host}' "
        "AND severity IN ('ERROR', 'CRITICAL', 'ALERT', 'EMERGENCY') ORDER BY ts, row_id LIMIT 1",
    ).to_pylist()[0]["row_id"]
    assert severity_first != first_error.citation.row_id
    errors = api.host_errors(cases / "inc1" / "case").rows
    of_host = set(errors.filter(errors["host"] == first_error.host)["row_id"].to_list())
    assert f"{len(of_host):,} error rows" in text
    shown_errors = {int(row_id) for row_id, cls in rows if cls in ("first", "error")}
    assert shown_errors == of_host & {int(row_id) for row_id, _ in rows}
    # The first-errors table cites the verdict's row and links to it.
    link = f"#row-{first_error.citation.row_id}"
    assert re.search(rf'<tr class="first">.*?href="[^"]*{link}"', page.text, flags=re.S)


def test_unknown_host_is_404_and_names_are_escaped(client: TestClient) -> None:
    page = client.get("/case/inc1/case/hosts/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert page.status_code == 404
    assert "<script>" not in page.text
    assert "&lt;script&gt;" in page.text


# -- SQL ------------------------------------------------------------------------------------


def _cells(page: str) -> list[list[str]]:
    body = page.split('<table class="result">', 1)[1]
    return [
        [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1])
    ]


def test_sql_form_shows_the_default_query(client: TestClient) -> None:
    page = client.get("/case/inc1/case/sql")
    assert page.status_code == 200
    assert "SELECT source, count(*) AS rows FROM rows GROUP BY 1 ORDER BY 2 DESC" in (
        html.unescape(page.text)
    )
    assert '<table class="result">' not in page.text


def test_sql_runs_a_select_over_every_view(client: TestClient, cases: Path) -> None:
    sql = "SELECT host, count(*) AS n FROM rows WHERE host IS NOT NULL GROUP BY 1 ORDER BY 1"
    page = run_sql(client, sql)
    assert page.status_code == 200
    expected = api.query(cases / "inc1" / "case", sql).to_pylist()
    assert _cells(page.text) == [[r["host"], str(r["n"])] for r in expected]
    assert "<th>host</th><th>n</th>" in page.text
    for view in ("rows", "files", "quarantine", "duplicates", "hosts", "matches"):
        counted = run_sql(client, f"SELECT count(*) FROM {view}")
        assert counted.status_code == 200, _text(counted.text)


def test_sql_caps_rows_and_marks_nulls(client: TestClient) -> None:
    page = run_sql(client, "SELECT range AS i FROM range(1500)")
    assert page.status_code == 200
    assert len(_cells(page.text)) == 1000
    assert "The first 1,000 rows are shown" in page.text
    nulls = run_sql(client, "SELECT NULL AS x, '<b>' AS y")
    assert '<td class="null">NULL</td>' in nulls.text
    assert "&lt;b&gt;" in nulls.text and "<b>" not in nulls.text.split("<tbody>", 1)[1]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("INSERT INTO rows SELECT * FROM rows", "only SELECT is allowed here (INSERT refused)"),
        ("COPY rows TO 'out.csv'", "only SELECT is allowed here (COPY refused)"),
        ("ATTACH 'other.db' AS other", "only SELECT is allowed here (ATTACH refused)"),
        ("SET enable_external_access = true", "only SELECT is allowed here"),
        ("INSTALL httpfs", "only SELECT is allowed here"),
        ("SELECT 1; SELECT 2", "one statement at a time (2 given)"),
        ("SELECT 1; DROP VIEW rows", "one statement at a time (2 given)"),
        ("", "enter a SELECT statement"),
    ],
)
def test_sql_refuses_anything_but_one_select(client: TestClient, sql: str, message: str) -> None:
    page = run_sql(client, sql)
    assert page.status_code == 400
    assert message in _text(page.text)
    assert '<table class="result">' not in page.text


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/*')",
        "SELECT * FROM read_parquet('{other}/rows/*.parquet')",
        "SELECT * FROM read_text('{case}/../findings.json')",
    ],
)
def test_sql_cannot_read_outside_the_case(client: TestClient, cases: Path, sql: str) -> None:
    query = sql.format(
        other=(cases / "inc2" / "case").resolve(), case=(cases / "inc1" / "case").resolve()
    )
    page = run_sql(client, query)
    assert page.status_code == 400
    problem = re.search(r'<p class="problem" id="problem">(.*?)</p>', page.text, flags=re.S)
    assert problem is not None
    assert "Permission Error" in html.unescape(problem.group(1))


def test_sql_error_is_one_line_not_a_traceback(client: TestClient) -> None:
    page = run_sql(client, "SELECT no_such_column FROM rows")
    assert page.status_code == 400
    problem = re.search(r'<p class="problem" id="problem">(.*?)</p>', page.text, flags=re.S)
    assert problem is not None
    message = html.unescape(problem.group(1))
    assert "no_such_column" in message and "\n" not in message
    assert "Traceback" not in page.text
    # The query stays in the box to be fixed.
    assert "SELECT no_such_column FROM rows</textarea>" in page.text


def test_sql_leaves_the_case_as_it_was(client: TestClient, cases: Path) -> None:
    case = cases / "inc1" / "case"
    before = sorted(p.relative_to(case) for p in case.rglob("*"))
    run_sql(client, "SELECT * FROM rows ORDER BY message")
    assert sorted(p.relative_to(case) for p in case.rglob("*")) == before


# -- ids that try to leave the served directory ----------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/case/%2E%2E/%2E%2E/report",
        "/case/..%2F..%2Fetc/hosts",
        "/case/inc1/%2E%2E/inc2/case/sql",
        "/case/%2Ftmp/report",
        "/case/gen1/report",
        "/case/notes/sql",
        "/case/inc1/report",
    ],
)
def test_ids_outside_the_found_cases_are_404(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 404
    assert "Not found" in page.text


def test_a_symlink_out_of_the_root_is_not_a_case(cases: Path, tmp_path: Path) -> None:
    (tmp_path / "inside").symlink_to(cases / "inc1" / "case", target_is_directory=True)
    assert find_cases(tmp_path) == []
    with TestClient(create_app(tmp_path)) as test_client:
        assert test_client.get("/case/inside/report").status_code == 404


# -- binding ----------------------------------------------------------------------------------


def test_loopback_answers_only_local_host_names(cases: Path) -> None:
    allowed = trusted_hosts("127.0.0.1", allow_remote=False)
    assert allowed is not None and "localhost" in allowed
    web = create_app(cases, allowed_hosts=allowed)
    with TestClient(web, base_url="http://127.0.0.1:8080") as local:
        assert local.get("/").status_code == 200
    with TestClient(web, base_url="http://attacker.example:8080") as rebound:
        assert rebound.get("/").status_code == 400


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_a_non_loopback_host_needs_allow_remote(host: str) -> None:
    with pytest.raises(UsageError, match="not a loopback address"):
        trusted_hosts(host, allow_remote=False)
    assert trusted_hosts(host, allow_remote=True) is None
    assert trusted_hosts("::1", allow_remote=False) is not None


def test_cli_refuses_a_non_loopback_host(cases: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    started: list[dict[str, Any]] = []

    def run(server: uvicorn.Server) -> None:
        config = server.config
        started.append({"host": config.host, "port": config.port, "log_level": config.log_level})

    monkeypatch.setattr(uvicorn.Server, "run", run)
    refused = runner.invoke(cli_app, ["serve", str(cases), "--host", "0.0.0.0"])
    assert refused.exit_code == 2
    assert refused.stderr.startswith("culprit: error: --host 0.0.0.0 is not a loopback address")
    missing = runner.invoke(cli_app, ["serve", str(cases / "nowhere")])
    assert missing.exit_code == 2
    assert "no such file or directory" in missing.stderr
    assert started == []
    served = runner.invoke(cli_app, ["serve", str(cases), "--port", "8123"])
    assert served.exit_code == 0, served.output
    assert "http://127.0.0.1:8123/" in served.stdout
    remote = runner.invoke(cli_app, ["serve", str(cases), "--host", "0.0.0.0", "--allow-remote"])
    assert remote.exit_code == 0, remote.output
    assert started == [
        {"host": "127.0.0.1", "port": 8123, "log_level": "warning"},
        {"host": "0.0.0.0", "port": 8080, "log_level": "warning"},
    ]
