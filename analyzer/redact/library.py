"""Vendor token formats from detect-secrets' plugins (PyPI ``detect-secrets``, pure Python,
no network unless asked to verify, which culprit never does).

Each plugin keeps its compiled ``denylist`` regexes as a class attribute: culprit runs them
itself with ``finditer`` (detect-secrets' own scan returns values, not where they are) and
takes the span of the groups they capture, or of the whole match. The JWT plugin's
``is_formally_valid`` confirms a token; a token whose payload is a Kubernetes
service-account's is named as such. Formats the plugins do not know (Google, Huawei Cloud,
Hugging Face, W&B, newer OpenAI and GitHub keys…) are in :mod:`analyzer.redact.vendors`.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Final

from analyzer.redact.detectors import Regex, RegexDetector, Span

#: Characters a plugin's regex may take around the token itself (Artifactory's
#: ``(?:\s|=|:|"|^)`` delimiters), trimmed off the span.
_EDGES: Final = " \t\r\n\"'=:"
#: A name the regex matched before the value (Azure's ``AccountKey=``): kept readable.
_NAME: Final = Regex(r"[A-Za-z_-]+=")


@dataclass(frozen=True)
class PluginDetector:
    """Some of the ``denylist`` regexes of one detect-secrets plugin, as one kind."""

    kind: str
    #: The plugin class as ``module.Class`` under ``detect_secrets.plugins``, imported on the
    #: first text the hint lets through: importing detect-secrets brings ``requests`` along,
    #: a tenth of a second of start-up that a case with no candidate never needs.
    plugin: str
    #: Which of the plugin's regexes (all when empty).
    which: tuple[int, ...]
    hint: str
    #: The group that holds the secret (0: the whole match; a plugin's other groups are
    #: prefixes such as GitHub's ``(ghp|gho|…)``).
    group: int = 0

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind,)

    def find(self, text: str) -> Iterator[Span]:
        patterns = _denylist(self.plugin)
        for index in self.which or range(len(patterns)):
            for match in patterns[index].finditer(text):
                start, end = match.span(self.group)
                named = _NAME.match(text, start, end)
                if named is not None:
                    start = named.end()
                value = text[start:end]
                start += len(value) - len(value.lstrip(_EDGES))
                # Not "=" at the end: that is base64 padding, part of the secret.
                end -= len(value) - len(value.rstrip(_EDGES.replace("=", "")))
                if end > start:
                    yield Span(start, end, self.kind)


@cache
def _denylist(plugin: str) -> tuple[re.Pattern[str], ...]:
    module, name = plugin.rsplit(".", 1)
    found = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
    # The plugins declare ``denylist`` as a class attribute (an abstract property on their
    # base class, which is all the type checker sees).
    return tuple(found.__dict__["denylist"])


PLUGINS: Final = (
    PluginDetector("aws-access-key-id", "aws.AWSKeyDetector", (0,), r"A3T|ABIA|ACCA|AKIA|ASIA"),
    PluginDetector("aws-secret-key", "aws.AWSKeyDetector", (1,), r"(?i)aws", group=1),
    PluginDetector("github-token", "github_token.GitHubTokenDetector", (), r"gh[pousr]_"),
    PluginDetector(
        "gitlab-token",
        "gitlab_token.GitLabTokenDetector",
        (),
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941",
    ),
    PluginDetector("slack-token", "slack.SlackDetector", (0,), r"(?i)xox[abposr]-"),
    PluginDetector(
        "slack-webhook", "slack.SlackDetector", (1,), r"(?i)hooks\.slack\.com/services/"
    ),
    PluginDetector("openai-key", "openai.OpenAIDetector", (), r"T3BlbkFJ"),
    PluginDetector("stripe-key", "stripe.StripeDetector", (), r"[rs]k_live_"),
    PluginDetector("twilio-key", "twilio.TwilioKeyDetector", (), r"(?:AC|SK)[a-z0-9]{32}"),
    PluginDetector("sendgrid-key", "sendgrid.SendGridDetector", (), r"SG\."),
    PluginDetector("mailchimp-key", "mailchimp.MailchimpDetector", (), r"-us[0-9]"),
    PluginDetector("npm-token", "npm.NpmDetector", (), r"_authToken", group=1),
    PluginDetector("pypi-token", "pypi_token.PypiTokenDetector", (), r"pypi-AgE"),
    PluginDetector(
        "discord-token", "discord.DiscordBotTokenDetector", (), r"[MNO][a-zA-Z0-9_-]{23,25}\."
    ),
    PluginDetector(
        "telegram-token",
        "telegram_token.TelegramBotTokenDetector",
        (),
        r"[0-9]{8,10}:[0-9A-Za-z_-]{35}",
    ),
    PluginDetector("square-secret", "square_oauth.SquareOAuthDetector", (), r"sq0csp-"),
    PluginDetector(
        "azure-storage-key", "azure_storage_key.AzureStorageKeyDetector", (), r"AccountKey="
    ),
    # Only the AKC form: the plugin's "AP<hex>…" form takes ordinary upper-case words.
    PluginDetector("artifactory-token", "artifactory.ArtifactoryDetector", (0,), r"AKC"),
)


def _jwt_kind(text: str, match: re.Match[str]) -> str | None:
    """``jwt``, ``kubernetes-token`` for a service-account token, None when the candidate is
    not a formally valid JWT (detect-secrets' check)."""
    from detect_secrets.plugins.jwt import JwtTokenDetector

    token = match.group("s")
    if not JwtTokenDetector.is_formally_valid(token):
        return None
    payload = token.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return "jwt"
    issuer = str(claims.get("iss", "")) if isinstance(claims, dict) else ""
    keys = " ".join(claims) if isinstance(claims, dict) else ""
    return "kubernetes-token" if "kubernetes" in issuer or "kubernetes.io" in keys else "jwt"


JWT: Final = RegexDetector(
    "jwt",
    Regex(
        r"(?<![A-Za-z0-9_-])(?P<s>eyJ[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]+={0,2}"
        r"(?:\.[A-Za-z0-9_-]+={0,2})?)"
    ),
    r"eyJ",
    check=_jwt_kind,
    also=("kubernetes-token",),
)
