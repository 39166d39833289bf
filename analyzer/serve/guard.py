"""What a web page the user happens to visit cannot make the dashboard do.

The dashboard listens on loopback and answers local Host names only (DNS rebinding), but
any page open in the user's browser can still send it requests. So:

* **Cross-site requests are refused (403)** before any work: a browser marks each request
  with ``Sec-Fetch-Site`` and ``Origin``; one from another site (``cross-site``, or
  ``same-site``: another port of localhost is another origin) or with a foreign ``Origin`` is
  refused, except a top-level navigation (a link the user follows to the case list), which
  shows a page the other site cannot read.
* **Queries run only by POST with the server's token**: the SQL form carries a random token
  made when the server starts, which another site cannot read (the same-origin policy), so
  it cannot forge the form either, even from a browser that sends no ``Sec-Fetch-*``.
* **Every response carries a Content-Security-Policy** (``default-src 'self'``,
  ``frame-ancestors 'none'``: nothing from elsewhere, never in a frame), ``X-Frame-Options``,
  ``X-Content-Type-Options: nosniff``, a same-origin referrer policy and same-origin opener
  and resource policies (another site's page cannot read a response even by embedding it).
  The served report keeps its inline script, allowed by its hash alone.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from typing import Final
from urllib.parse import parse_qs

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The Content-Security-Policy of the dashboard's own pages (their CSS is a file of theirs).
PAGE_POLICY: Final = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: Headers of every response; a response that sets one of them keeps its own.
SECURITY_HEADERS: Final = {
    "content-security-policy": PAGE_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # Not "no-referrer": with it Chromium posts a form of the page itself with "Origin: null".
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
#: The form field that carries the server's token.
TOKEN_FIELD: Final = "token"
#: A form larger than this is not read (a query is text someone typed).
MAX_FORM_BYTES: Final = 1 << 20

_INLINE_SCRIPT: Final = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)
#: Script types a browser does not run (data blocks need no permission).
_DATA_TYPE: Final = re.compile(r"""type\s*=\s*["']?application/json""", re.I)


def new_token() -> str:
    """A token for one server's life: 256 random bits."""
    return secrets.token_urlsafe(32)


def token_matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


async def form_fields(request: Request) -> dict[str, str]:
    """The fields of a URL-encoded form (what an HTML form posts), first value of each; none
    for another body or one over :data:`MAX_FORM_BYTES`."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return {}
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return {}
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


def report_policy(html: str) -> str:
    """The Content-Security-Policy of a served report: the dashboard's, but its inline
    scripts allowed by their SHA-256 (no other script runs) and its inline styles kept."""
    hashes = [
        "'sha256-{}'".format(
            base64.b64encode(hashlib.sha256(m["body"].encode()).digest()).decode("ascii")
        )
        for m in _INLINE_SCRIPT.finditer(html)
        if not _DATA_TYPE.search(m["attrs"])
    ]
    scripts = " ".join(hashes) or "'none'"
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


def cross_site(request: Request) -> str | None:
    """Why ``request`` comes from another site, in words; None when it does not, or no
    browser said so (a script without a browser has no cookies or session to abuse: it
    still needs the token for a query)."""
    headers = request.headers
    site = headers.get("sec-fetch-site")
    top_level = (
        request.method in ("GET", "HEAD")
        and headers.get("sec-fetch-mode") == "navigate"
        and headers.get("sec-fetch-dest") == "document"
    )
    if site in ("cross-site", "same-site") and not top_level:
        return f"Sec-Fetch-Site: {site}"
    origin = headers.get("origin")
    if origin is not None and origin.lower() != _own_origin(request):
        return f"Origin: {origin}"
    return None


def _own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}".lower()


class CrossSiteGuard:
    """ASGI middleware: a cross-site request gets ``refuse(request, why)`` (a 403 page) and
    never reaches a route."""

    def __init__(self, app: ASGIApp, refuse: Callable[[Request, str], Response]) -> None:
        self.app = app
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope, receive)
            why = cross_site(request)
            if why is not None:
                await self.refuse(request, why)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """ASGI wrapper, outside everything (error pages included): adds
    :data:`SECURITY_HEADERS` to every HTTP response that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
