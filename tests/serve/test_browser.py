"""``culprit serve`` in chromium: the app runs under uvicorn on a free loopback port, and the
page may load nothing but that origin (an air-gapped dashboard must not need the network).
Screenshots of each page land in tests/artifacts/."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from analyzer import api
from analyzer.serve.app import create_app, trusted_hosts
from tests.conftest import Page, serious_violations
from tests.serve.test_app import build_cases


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cases(tmp_path_factory.mktemp("serve-browser"))


@pytest.fixture(scope="module")
def origin(cases: Path) -> Iterator[str]:
    """The dashboard's origin, served by uvicorn in a background thread as `culprit serve`
    serves it (loopback, local Host names only)."""
    port = _free_port()
    app = create_app(cases, allowed_hosts=trusted_hosts("127.0.0.1", allow_remote=False))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def page(offline_page: Callable[..., Page], origin: str) -> Page:
    return offline_page(origin)


def test_case_list_shows_the_verdicts(page: Page, origin: str, cases: Path) -> None:
    verdict = api.diagnose_case(cases / "inc1" / "case").verdict
    page.page.goto(f"{origin}/")
    body = page.page.inner_text("body")
    assert verdict.failure_mode in body
    assert verdict.summary in body
    assert "not analyzed: run `culprit analyze" in body
    page.screenshot("serve-cases")
    assert page.blocked == []


def test_report_page(page: Page, origin: str, cases: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in report (the server thread shares this process): the real one is tested in
    # tests/report.
    def render(case: str | Path, **_: Any) -> str:
        summary = api.diagnose_case(case).verdict.summary
        return (
            f"<!doctype html><html><body><h1>stub report</h1><p id='s'>{summary}</p></body></html>"
        )

    monkeypatch.setattr(api, "report_html", render)
    page.page.goto(f"{origin}/")
    page.page.click("a[href='/case/inc1/case/report']")
    page.page.wait_for_url(f"{origin}/case/inc1/case/report")
    summary = api.diagnose_case(cases / "inc1" / "case").verdict.summary
    assert page.page.inner_text("#s") == summary
    page.screenshot("serve-report")
    assert page.blocked == []


def test_hosts_page_puts_the_culprit_first(page: Page, origin: str, cases: Path) -> None:
    culprit = api.diagnose_case(cases / "inc1" / "case").verdict.culprit.host
    page.page.goto(f"{origin}/case/inc1/case/hosts")
    assert page.page.inner_text("table.hosts tbody tr:first-child td:first-child a") == culprit
    assert page.page.locator("svg.spark").count() == 8
    page.screenshot("serve-hosts")
    page.page.click("table.hosts tbody tr:first-child td:first-child a")
    page.page.wait_for_selector("table.rows")
    assert page.page.locator("table.rows tr.first").count() == 1
    page.screenshot("serve-host")
    assert page.blocked == []


def test_sql_form_runs_a_query(page: Page, origin: str, cases: Path) -> None:
    sql = "SELECT host, count(*) AS n FROM rows WHERE host IS NOT NULL GROUP BY 1 ORDER BY 1"
    first = api.query(cases / "inc1" / "case", sql).to_pylist()[0]
    page.page.goto(f"{origin}/case/inc1/case/sql")
    page.page.fill("#q", sql)
    with page.page.expect_navigation():
        page.page.click("#run")
    assert page.page.inner_text("table.result tbody tr:first-child td:first-child") == first["host"]
    assert page.page.inner_text("table.result tbody tr:first-child td:nth-child(2)") == str(
        first["n"]
    )
    page.screenshot("serve-sql")
    assert page.blocked == []


def test_axe_finds_no_serious_violation_on_any_page(page: Page, origin: str, cases: Path) -> None:
    """Every page of the dashboard, as served: the case list, the report (the real
    report.html), the hosts, one host, the SQL form with a result, and an error page; in
    light mode, and the first three in dark mode."""
    culprit = api.diagnose_case(cases / "inc1" / "case").verdict.culprit.host
    sql = "SELECT host, count(*) AS n FROM rows GROUP BY 1 ORDER BY 1"
    paths = [
        "/",
        "/case/inc1/case/report",
        "/case/inc1/case/hosts",
        f"/case/inc1/case/hosts/{culprit}",
        "/case/inc1/case/sql",
        f"/case/inc1/case/sql?q={sql}",
        "/case/no-such-case/hosts",
    ]
    found = {}
    # Dark mode only changes colours: the pages with the most of them suffice (axe takes
    # seconds a page).
    for scheme, shown in (("light", paths), ("dark", paths[:3])):
        page.page.emulate_media(color_scheme=scheme)
        for path in shown:
            page.page.goto(f"{origin}{path}")
            found[scheme, path] = serious_violations(page.page)
    assert {where: said for where, said in found.items() if said} == {}
    assert page.blocked == []
