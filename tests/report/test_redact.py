"""Planted secrets leave quoted text; everything else stays."""

from __future__ import annotations

import pytest

from analyzer.report.redact import redact

SECRETS = [
    ("ip", "connect to 10.128.0.17:8476 failed", "10.128.0.17"),
    ("ipv6", "peer fe80::1ff:fe23:4567:890a unreachable", "fe80::1ff:fe23:4567:890a"),
    ("bearer-token", "Authorization: Bearer abcDEF123456789xyz", "abcDEF123456789xyz"),
    ("oauth-token", "token=ya29.a0AfH6SMBx3Zq-EXAMPLE-token_value", "ya29.a0AfH6SMBx3Zq"),
    (
        "api-key",
        "key=AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    ),
    ("url-password", "gs fetch https://user:hunter2@example.com/x", "hunter2"),
    ("email", "owner alice.smith@example.com paged", "alice.smith@example.com"),
    (
        "access-key",
        "AK=AKIAIOSFODNN7EXAMPLE1 SK=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI",
    ),
    (
        "private-key",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
]


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS, ids=[s[0] for s in SECRETS])
def test_a_planted_secret_is_redacted(kind: str, text: str, secret: str) -> None:
    redacted = redact(text)
    assert secret not in redacted
    assert "[REDACTED:" in redacted


def test_ordinary_log_text_is_unchanged() -> None:
    text = (
        "E1129 18:05:58.212695   37793 synchronous_driver.cc:1064] !!!! FATAL ERROR !!!! for "
        "[/dev/accel0 tpu1114:pe2:3] step 1200 v5.4.3"
    )
    assert redact(text) == text
