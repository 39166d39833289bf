"""The dashboard's Starlette app: routes, templates, and which hosts may serve it.

Every page is rendered on the server from Jinja2 templates with autoescaping, so host names,
log messages and SQL results from the case reach the browser as text, never as markup. Log
messages are redacted (:mod:`analyzer.redact`) on every page but the SQL box's results,
which show the case as stored and say so. The
endpoints are plain functions: Starlette runs them in its thread pool, where DuckDB and the
diagnosis may block without stalling the server.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from analyzer import api
from analyzer.errors import CaseError, QueryError, UsageError
from analyzer.redact.case import for_case
from analyzer.report.templating import html_environment
from analyzer.serve import hosts as hosts_mod
from analyzer.serve import sql as sql_mod
from analyzer.serve.cases import CaseEntry, Summaries, find_case, find_cases

TEMPLATES_DIR: Final = Path(__file__).parent / "templates"
#: Host header names a loopback-bound server answers to (see :func:`trusted_hosts`).
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def trusted_hosts(host: str, allow_remote: bool) -> list[str] | None:
    """The Host headers the server should accept when bound to ``host``; None for any.

    On loopback only local names are accepted: a web page the user visits could otherwise
    point its own domain at 127.0.0.1 (DNS rebinding) and read the cases through it.

    Raises:
        UsageError: ``host`` is not a loopback address and ``allow_remote`` is false.
    """
    if is_loopback(host):
        literal = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return sorted({*LOOPBACK_NAMES, literal.lower()})
    if not allow_remote:
        raise UsageError(
            f"--host {host} is not a loopback address: the dashboard has no authentication "
            "and shows every case to whoever reaches it (pass --allow-remote to serve it anyway)"
        )
    return None


def url_of(host: str, port: int) -> str:
    """The dashboard's URL for a server bound to ``host``."""
    literal = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{literal}:{port}/"


def create_app(root: Path, *, allowed_hosts: Sequence[str] | None = None) -> Starlette:
    """The dashboard over ``root``: a case directory, or a folder of them.

    Args:
        root: what to serve; cases are looked up again on every request, so cases added
            meanwhile appear without a restart.
        allowed_hosts: Host headers to answer (:func:`trusted_hosts`); None answers any.
    """
    return _Dashboard(root).app(allowed_hosts)


def _environment() -> jinja2.Environment:
    environment = html_environment(TEMPLATES_DIR)
    environment.filters["ts"] = _ts
    environment.filters["num"] = _num
    environment.globals["case_url"] = _case_url
    return environment


def _ts(value: dt.datetime | None) -> str:
    """A timestamp in UTC to the millisecond; every page shows the same zone."""
    if value is None:
        return "—"
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _num(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _case_url(case_id: str, *parts: str) -> str:
    """``/case/<id>/<parts>``, each piece percent-encoded (a host name may hold anything)."""
    return "/".join(["/case", quote(case_id, safe="/"), *(quote(p, safe="") for p in parts)])


class _Dashboard:
    """The routes over one served directory, and the findings cache they share."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.summaries = Summaries()
        self.templates = Jinja2Templates(env=_environment())

    def app(self, allowed_hosts: Sequence[str] | None) -> Starlette:
        middleware = []
        if allowed_hosts is not None:
            middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
        # The host page first: its pattern is the only one with "/hosts/" in the middle, and
        # a host called "report" or "sql" must not be taken for the other pages.
        routes = [
            Route("/", self.index, name="index"),
            Route("/case/{case_id:path}/hosts/{host:path}", self.host, name="host"),
            Route("/case/{case_id:path}/hosts", self.hosts, name="hosts"),
            Route("/case/{case_id:path}/report", self.report, name="report"),
            Route("/case/{case_id:path}/sql", self.sql, name="sql"),
        ]
        return Starlette(
            routes=routes,
            middleware=middleware,
            exception_handlers={HTTPException: self.http_error},
        )

    # -- pages ----------------------------------------------------------------------------

    def index(self, request: Request) -> Response:
        try:
            found = find_cases(self.root)
        except CaseError as exc:
            return self.error(request, 409, "Cannot list the cases", str(exc))
        summaries = [self.summaries.get(entry) for entry in found]
        return self.page(request, "index.html", root=self.root, summaries=summaries)

    def report(self, request: Request) -> Response:
        entry = self.entry(request)
        try:
            # Rendered by analyzer.report; served as it is (it is a self-contained page).
            html = api.report_html(entry.path)
        except CaseError as exc:
            return self.error(request, 409, "No report", str(exc), entry)
        return HTMLResponse(html)

    def hosts(self, request: Request) -> Response:
        entry = self.entry(request)
        page = _page_number(request.query_params.get("page"))
        summary = self.summaries.get(entry)
        culprit = summary.findings.verdict.culprit.host if summary.findings else None
        try:
            case = api.load_case(entry.path)
            size = hosts_mod.PAGE_SIZE
            listed = hosts_mod.host_list(
                case, culprit=culprit, offset=(page - 1) * size, limit=size
            )
        except CaseError as exc:
            return self.error(request, 409, "Cannot open the case", str(exc), entry)
        return self.page(
            request,
            "hosts.html",
            entry=entry,
            summary=summary,
            culprit=culprit,
            listed=listed,
            page_number=page,
            page_size=size,
        )

    def host(self, request: Request) -> Response:
        entry = self.entry(request)
        name = str(request.path_params["host"])
        try:
            case = api.load_case(entry.path)
            detail = hosts_mod.host_detail(case, name, for_case(case)) if name else None
        except CaseError as exc:
            return self.error(request, 409, "Cannot open the case", str(exc), entry)
        if detail is None:
            return self.error(request, 404, "No such host", f"no row names host {name!r}", entry)
        return self.page(
            request,
            "host.html",
            entry=entry,
            case=case,
            detail=detail,
            rows_before=hosts_mod.ROWS_BEFORE_ERROR,
        )

    def sql(self, request: Request) -> Response:
        entry = self.entry(request)
        query = request.query_params.get("q")
        result: sql_mod.QueryResult | None = None
        problem: str | None = None
        if query is not None:
            try:
                result = sql_mod.run_query(api.load_case(entry.path), query)
            except (QueryError, CaseError) as exc:
                problem = str(exc)
        return self.page(
            request,
            "sql.html",
            status_code=400 if problem is not None else 200,
            entry=entry,
            query=sql_mod.DEFAULT_QUERY if query is None else query,
            result=result,
            problem=problem,
            max_rows=sql_mod.MAX_ROWS,
        )

    # -- plumbing -------------------------------------------------------------------------

    def entry(self, request: Request) -> CaseEntry:
        """The case the URL names (404 unless it is one of the cases found under root)."""
        case_id = str(request.path_params["case_id"])
        entry = find_case(self.root, case_id)
        if entry is None:
            raise HTTPException(404, f"no case {case_id!r} here")
        return entry

    def page(self, request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
        return self.templates.TemplateResponse(request, name, context, status_code=status_code)

    def error(
        self,
        request: Request,
        status: int,
        title: str,
        message: str,
        entry: CaseEntry | None = None,
    ) -> Response:
        return self.page(request, "error.html", status, title=title, message=message, entry=entry)

    def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        title = "Not found" if exc.status_code == 404 else "Error"
        return self.error(request, exc.status_code, title, exc.detail)


def _page_number(text: str | None) -> int:
    try:
        return max(1, int(text or "1"))
    except ValueError:
        return 1
