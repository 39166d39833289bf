"""Secrets out of quoted text: every message a report or findings file quotes passes here.

Redaction replaces a secret by a bracketed kind (``[REDACTED:ip]``) inside the quoted text
only; it never touches citations (path, line, row id), so the cited row can still be found
in the bundle. Host identifiers in structured fields (a culprit that is an IP-named
ModelArts node) are the verdict itself and are kept.
"""

from __future__ import annotations

import re
from typing import Final

#: (kind, pattern), applied in order: the specific before the general.
_PATTERNS: Final = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
            re.DOTALL,
        ),
    ),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}")),
    ("oauth-token", re.compile(r"\bya29\.[A-Za-z0-9._-]{10,}")),
    ("api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("url-password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    (
        "access-key",
        re.compile(
            r"(?i)\b(?:access[_-]?key(?:[_-]?id)?|secret[_-]?(?:access[_-]?)?key|ak|sk)"
            r"\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{16,}"
        ),
    ),
    ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")),
    (
        "ipv6",
        re.compile(
            r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![0-9A-Fa-f:])"
            r"|(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:){0,5}"
            r"[0-9A-Fa-f]{1,4}(?![0-9A-Fa-f:])"
        ),
    ),
    ("ip", re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")),
)


def redact(text: str) -> str:
    """``text`` with every secret the patterns know replaced by ``[REDACTED:<kind>]``."""
    for kind, pattern in _PATTERNS:
        text = pattern.sub(f"[REDACTED:{kind}]", text)
    return text


def keep(text: str) -> str:
    """No redaction (``--no-redact``)."""
    return text
