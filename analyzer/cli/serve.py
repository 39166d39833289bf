"""``culprit serve``: the local triage dashboard (:mod:`analyzer.serve`) under uvicorn."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Final

import typer

from analyzer import defaults
from analyzer.cli.exits import EXIT_INTERRUPTED
from analyzer.errors import CaseError

if TYPE_CHECKING:
    from analyzer.serve.app import DashboardApp

#: Where the dashboard listens unless told otherwise: loopback only, since it has no
#: authentication (``--allow-remote`` opens it up).
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080
#: After Ctrl-C, requests still running (a page being diagnosed) get this long to finish
#: before they are cancelled; queries are stopped at once.
SHUTDOWN_GRACE_S: Final = 1


def serve(
    case: Annotated[
        Path, typer.Argument(help="A case directory, or a folder of case directories.")
    ],
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
    host: Annotated[
        str, typer.Option(help="Address to bind; only loopback without --allow-remote.")
    ] = DEFAULT_HOST,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow a non-loopback --host (no authentication: whoever reaches the port "
            "reads every case).",
        ),
    ] = False,
    query_timeout: Annotated[
        float,
        typer.Option(
            "--query-timeout",
            metavar="SECONDS",
            help="Stop a query of the SQL box after this many seconds.",
        ),
    ] = defaults.SERVE_QUERY_TIMEOUT_S,
    query_memory: Annotated[
        str,
        typer.Option(
            "--query-memory",
            metavar="SIZE",
            help="Memory one query of the SQL box may use (DuckDB memory_limit: 1GB, 512MB).",
        ),
    ] = defaults.SERVE_QUERY_MEMORY,
    max_queries: Annotated[
        int,
        typer.Option(
            "--max-queries",
            metavar="N",
            help="Queries of the SQL box running at once; more are refused (503) meanwhile.",
        ),
    ] = defaults.SERVE_MAX_QUERIES,
) -> None:
    """Serve a local triage dashboard: the cases and their verdicts, reports, host
    timelines and a read-only SQL box.

    Example: culprit serve ./incidents --port 8080
    """
    from analyzer.serve.app import create_app, trusted_hosts, url_of
    from analyzer.serve.queries import QueryLimits

    if not case.exists():
        raise CaseError("no such file or directory", path=str(case))
    allowed = trusted_hosts(host, allow_remote)
    limits = QueryLimits(timeout_s=query_timeout, memory=query_memory, max_queries=max_queries)
    web = create_app(case, allowed_hosts=allowed, limits=limits)
    sys.stdout.write(f"culprit: serving {case} at {url_of(host, port)} (Ctrl+C stops)\n")
    sys.stdout.flush()
    _run(web, host, port)


def _run(web: DashboardApp, host: str, port: int) -> None:
    """Serve until Ctrl-C (or SIGTERM), which stops every query at once: uvicorn waits for
    running requests, and a query's request ends only when its query does."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            web.stop_queries()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        web, host=host, port=port, log_level="warning", timeout_graceful_shutdown=SHUTDOWN_GRACE_S
    )
    try:
        Server(config).run()
    except KeyboardInterrupt:
        # The server has stopped and so has every query; the dashboard wrote nothing. Leave
        # now rather than after the interpreter has torn down polars, DuckDB and Arrow, which
        # takes most of a second on a busy machine (Ctrl-C must stop it within 2 s).
        sys.stderr.write("culprit: interrupted\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)
