"""``culprit serve`` against a hostile web page and hostile queries (issue #24, items 8-12).

8. A query runs under a time limit and is stopped when it runs out, when its client goes away
   and when the server stops (Ctrl-C within 2 s); at most ``max_queries`` run at once, and the
   case list answers in under 2 s while 8 never-ending queries run.
9. A query has a memory limit (DuckDB ``memory_limit``, 1 GB by default).
10. Queries run only by POST with the server's token; a cross-site request is refused (403)
    and its result never appears; every response has a Content-Security-Policy
    (``default-src 'self'``, ``frame-ancestors 'none'``) and ``X-Content-Type-Options``.
11. A damaged case gives a page, not a bare 500, and no page shows an absolute path.
12. A host's first error and error rows are the diagnosis' (the culprit does not show "0 error
    rows"), its rows are paged, and every citation anchor of the served report resolves.

The bundle is written here: two nodes' kubelet journals (the culprit's root cause, a
containerd ``TaskOOM`` event, is logged at level=info) and their ML Diagnostics daemon logs.
The server runs under uvicorn on a free loopback port where concurrency matters, and through
Starlette's TestClient elsewhere.
"""

from __future__ import annotations

import datetime as dt
import html
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import uvicorn
from starlette.testclient import TestClient

from analyzer import api
from analyzer.serve import hosts as hosts_mod
from analyzer.serve.app import DashboardApp, create_app, trusted_hosts
from analyzer.serve.queries import QueryLimits
from tests.helpers import check_accounting, line_records

NEVER_ENDING = (
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t) SELECT count(*) FROM t"
)
#: A query whose answer (42000042) its text does not contain.
MARKED = "SELECT 6 * 7 * 1000001 AS answer"
ANSWER = "42000042"
CASE = "incident/case"
CULPRIT = "gke-tpu-v5p-train-tpu-pool-0-98a1d794-c3d4"
BYSTANDER = "gke-tpu-v5p-train-tpu-pool-0-98a1d794-a1b2"
START = dt.datetime(2026, 11, 29, 18, 0, 0)
LINES = 40
OOM_LINE = 25


def _journal(host: str, oom_at: int | None) -> str:
    """A node's kubelet journal, one line every 10 s; line ``oom_at`` is containerd's TaskOOM
    event, which containerd logs at level=info."""
    lines = [f"-- Logs begin at {START:%a %Y-%m-%d %H:%M:%S} UTC. --"]
    for i in range(LINES):
        t = START + dt.timedelta(seconds=10 * i)
        stamp = f"{t:%b %d %H:%M:%S}.000000 {host}"
        if i == oom_at:
            lines.append(
                f'{stamp} containerd[990]: time="{t:%Y-%m-%dT%H:%M:%S}.000000000Z" level=info '
                'msg="TaskOOM event container_id:\\"8565edb9d6b4633a7a065955a5c1530feb56bc239b2'
                'e3e2ce1eae3ff8aa2dda0\\""'
            )
        else:
            lines.append(
                f"{stamp} kubelet[1663]: I{t:%m%d %H:%M:%S}.000000    1663 kubelet_getters.go:218]"
                f' "Pod status updated" pod="default/train-{i}" status="Running"'
            )
    return "\n".join(lines) + "\n"


def _daemon() -> str:
    """An ML Diagnostics daemon log: registration, then a heartbeat every 30 s."""
    first = f"I{START:%m%d %H:%M:%S}"
    lines = [
        f"{first}.000000       1 stream_client.cc:88] Stream established.",
        f"{first}.100000       1 daemon.cc:142] Received successful DaemonRegistrationResponse "
        "from backend",
    ]
    for i in range(1, 12):
        t = START + dt.timedelta(seconds=30 * i)
        lines.append(
            f"I{t:%m%d %H:%M:%S}.000000       1 heartbeat.cc:61] Sending DaemonHeartbeatRequest"
        )
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served folder: one analyzed case, ``incident/case``."""
    base = tmp_path_factory.mktemp("dashboard")
    bundle = base / "bundle"
    for host, oom in ((BYSTANDER, None), (CULPRIT, OOM_LINE)):
        (bundle / "nodes" / host).mkdir(parents=True)
        (bundle / "nodes" / host / "journal.log").write_text(_journal(host, oom))
        (bundle / "nodes" / host / "diagon-daemon.log").write_text(_daemon())
    served = base / "served"
    api.analyze([bundle], served / "incident", api.AnalyzeSettings(jobs=1))
    # Nothing lost: every input line is a row or a quarantine entry.
    files = check_accounting(served / CASE)
    assert files["records"].sum() == sum(
        line_records(p.read_bytes()) for p in bundle.rglob("*.log")
    )
    return served


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[TestClient]:
    with TestClient(create_app(root)) as test_client:
        yield test_client


def _token(page: str) -> str:
    found = re.search(r'<input type="hidden" name="token" value="([^"]+)">', page)
    assert found is not None, page
    return found.group(1)


def _problem(page: str) -> str:
    found = re.search(r'<p class="problem"[^>]*>(.*?)</p>', page, flags=re.S)
    return html.unescape(found.group(1)) if found else ""


# -- a server under uvicorn, and a client for it -------------------------------------------------


@dataclass
class Answer:
    status: int
    body: str
    seconds: float


@dataclass
class Served:
    """A client of a running dashboard (``app`` when it runs in this process)."""

    base: str
    app: DashboardApp | None = None

    def get(self, path: str, timeout: float = 30) -> Answer:
        return self._send(urllib.request.Request(self.base + path), timeout)

    def token(self) -> str:
        return _token(self.get(f"/case/{CASE}/sql").body)

    def running(self) -> int:
        """The queries running now, as the SQL page says (reading it takes no slot)."""
        found = re.search(r'<span id="running">(\d+)</span>', self.get(f"/case/{CASE}/sql").body)
        assert found is not None
        return int(found.group(1))

    def query(self, sql: str, token: str, timeout: float = 30) -> Answer:
        data = urlencode({"q": sql, "token": token}).encode()
        request = urllib.request.Request(f"{self.base}/case/{CASE}/sql", data=data)
        return self._send(request, timeout)

    @staticmethod
    def _send(request: urllib.request.Request, timeout: float) -> Answer:
        start = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, body = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        except OSError as exc:
            # No answer at all (the server went away): status 0, so a test thread never
            # raises where no test can see it.
            status, body = 0, repr(exc).encode()
        return Answer(status, body.decode("utf-8", "replace"), time.monotonic() - start)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(root: Path, limits: QueryLimits) -> Iterator[Served]:
    app = create_app(root, allowed_hosts=trusted_hosts("127.0.0.1", False), limits=limits)
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Served(f"http://127.0.0.1:{port}", app)
    finally:
        app.stop_queries()
        server.should_exit = True
        thread.join(timeout=10)


def _wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.05)


def _in_background(
    call: Callable[[], Answer], count: int
) -> tuple[list[threading.Thread], list[Answer]]:
    answers: list[Answer] = []
    threads = [
        threading.Thread(target=lambda: answers.append(call()), daemon=True) for _ in range(count)
    ]
    for thread in threads:
        thread.start()
    return threads, answers


# -- 8. time limit, cancelling, a bounded number at once ------------------------------------------


def test_a_never_ending_query_returns_an_error_at_the_time_limit(root: Path) -> None:
    limits = QueryLimits(timeout_s=1.0)
    with TestClient(create_app(root, limits=limits)) as client:
        token = _token(client.get(f"/case/{CASE}/sql").text)
        start = time.monotonic()
        page = client.post(f"/case/{CASE}/sql", data={"q": NEVER_ENDING, "token": token})
        elapsed = time.monotonic() - start
        assert page.status_code == 504
        assert "ran for more than 1 s and was stopped" in _problem(page.text)
        assert "--query-timeout" in _problem(page.text)
        # At the limit: the wait polls every 50 ms; the rest is a busy machine's margin.
        assert limits.timeout_s <= elapsed < limits.timeout_s + 1.5
        # The query is gone, not left running: the next one runs at once.
        after = client.post(f"/case/{CASE}/sql", data={"q": MARKED, "token": token})
        assert after.status_code == 200 and ANSWER in after.text


def test_the_case_list_answers_while_eight_never_ending_queries_run(root: Path) -> None:
    with serving(root, QueryLimits(timeout_s=60, max_queries=8)) as served:
        # The first visits diagnose the case (seconds on a large one); later ones reuse it.
        assert served.get("/").status == 200
        assert served.get(f"/case/{CASE}/hosts").status == 200
        token = served.token()
        threads, answers = _in_background(lambda: served.query(NEVER_ENDING, token), 8)
        _wait_until(lambda: served.running() == 8, 20, "8 queries running")
        # A ninth is refused at once, with a message.
        refused = served.query(MARKED, token)
        assert refused.status == 503 and "busy: 8 queries are running" in html.unescape(
            refused.body
        )
        assert ANSWER not in refused.body
        listed = served.get("/")
        assert listed.status == 200 and "incident/case" in listed.body
        assert listed.seconds < 2.0, f"the case list took {listed.seconds:.2f} s"
        # A page that reads the case answers too (its share of the diagnosis was computed
        # before the queries started, as a first visit does).
        assert served.get(f"/case/{CASE}/hosts").status == 200
        assert answers == []  # still running
        assert served.app is not None
        served.app.stop_queries()
        for thread in threads:
            thread.join(timeout=5)
        assert [a.status for a in answers] == [503] * 8
        assert all("the server is shutting down" in html.unescape(a.body) for a in answers)


def test_a_query_whose_client_went_away_is_stopped(root: Path) -> None:
    with serving(root, QueryLimits(timeout_s=60, max_queries=1)) as served:
        token = served.token()
        body = urlencode({"q": NEVER_ENDING, "token": token}).encode()
        host, port = served.base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(
                f"POST /case/{CASE}/sql HTTP/1.1\r\nHost: {host}:{port}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            _wait_until(lambda: served.running() == 1, 20, "query running")
        # The client is gone: its query stops long before its 60 s limit, and frees its slot.
        start = time.monotonic()
        _wait_until(lambda: served.running() == 0, 5, "query stopped")
        assert time.monotonic() - start < 3.0
        assert served.query(MARKED, token).status == 200


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("Threads:", 1)[1].split()[0])


def test_forty_never_ending_queries_then_ctrl_c(root: Path) -> None:
    # The run: 40 such requests made 424 threads, the server stopped answering and
    # Ctrl-C did not stop it. Now 4 run (the default), the others are refused at once, the
    # case list answers, and Ctrl-C stops everything within 2 s.
    port = _free_port()
    command = [sys.executable, "-m", "analyzer", "serve", str(root), "--port", str(port)]
    command += ["--query-timeout", "60"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        served = Served(f"http://127.0.0.1:{port}")

        def up() -> bool:
            assert process.poll() is None, process.communicate()
            return served.get("/", timeout=5).status == 200

        _wait_until(up, 30, "culprit serve answering")
        token = served.token()
        threads, answers = _in_background(lambda: served.query(NEVER_ENDING, token), 40)
        _wait_until(lambda: len(answers) == 36, 20, "36 of 40 queries refused")
        assert [a.status for a in answers] == [503] * 36
        listed = served.get("/")
        assert listed.status == 200 and listed.seconds < 2.0
        running = _threads(process.pid)
        assert running < 120, f"{running} threads"
        start = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        stopped = time.monotonic() - start
        for thread in threads:
            thread.join(timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert stopped < 2.0, f"Ctrl-C took {stopped:.2f} s"
    _, stderr = process.communicate()
    assert "Traceback" not in stderr
    # Every client got an answer before the server went: the 4 queries were stopped.
    assert len(answers) == 40 and sorted(a.status for a in answers)[-4:] == [503] * 4


# -- 9. memory -----------------------------------------------------------------------------------


def test_a_query_runs_under_a_memory_limit(root: Path, client: TestClient) -> None:
    token = _token(client.get(f"/case/{CASE}/sql").text)
    setting = "SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t"
    page = client.post(f"/case/{CASE}/sql", data={"q": setting, "token": token})
    assert page.status_code == 200
    assert '<td class="mono">953.6 MiB</td>' in page.text  # 1 GB, as DuckDB prints it
    hungry = "SELECT count(*) FROM (SELECT DISTINCT range::VARCHAR || '-x' FROM range(2000000))"
    with TestClient(create_app(root, limits=QueryLimits(memory="64MB"))) as small:
        token = _token(small.get(f"/case/{CASE}/sql").text)
        refused = small.post(f"/case/{CASE}/sql", data={"q": hungry, "token": token})
        assert refused.status_code == 400
        assert "Out of Memory Error" in _problem(refused.text)
        assert "the limit is 64MB per query: culprit serve --query-memory" in _problem(refused.text)
        assert (
            small.post(f"/case/{CASE}/sql", data={"q": MARKED, "token": token}).status_code == 200
        )


def test_a_querys_result_is_cut_before_it_reaches_python(client: TestClient) -> None:
    # DuckDB's memory limit covers DuckDB: 100 cells of 2 MB each, copied whole into Python
    # strings, would take 200 MB beside it. Each cell is cut to what the page shows first.
    token = _token(client.get(f"/case/{CASE}/sql").text)
    wide = "SELECT repeat('x', 2000000) AS s, range(300000) AS l FROM range(100)"
    tracemalloc.start()
    try:
        page = client.post(f"/case/{CASE}/sql", data={"q": wide, "token": token})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert page.status_code == 200
    assert page.text.count("x" * 2000 + "…") == 100
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB of Python objects"


# -- 10. cross-site requests, the token, the Content-Security-Policy ------------------------------


def test_a_query_in_a_link_is_not_run(client: TestClient) -> None:
    page = client.get(f"/case/{CASE}/sql", params={"q": MARKED})
    assert page.status_code == 405
    assert ANSWER not in page.text and '<table class="result">' not in page.text
    assert "a query runs only from this form" in _problem(page.text)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {
            "Sec-Fetch-Site": "cross-site",
            "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-Dest": "document",
        },
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"},
        {"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"},
    ],
)
def test_a_cross_site_query_is_refused_even_with_the_token(
    client: TestClient, headers: dict[str, str]
) -> None:
    token = _token(client.get(f"/case/{CASE}/sql").text)
    page = client.post(f"/case/{CASE}/sql", data={"q": MARKED, "token": token}, headers=headers)
    assert page.status_code == 403
    assert ANSWER not in page.text
    assert "another web page" in _problem(page.text)


@pytest.mark.parametrize("token", [None, "", "forged"])
def test_a_query_without_the_servers_token_is_refused(
    client: TestClient, token: str | None
) -> None:
    data = {"q": MARKED} if token is None else {"q": MARKED, "token": token}
    page = client.post(f"/case/{CASE}/sql", data=data)
    assert page.status_code == 403 and ANSWER not in page.text


def test_the_dashboards_own_form_still_runs_a_query(client: TestClient) -> None:
    token = _token(client.get(f"/case/{CASE}/sql").text)
    own = {
        "Origin": "http://testserver",
        "Sec-Fetch-Site": "same-origin",
        "Sec-Fetch-Mode": "navigate",
    }
    page = client.post(f"/case/{CASE}/sql", data={"q": MARKED, "token": token}, headers=own)
    assert page.status_code == 200 and f'<td class="mono">{ANSWER}</td>' in page.text


def test_pages_answer_only_top_level_navigations_from_other_sites(client: TestClient) -> None:
    embedded = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "no-cors",
        "Sec-Fetch-Dest": "image",
    }
    framed = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-Dest": "iframe",
    }
    fetched = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "cors",
        "Origin": "http://evil.example",
    }
    for headers in (embedded, framed, fetched):
        assert client.get(f"/case/{CASE}/hosts", headers=headers).status_code == 403
    followed = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-Dest": "document",
    }
    assert client.get("/", headers=followed).status_code == 200


def _assert_secured(name: str, response: Any) -> None:
    policy = response.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy, name
    assert "frame-ancestors 'none'" in policy, name
    assert response.headers.get("x-content-type-options") == "nosniff", name
    assert response.headers.get("x-frame-options") == "DENY", name
    if name not in ("report", "stylesheet"):
        # The pages need no inline script or style: the policy would refuse them.
        assert "<script" not in response.text and "<style" not in response.text, name


def test_every_response_carries_the_security_headers(client: TestClient) -> None:
    responses = {
        "case list": client.get("/"),
        "stylesheet": client.get("/static/dashboard.css"),
        "hosts": client.get(f"/case/{CASE}/hosts"),
        "host": client.get(f"/case/{CASE}/hosts/{CULPRIT}"),
        "report": client.get(f"/case/{CASE}/report"),
        "sql": client.get(f"/case/{CASE}/sql"),
        "not found": client.get("/case/nowhere/hosts"),
        "refused": client.get("/", headers={"Sec-Fetch-Site": "cross-site"}),
    }
    for name, response in responses.items():
        _assert_secured(name, response)
    token = _token(responses["sql"].text)
    _assert_secured("query", client.post(f"/case/{CASE}/sql", data={"q": MARKED, "token": token}))
    report_policy = responses["report"].headers["content-security-policy"]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", report_policy)
    assert "'unsafe-inline'" not in report_policy.split("script-src", 1)[1].split(";", 1)[0]


# -- 11. a damaged case, and no absolute path ----------------------------------------------------


@pytest.fixture
def damaged(root: Path, tmp_path: Path) -> Path:
    """A folder with the case twice: as analyzed, and with its row and match files cut."""
    served = tmp_path / "served"
    shutil.copytree(root / "incident", served / "incident")
    shutil.copytree(root / "incident", served / "broken")
    case = served / "broken" / "case"
    for part in [*sorted((case / "rows").glob("*.parquet")), case / "matches.parquet"]:
        data = part.read_bytes()
        part.write_bytes(data[: len(data) // 2])
    return served


def _assert_a_page(name: str, page: Any, root: Path) -> None:
    """A page (not a bare 500) that names the case's files relative to ``root`` only."""
    text = html.unescape(page.text)
    assert page.status_code in (400, 409), (name, page.status_code, text[:300])
    assert page.headers["content-type"].startswith("text/html"), name
    assert "Internal Server Error" not in text and "Traceback" not in text, name
    assert "broken/case/" in text, name
    for absolute in {str(root), str(root.resolve()), str(Path.home())} - {"/"}:
        assert absolute not in text, name


def test_a_damaged_case_gives_a_page_with_case_relative_paths(damaged: Path) -> None:
    with TestClient(create_app(damaged), raise_server_exceptions=False) as client:
        listed = client.get("/")
        assert listed.status_code == 200
        assert "cannot read the case" in html.unescape(listed.text)
        assert str(damaged.resolve()) not in html.unescape(listed.text)
        _assert_a_page("hosts", client.get("/case/broken/case/hosts"), damaged)
        _assert_a_page("host", client.get(f"/case/broken/case/hosts/{CULPRIT}"), damaged)
        _assert_a_page("report", client.get("/case/broken/case/report"), damaged)
        token = _token(client.get("/case/broken/case/sql").text)
        query = client.post("/case/broken/case/sql", data={"q": MARKED, "token": token})
        _assert_a_page("query", query, damaged)
        # The intact case beside it is served as before.
        assert client.get("/case/incident/case/hosts").status_code == 200


def test_an_unreadable_case_file_names_its_case_relative_path(damaged: Path) -> None:
    (damaged / "broken" / "case" / "case.json").write_text("{ not json")
    with TestClient(create_app(damaged), raise_server_exceptions=False) as client:
        page = client.get("/case/broken/case/hosts")
        assert page.status_code == 409
        text = html.unescape(page.text)
        assert "broken/case/case.json" in text and str(damaged.resolve()) not in text


# -- 12. the host page agrees with the verdict -------------------------------------------------


def test_the_culprits_page_shows_the_verdicts_first_error_and_counts_its_error_rows(
    root: Path, client: TestClient
) -> None:
    verdict = api.diagnose_case(root / CASE).verdict
    assert verdict.culprit.host == CULPRIT and verdict.first_error is not None
    assert verdict.first_error.host == CULPRIT
    row_id = verdict.first_error.citation.row_id
    # Logged at level=info: no row of the culprit has an error severity.
    severities = api.query(
        root / CASE, f"SELECT DISTINCT severity FROM rows WHERE host = '{CULPRIT}'"
    )
    assert not {"ERROR", "CRITICAL", "ALERT", "EMERGENCY"} & set(severities.column(0).to_pylist())
    page = client.get(f"/case/{CASE}/hosts/{CULPRIT}")
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.text)))
    assert "1 error rows" in text and "0 error rows" not in text
    assert re.findall(r'<tr id="row-(\d+)" class="first"', page.text) == [str(row_id)]
    listed = client.get(f"/case/{CASE}/hosts").text
    culprit_row = listed.split('<tr class="host culprit">', 1)[1].split("</tr>", 1)[0]
    assert '<td class="n err">1</td>' in culprit_row


def test_a_hosts_rows_are_paged_and_every_row_is_reached_once(
    root: Path, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hosts_mod, "ROWS_SHOWN", 7)
    monkeypatch.setattr(hosts_mod, "ROWS_BEFORE_ERROR", 3)
    url = f"/case/{CASE}/hosts/{CULPRIT}"
    around = client.get(url).text
    shown = re.findall(r'<tr id="row-(\d+)" class="(first|error|)"', around)
    assert len(shown) == 7 and [cls for _, cls in shown].index("first") == 3
    seen: list[str] = []
    next_url: str | None = f"{url}?at=1"
    while next_url is not None:
        page = client.get(html.unescape(next_url)).text
        seen += re.findall(r'<tr id="row-(\d+)"', page)
        later = re.search(r'<a class="later" href="([^"]+)"', page)
        next_url = later.group(1) if later else None
    in_order = api.query(
        root / CASE,
        f"SELECT row_id FROM rows WHERE host = '{CULPRIT}' ORDER BY ts NULLS LAST, row_id",
    )
    assert seen == [str(r) for r in in_order.column(0).to_pylist()]


def test_every_citation_anchor_of_the_served_report_resolves(client: TestClient) -> None:
    report = client.get(f"/case/{CASE}/report").text
    coverage = report.split("ML Diagnostics coverage", 1)[1].split("</table>", 1)[0]
    assert coverage.count('class="cite"') == 2  # each node's last daemon row
    targets = set(re.findall(r'href="#([^"]+)"', report))
    assert targets and targets <= set(re.findall(r'id="([^"]+)"', report))


def test_every_row_link_of_a_host_page_resolves(client: TestClient) -> None:
    page = client.get(f"/case/{CASE}/hosts/{CULPRIT}").text
    links = re.findall(r'href="([^"#]*)#(row-\d+)"', page)
    assert links
    for target, anchor in links:
        landing = client.get(html.unescape(target)).text if target else page
        assert f'id="{anchor}"' in landing
