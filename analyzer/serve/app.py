"""The dashboard's Starlette app: routes, templates, and which hosts may serve it.

Every page is rendered on the server from Jinja2 templates with autoescaping, so host names,
log messages and SQL results from the case reach the browser as text, never as markup. Log
messages are redacted (:mod:`analyzer.redact`) on every page but the SQL box's results,
which show the case as stored and say so. The pages are plain functions: Starlette runs them
in its thread pool, where DuckDB and the diagnosis may block without stalling the server.
The SQL box's queries run on threads of their own under limits (:mod:`analyzer.serve.queries`),
only by POST with the server's token, and nothing from another site gets an answer
(:mod:`analyzer.serve.guard`). A failure is a page naming paths relative to the served
directory (:mod:`analyzer.serve.problems`), never a bare 500.
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
from starlette.types import Receive, Scope, Send

from analyzer import api
from analyzer.errors import CaseError, QueryError, UsageError
from analyzer.redact.case import for_case
from analyzer.report.templating import html_environment
from analyzer.serve import guard
from analyzer.serve import hosts as hosts_mod
from analyzer.serve import sql as sql_mod
from analyzer.serve.cases import CaseCache, CaseEntry, Summaries, find_case, find_cases, host_errors
from analyzer.serve.problems import DAMAGE, first_line, relative
from analyzer.serve.queries import STOPPING, TIMED_OUT, QueryGate, QueryLimits

TEMPLATES_DIR: Final = Path(__file__).parent / "templates"
STYLESHEET: Final = Path(__file__).parent / "static" / "dashboard.css"
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


class DashboardApp:
    """The ASGI app ``culprit serve`` runs: the routes, inside the security headers every
    response carries. :meth:`stop_queries` stops every running query at once (Ctrl-C)."""

    def __init__(
        self, root: Path, allowed_hosts: Sequence[str] | None, limits: QueryLimits
    ) -> None:
        self._dashboard = _Dashboard(root, limits)
        self._app = guard.SecurityHeaders(self._dashboard.app(allowed_hosts))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def stop_queries(self) -> None:
        self._dashboard.gate.stop_all()


def create_app(
    root: Path,
    *,
    allowed_hosts: Sequence[str] | None = None,
    limits: QueryLimits | None = None,
) -> DashboardApp:
    """The dashboard over ``root``: a case directory, or a folder of them.

    Args:
        root: what to serve; cases are looked up again on every request, so cases added
            meanwhile appear without a restart.
        allowed_hosts: Host headers to answer (:func:`trusted_hosts`); None answers any.
        limits: the SQL box's time, memory and concurrency limits (defaults otherwise).
    """
    return DashboardApp(root, allowed_hosts, limits or QueryLimits())


def _environment(root: Path) -> jinja2.Environment:
    environment = html_environment(TEMPLATES_DIR)
    environment.filters["ts"] = _ts
    environment.filters["num"] = _num
    environment.filters["relative"] = lambda text: relative(str(text), root)
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
    """The routes over one served directory, and the caches and queries they share."""

    def __init__(self, root: Path, limits: QueryLimits) -> None:
        self.root = root
        self.summaries = Summaries()
        self.host_errors = CaseCache(host_errors)
        self.templates = Jinja2Templates(env=_environment(root))
        self.gate = QueryGate(limits)
        self.token = guard.new_token()
        self.stylesheet = STYLESHEET.read_bytes()

    def app(self, allowed_hosts: Sequence[str] | None) -> Starlette:
        middleware = [Middleware(guard.CrossSiteGuard, refuse=self.cross_site)]
        if allowed_hosts is not None:
            middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
        # The host page first: its pattern is the only one with "/hosts/" in the middle, and
        # a host called "report" or "sql" must not be taken for the other pages.
        routes = [
            Route("/", self.index, name="index"),
            Route("/static/dashboard.css", self.css, name="css"),
            Route("/case/{case_id:path}/hosts/{host:path}", self.host, name="host"),
            Route("/case/{case_id:path}/hosts", self.hosts, name="hosts"),
            Route("/case/{case_id:path}/report", self.report, name="report"),
            Route("/case/{case_id:path}/sql", self.sql_form, name="sql", methods=["GET"]),
            Route("/case/{case_id:path}/sql", self.sql_run, name="sql_run", methods=["POST"]),
        ]
        return Starlette(
            routes=routes,
            middleware=middleware,
            exception_handlers={HTTPException: self.http_error, Exception: self.internal_error},
        )

    # -- pages ----------------------------------------------------------------------------

    def index(self, request: Request) -> Response:
        try:
            found = find_cases(self.root)
        except CaseError as exc:
            return self.error(request, 409, "Cannot list the cases", str(exc))
        summaries = [self.summaries.get(entry) for entry in found]
        # The served directory by its name: pages show no absolute path of the machine.
        name = self.root.resolve().name or str(self.root)
        return self.page(request, "index.html", root_name=name, summaries=summaries)

    def css(self, request: Request) -> Response:
        return Response(self.stylesheet, media_type="text/css")

    def report(self, request: Request) -> Response:
        entry = self.entry(request)
        try:
            # Rendered by analyzer.report; served as it is (it is a self-contained page),
            # its inline script allowed by its hash.
            html = api.report_html(entry.path)
        except CaseError as exc:
            return self.error(request, 409, "No report", str(exc), entry)
        except DAMAGE as exc:
            return self.damaged(request, exc, entry)
        return HTMLResponse(html, headers={"Content-Security-Policy": guard.report_policy(html)})

    def hosts(self, request: Request) -> Response:
        entry = self.entry(request)
        page = _page_number(request.query_params.get("page"))
        summary = self.summaries.get(entry)
        culprit = summary.findings.verdict.culprit.host if summary.findings else None
        try:
            case = api.load_case(entry.path)
            size = hosts_mod.PAGE_SIZE
            listed = hosts_mod.host_list(
                case,
                culprit=culprit,
                diagnosis=self.diagnosis(entry),
                offset=(page - 1) * size,
                limit=size,
            )
        except CaseError as exc:
            return self.error(request, 409, "Cannot open the case", str(exc), entry)
        except DAMAGE as exc:
            return self.damaged(request, exc, entry)
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
        at = request.query_params.get("at")
        try:
            case = api.load_case(entry.path)
            detail = (
                hosts_mod.host_detail(
                    case,
                    name,
                    for_case(case),
                    diagnosis=self.diagnosis(entry),
                    at=_page_number(at) if at is not None else None,
                )
                if name
                else None
            )
        except CaseError as exc:
            return self.error(request, 409, "Cannot open the case", str(exc), entry)
        except DAMAGE as exc:
            return self.damaged(request, exc, entry)
        if detail is None:
            return self.error(request, 404, "No such host", f"no row names host {name!r}", entry)
        return self.page(
            request,
            "host.html",
            entry=entry,
            detail=detail,
            meta=case.meta,
            rows_before=hosts_mod.ROWS_BEFORE_ERROR,
            rows_shown=hosts_mod.ROWS_SHOWN,
        )

    def sql_form(self, request: Request) -> Response:
        entry = self.entry(request)
        if "q" in request.query_params:
            # A link must not run a query: any page could link here with one.
            return self.sql_page(
                request,
                entry,
                sql_mod.DEFAULT_QUERY,
                problem="a query runs only from this form (the link's query was not run)",
                status=405,
                headers={"Allow": "POST"},
            )
        return self.sql_page(request, entry, sql_mod.DEFAULT_QUERY)

    async def sql_run(self, request: Request) -> Response:
        entry = self.entry(request)
        form = await guard.form_fields(request)
        query, token = form.get("q"), form.get(guard.TOKEN_FIELD)
        if not guard.token_matches(token, self.token):
            return self.error(
                request,
                403,
                "Refused",
                "this query did not come from the dashboard's own SQL form (its token is "
                "missing or wrong); open the SQL page and run it from there",
                entry,
            )
        if query is None:
            return self.sql_page(request, entry, "", problem="enter a SELECT statement", status=400)
        try:
            sql_mod.check_select(query)
            case = api.load_case(entry.path)
        except (QueryError, CaseError) as exc:
            return self.sql_page(request, entry, query, problem=str(exc), status=400)
        run = self.gate.start(case, query)
        if run is None:
            limit = self.gate.limits.max_queries
            return self.sql_page(
                request,
                entry,
                query,
                problem=f"busy: {limit} queries are running already (the limit, culprit serve "
                "--max-queries); run this one again when one of them has finished",
                status=503,
                headers={"Retry-After": "2"},
            )
        await self.gate.finish(run, request.is_disconnected)
        try:
            result = run.outcome()
        except QueryError as exc:
            status = {TIMED_OUT: 504, STOPPING: 503}.get(run.stopped or "", 400)
            return self.sql_page(request, entry, query, problem=str(exc), status=status)
        return self.sql_page(request, entry, query, result=result)

    # -- plumbing -------------------------------------------------------------------------

    def diagnosis(self, entry: CaseEntry) -> hosts_mod.Diagnosis:
        """The host pages' share of the diagnosis (none for a case not analyzed)."""
        summary = self.summaries.get(entry)
        if summary.findings is None:
            return hosts_mod.Diagnosis.none()
        return hosts_mod.Diagnosis(self.host_errors.get(entry), summary.findings.verdict.attempt)

    def sql_page(
        self,
        request: Request,
        entry: CaseEntry,
        query: str,
        *,
        result: sql_mod.QueryResult | None = None,
        problem: str | None = None,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> Response:
        response = self.page(
            request,
            "sql.html",
            status_code=status,
            entry=entry,
            query=query,
            result=result,
            problem=problem,
            max_rows=sql_mod.MAX_ROWS,
            token=self.token,
            token_field=guard.TOKEN_FIELD,
            limits=self.gate.limits,
            running=self.gate.running,
        )
        response.headers.update(headers or {})
        return response

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
        shown = relative(message, self.root)
        return self.page(request, "error.html", status, title=title, message=shown, entry=entry)

    def damaged(self, request: Request, exc: BaseException, entry: CaseEntry) -> Response:
        """A case whose files cannot be read (cut, overwritten, not what their names say)."""
        return self.error(
            request, 409, "The case cannot be read", f"{entry.id}: {first_line(exc)}", entry
        )

    def cross_site(self, request: Request, why: str) -> Response:
        return self.error(
            request,
            403,
            "Refused: a request from another site",
            f"this request came from another web page ({why}); the dashboard answers only "
            "its own pages. Open it from its address instead.",
        )

    def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        title = "Not found" if exc.status_code == 404 else "Error"
        return self.error(request, exc.status_code, title, exc.detail)

    def internal_error(self, request: Request, exc: Exception) -> Response:
        """Anything else that failed: a page with its first line (the traceback goes to the
        server's log, where Starlette sends it after this page)."""
        return self.error(
            request, 500, "Internal error", f"{type(exc).__name__}: {first_line(exc)}"
        )


def _page_number(text: str | None) -> int:
    try:
        return max(1, int(text or "1"))
    except ValueError:
        return 1
