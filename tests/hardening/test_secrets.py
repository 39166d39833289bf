"""Planted secrets never leave culprit in any output format: report.md, findings.json,
report.html (its text, its heat-strip JSON and its context lines) and the handoff archive.
With --no-redact they do, which shows the check can fail."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import polars as pl
import pytest
import zstandard

from analyzer import api

#: (kind, the secret as it appears in a log line). The rows around the first error carry them,
#: so every output that quotes rows meets them.
PLANTED = {
    "ipv4": "10.128.7.42",
    "ipv6": "fe80::1ff:fe23:4567:890a",
    "bearer-token": "abcdefghijklmnop1234",
    "oauth-token": "ya29.a0AfH6SMBxSECRETtoken",
    "gcp-api-key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "url-password": "hunter2pass",
    "secret-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY",
    "access-key": "AKIAIOSFODNN7SECRET01",
    "email": "alice.smith@example.com",
    "private-key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCSECRET",
}

LINES = [
    "I1129 18:00:00.000000    11 main.py:10] connecting to 10.128.7.42:8476 and "
    "[fe80::1ff:fe23:4567:890a]:8477 with Authorization: Bearer abcdefghijklmnop1234",
    "I1129 18:00:00.500000    11 main.py:11] token ya29.a0AfH6SMBxSECRETtoken key "
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "I1129 18:00:00.700000    11 main.py:11] loaded -----BEGIN PRIVATE KEY-----"
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCSECRET-----END PRIVATE KEY-----",
    "E1129 18:00:01.000000    11 synchronous_driver.cc:1064] !!!! FATAL ERROR !!!! for "
    "[/dev/accel0 tpu1114:pe2:3] reported to alice.smith@example.com from 10.128.7.42",
    "I1129 18:00:02.000000    11 main.py:12] upload https://bob:hunter2pass@storage.example.com"
    "/ckpt failed; AK=AKIAIOSFODNN7SECRET01 SK=wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY",
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("secrets") / "bundle"
    root.mkdir()
    (root / "worker-0.log").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (root / "worker-1.log").write_text(
        "I1129 18:00:00.100000    12 main.py:10] step 1 from 10.128.7.43\n"
        "E1129 18:00:11.000000    12 coordination_service.cc:500] heartbeat timeout "
        "contacting alice.smith@example.com\n",
        encoding="utf-8",
    )
    return root


def _leaks(text: str) -> list[str]:
    return [kind for kind, secret in PLANTED.items() if secret in text]


def test_the_planted_lines_are_the_evidence(bundle: Path, tmp_path: Path) -> None:
    """The secrets sit in rows every output quotes: the first error and its context."""
    result = api.analyze([bundle], tmp_path / "out", api.AnalyzeSettings(jobs=1, redact=False))
    first = result.findings.verdict.first_error
    assert first is not None and first.signature == "TPU-HW-001"
    page = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert {"email", "ipv4"} <= set(_leaks(page))


def test_no_output_format_leaks_a_secret(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.analyze([bundle], out, api.AnalyzeSettings(jobs=1, html=True))
    for name in ("report.md", "findings.json", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert _leaks(text) == [], name
        assert "[REDACTED:" in text, name
    zh = api.report(
        out / "case", "md", tmp_path / "zh", api.AnalyzeSettings(template="modelarts-zh")
    )
    assert _leaks(zh.read_text(encoding="utf-8")) == []
    archive = tmp_path / "handoff.tar.zst"
    api.handoff([bundle], archive)
    with archive.open("rb") as raw:
        data = zstandard.ZstdDecompressor().stream_reader(raw).read()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as members:
        for info in members:
            handle = members.extractfile(info)
            assert handle is not None
            content = handle.read()
            if info.name.endswith(".parquet"):
                text = pl.read_parquet(io.BytesIO(content)).write_csv()
            else:
                text = content.decode("utf-8")
            assert _leaks(text) == [], info.name


def test_without_redaction_every_format_quotes_them(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "raw"
    api.analyze([bundle], out, api.AnalyzeSettings(jobs=1, html=True, redact=False))
    for name in ("report.md", "findings.json"):
        assert {"ipv4", "email"} <= set(_leaks((out / name).read_text(encoding="utf-8"))), name
    # The page also quotes the lines around the first error: every planted kind.
    assert set(_leaks((out / "report.html").read_text(encoding="utf-8"))) == set(PLANTED)
