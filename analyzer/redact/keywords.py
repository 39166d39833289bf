"""Secrets by what names them: ``password=…``, ``--password …``, ``"password": "…"``,
``token: …``, ``AWS_SECRET_ACCESS_KEY=…``, ``HUAWEICLOUD_SDK_SK=…``, ``Authorization: Basic
…``, ``Cookie: …``.

detect-secrets' keyword plugin is written for source code (quoted strings, assignments in a
language); a log line names its secrets in environment dumps, command lines, HTTP headers
and JSON. So the vocabulary follows the plugin's (password, passwd, pwd, secret, api key,
private key…) plus the tokens and access keys of cloud SDKs, and the name is read as words
(``AWS_SECRET_ACCESS_KEY`` is aws/secret/access/key, ``secretAccessKey`` the same), which is
what the ``\\b`` before ``access_key`` of the old pattern missed after an underscore. Only
the value is redacted; a value that is a placeholder (``None``, ``***``, ``${VAR}``, a path)
or, except for a password, a number is kept, and a name ending in ``_file``, ``_path``,
``_name``, ``_count``… names something that is not the secret itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from analyzer.redact.detectors import Regex, Span

_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def words(text: str) -> frozenset[str]:
    """The space-separated words of ``text`` (tables of words read better as one string)."""
    return frozenset(text.split())


#: A name's last word that makes it name something other than the secret.
_NOT_THE_SECRET: Final = words(
    "file files path dir directory name names env var count len length size type policy "
    "policies required enabled disabled set expiry expires expiration ttl age source ref mode "
    "format prompt min max limit url uri endpoint header field stdin rotation version manager "
    "provider store config location arn kind namespace mount volume timeout retries budget "
    "usage used per sec rate ratio hint label labels"
)
_PLACEHOLDERS: Final = words(
    "none null nil undefined true false yes no on off enabled disabled set unset required "
    "optional redacted hidden masked empty n/a na - changeme"
)
_KEY_OWNERS: Final = words(
    "auth account service master encryption signing storage shared session app admin license secret"
)
#: (vendor words, generic kind) -> the vendor's kind.
_VENDOR_KINDS: Final = (
    (frozenset({"aws", "amz"}), "secret-key", "aws-secret-key"),
    (frozenset({"aws", "amz"}), "access-key-id", "aws-access-key-id"),
    (frozenset({"aws", "amz"}), "token", "aws-session-token"),
    (
        frozenset({"huaweicloud", "hwcloud", "huawei", "obs", "modelarts"}),
        "access-key-id",
        "huaweicloud-ak",
    ),
    (
        frozenset({"huaweicloud", "hwcloud", "huawei", "obs", "modelarts"}),
        "secret-key",
        "huaweicloud-sk",
    ),
    (frozenset({"wandb"}), "api-key", "wandb-api-key"),
    (frozenset({"hf", "huggingface", "hugging"}), "token", "hf-token"),
    (frozenset({"github", "gh"}), "token", "github-token"),
    (frozenset({"openai"}), "api-key", "openai-key"),
)
#: Every kind this module names.
KINDS: Final = (
    "password",
    "secret",
    "secret-key",
    "access-key-id",
    "api-key",
    "token",
    "private-key",
    "credential",
    "basic-auth",
    "bearer-token",
    "authorization",
    "cookie",
    *dict.fromkeys(kind for _, _, kind in _VENDOR_KINDS),
)
_MIN_CHARS: Final = {"password": 1, "secret": 6}


def kind_of(name: str) -> str | None:
    """The kind of secret an assignment's ``name`` holds, or None when it names none."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _NOT_THE_SECRET:
        return None
    found = set(words)
    kind: str | None = None
    if (
        any(("password" in w or "passwd" in w or "passphrase" in w) for w in words)
        or (found & {"pwd"})
        or (len(words) > 1 and words[-1] == "pass")
    ):
        kind = "password"
    elif "secret" in found or any(w.endswith("secret") for w in words):
        kind = "secret-key" if "key" in found else "secret"
    elif "token" in found or any(w.endswith("token") for w in words):
        kind = "token"
    elif "sk" in found:
        kind = "secret-key"
    elif "ak" in found or ("access" in found and "key" in found):
        kind = "access-key-id"
    elif "apikey" in found or ("api" in found and "key" in found):
        kind = "api-key"
    elif "private" in found and "key" in found:
        kind = "private-key"
    elif "key" in found and found & _KEY_OWNERS:
        kind = "secret-key"
    elif found & {"credential", "credentials"}:
        kind = "credential"
    elif words == ["auth"]:
        kind = "basic-auth"
    if kind is None:
        return None
    for vendor, generic, specific in _VENDOR_KINDS:
        if generic == kind and found & vendor:
            return specific
    return kind


def secret_value(kind: str, value: str) -> bool:
    """Whether ``value`` assigned to a name of ``kind`` is a secret worth redacting."""
    lowered = value.lower()
    if lowered in _PLACEHOLDERS or len(set(value)) == 1:
        return False
    if value.startswith(("<", "${", "$(", "{{", "%", "$", "[REDACTED", "/", "./", "~/", "-")):
        return False
    if "://" in value and not value.startswith(("http", "redis", "postgres", "mysql", "mongodb")):
        return False
    if kind != "password" and re.fullmatch(r"[0-9.]+", value):
        return False
    if kind == "basic-auth":
        return len(value) >= 16
    return len(value) >= _MIN_CHARS.get(kind, 8)


_ASSIGNMENT: Final = Regex(
    r"""(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63}?)
        \\?["'`]?\]?[ \t]*(?::=|=>|=(?!=)|:(?!//))[ \t]*
        (?:(?P<q>["'`])(?P<quoted>[^"'`\n\\]*)
          |\\["'](?P<escaped>[^"'\\\n]*)
          |(?P<bare>[^\s,;&"'`<>(){}\[\]\\]+))""",
    re.VERBOSE,
)
_FLAG: Final = Regex(
    r"(?<![\w-])--(?P<name>[A-Za-z][\w-]{0,63})(?:=|[ \t]+)[\"']?(?P<bare>[^\s\"']+)"
)
_AUTHORIZATION: Final = Regex(
    r"""(?i)(?<![\w-])(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?
        (?:(?P<scheme>bearer|basic|token|apikey|api-key|key)[ \t]+)?
        (?P<s>[^\s"'\\,;]+)""",
    re.VERBOSE,
)
_SCHEMES: Final = {"bearer": "bearer-token", "basic": "basic-auth"}
_BEARER: Final = Regex(r"(?i)(?<![\w-])bearer[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{8,})")
_COOKIE: Final = Regex(r"(?i)(?<![\w-])(?:set-)?cookie\\?[\"']?[ \t]*:[ \t]*(?P<s>[^\n\"'\\]+)")


@dataclass(frozen=True)
class KeywordDetector:
    """Assignments, command-line flags and HTTP headers that name a secret."""

    kinds: tuple[str, ...] = KINDS
    hint: str = (
        r"(?i)pass|pwd|secret|token|key|credential|auth|cookie|bearer|(?:^|[^a-z])[as]k(?:[^a-z]|$)"
    )

    def find(self, text: str) -> Iterator[Span]:
        for match in _AUTHORIZATION.finditer(text):
            scheme = (match.group("scheme") or "").lower()
            value = match.group("s")
            if not scheme and value.upper() in {"OBS", "AWS4-HMAC-SHA256", "AWS", "DIGEST"}:
                continue
            if secret_value("token", value):
                yield Span(*match.span("s"), _SCHEMES.get(scheme, "authorization"))
        for match in _BEARER.finditer(text):
            value = match.group("s")
            if any(c.isdigit() for c in value) or len(value) >= 24:
                yield Span(*match.span("s"), "bearer-token")
        for match in _COOKIE.finditer(text):
            if secret_value("secret", match.group("s").strip()):
                start, end = match.span("s")
                yield Span(
                    start, end - (len(match.group("s")) - len(match.group("s").rstrip())), "cookie"
                )
        for pattern in (_ASSIGNMENT, _FLAG):
            for match in pattern.finditer(text):
                kind = kind_of(match.group("name"))
                if kind is None:
                    continue
                group = next(
                    g for g in ("quoted", "escaped", "bare") if match.groupdict().get(g) is not None
                )
                start, end = match.span(group)
                value = text[start:end]
                if group == "bare":
                    trimmed = value.rstrip(".:")
                    end -= len(value) - len(trimmed)
                    value = trimmed
                if secret_value(kind, value.strip()):
                    yield Span(start, end, kind)
