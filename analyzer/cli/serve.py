"""``culprit serve``: the local triage dashboard (:mod:`analyzer.serve`) under uvicorn."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Final

import typer

from analyzer.errors import CaseError

#: Where the dashboard listens unless told otherwise: loopback only, since it has no
#: authentication (``--allow-remote`` opens it up).
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080


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
) -> None:
    """Serve a local triage dashboard: the cases and their verdicts, reports, host
    timelines and a read-only SQL box.

    Example: culprit serve ./incidents --port 8080
    """
    import uvicorn

    from analyzer.serve.app import create_app, trusted_hosts, url_of

    if not case.exists():
        raise CaseError("no such file or directory", path=str(case))
    allowed = trusted_hosts(host, allow_remote)
    web = create_app(case, allowed_hosts=allowed)
    sys.stdout.write(f"culprit: serving {case} at {url_of(host, port)} (Ctrl+C stops)\n")
    sys.stdout.flush()
    uvicorn.run(web, host=host, port=port, log_level="warning")
