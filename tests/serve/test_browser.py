"""``culprit serve`` in chromium: the app runs under uvicorn on a free loopback port, and the
page may load nothing but that origin (an air-gapped dashboard must not need the network).
A hostile page of another site tries to run a query and to frame the dashboard; the pages and
the report work under their Content-Security-Policy. Screenshots of each page land in
tests/artifacts/."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

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


#: (method, path, status) of every response the dashboard sent, as the server saw them (a
#: browser may hide a response from the page, and from Playwright's response events).
ANSWERED: list[tuple[str, str, int]] = []


def _recording(app: Any) -> Any:
    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                ANSWERED.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await app(scope, receive, sending if scope["type"] == "http" else send)

    return recorded


@pytest.fixture(scope="module")
def origin(cases: Path) -> Iterator[str]:
    """The dashboard's origin, served by uvicorn in a background thread as `culprit serve`
    serves it (loopback, local Host names only)."""
    port = _free_port()
    app = create_app(cases, allowed_hosts=trusted_hosts("127.0.0.1", allow_remote=False))
    config = uvicorn.Config(_recording(app), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
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


# -- what another web page cannot make the dashboard do (issue #24, item 10) ---------------------

#: A query whose answer (42000042) its text does not contain.
MARKED: Final = "SELECT 6 * 7 * 1000001 AS answer"
ANSWER: Final = "42000042"


@pytest.fixture
def hostile() -> Iterator[tuple[str, dict[str, str]]]:
    """Another site (``http://localhost:PORT``: another host name, so cross-site to
    127.0.0.1, yet on loopback, where Chromium's own local-network checks let it reach the
    dashboard and only the dashboard's defences are left), serving the page put in the dict."""
    pages: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", _free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}", pages
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_a_cross_site_page_cannot_run_a_query_or_frame_the_dashboard(
    offline_page: Callable[..., Page], origin: str, hostile: tuple[str, dict[str, str]]
) -> None:
    # Even with the server's token (as if it had leaked), a form posted and a fetch sent
    # from another site are refused by what the browser says of them (Origin,
    # Sec-Fetch-Site), and the dashboard refuses to be framed.
    evil, pages = hostile
    page = offline_page(origin, evil)
    page.page.goto(f"{origin}/case/inc1/case/sql")
    token = page.page.get_attribute("input[name=token]", "value")
    assert token
    action = f"{origin}/case/inc1/case/sql"
    pages["/attack.html"] = f"""<!doctype html><html><body>
<iframe id="frame" src="{origin}/"></iframe>
<form id="f" method="post" action="{action}">
  <input name="q" value="{MARKED}"><input name="token" value="{token}">
</form>
<script>
fetch("{action}", {{method: "POST", mode: "no-cors",
  body: new URLSearchParams({{q: "{MARKED}", token: "{token}"}})}})
  .finally(function () {{ setTimeout(function () {{ document.getElementById("f").submit(); }}, 300); }});
</script></body></html>"""
    seen: list[tuple[str, str, int]] = []
    page.page.on(
        "response",
        lambda r: (
            seen.append((r.request.method, r.request.resource_type, r.status))
            if r.url.startswith(origin)
            else None
        ),
    )
    failed: list[tuple[str, str, str]] = []
    page.page.on(
        "requestfailed",
        lambda r: (
            failed.append((r.method, r.resource_type, r.failure or ""))
            if r.url.startswith(origin)
            else None
        ),
    )
    ANSWERED.clear()
    with page.page.expect_navigation(url=action):
        page.page.goto(f"{evil}/attack.html")
    text = page.page.inner_text("body")
    assert "Refused: a request from another site" in text and ANSWER not in text
    assert ("POST", "document", 403) in seen  # the form
    assert ("GET", "document", 403) in seen  # the frame (refused, and never shown in one)
    assert not [s for s in seen if s[0] == "POST" and s[2] != 403]
    # The fetch reached the dashboard, which refused it; its answer never reached the page.
    sql = "/case/inc1/case/sql"
    assert [a for a in ANSWERED if a[:2] == ("POST", sql)] == [("POST", sql, 403)] * 2
    assert ("GET", "/", 403) in ANSWERED  # the frame
    fetches = [f for f in failed if f[:2] == ("POST", "fetch")]
    assert len(fetches) == 1 and "BLOCKED_BY_RESPONSE" in fetches[0][2]
    framed = [f for f in failed if f[:2] == ("GET", "document")]
    assert len(framed) == 1 and "BLOCKED_BY_RESPONSE" in framed[0][2]
    # The same query from the dashboard's own form runs.
    page.page.goto(f"{origin}/case/inc1/case/sql")
    page.page.fill("#q", MARKED)
    with page.page.expect_navigation():
        page.page.click("#run")
    assert page.page.inner_text("table.result tbody tr:first-child td:first-child") == ANSWER
    assert page.blocked == []


def test_pages_and_the_real_report_work_under_their_content_security_policy(
    page: Page, origin: str
) -> None:
    violations: list[str] = []
    page.page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.page.goto(f"{origin}/case/inc1/case/hosts")
    # The stylesheet (a file of the dashboard's own: no inline style runs) is applied.
    header = page.page.eval_on_selector("header", "e => getComputedStyle(e).backgroundColor")
    assert header == "rgb(29, 35, 43)"
    page.page.goto(f"{origin}/case/inc1/case/report")
    # The report's inline script (allowed by its hash) drew the heat strip.
    page.page.wait_for_selector("#heat-svg")
    assert violations == []


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
    # The SQL page with a result: queries run only from the dashboard's own form (POST).
    page.page.emulate_media(color_scheme="light")
    page.page.goto(f"{origin}/case/inc1/case/sql")
    page.page.fill("#q", sql)
    with page.page.expect_navigation():
        page.page.click("#run")
    page.page.wait_for_selector("table.result")
    found["light", "sql with a result"] = serious_violations(page.page)
    assert {where: said for where, said in found.items() if said} == {}
    assert page.blocked == []
