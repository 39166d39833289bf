"""The redaction corpus through every path: each fake secret is replaced by exactly its
kind's marker, each look-alike comes out untouched, and the column paths (row messages,
signature captures) agree with the text path."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from analyzer.redact import VERBATIM, Redactor, marker
from analyzer.redact.engine import DETECTORS
from analyzer.redact.kinds import BY_NAME, KINDS
from tests.redact.corpus import LOOKALIKES, SECRETS, LookAlike, Secret

REDACT = Redactor()


def test_the_corpus_has_fifty_formats_of_each() -> None:
    assert len({s.format for s in SECRETS}) == len(SECRETS) >= 50
    assert len({a.what for a in LOOKALIKES}) == len(LOOKALIKES) >= 50
    assert all(s.secret in s.line for s in SECRETS)


@pytest.mark.parametrize("secret", SECRETS, ids=[s.format for s in SECRETS])
def test_a_secret_becomes_its_kind_and_nothing_else_changes(secret: Secret) -> None:
    line, value, kind = secret.line, secret.secret, secret.kind
    out = REDACT(line)
    assert value not in out
    assert marker(kind) in out
    # The secret, and only the secret, is what its marker replaced: redacting the line with
    # the marker already in place gives the same text.
    assert REDACT(line.replace(value, marker(kind))) == out


@pytest.mark.parametrize("lookalike", LOOKALIKES, ids=[a.what for a in LOOKALIKES])
def test_a_lookalike_stays_verbatim(lookalike: LookAlike) -> None:
    assert REDACT(lookalike.line) == lookalike.line


def _lines() -> list[str]:
    return [s.line for s in SECRETS] + [a.line for a in LOOKALIKES]


def test_a_column_is_redacted_as_its_texts_are() -> None:
    lines = _lines()
    column = pl.Series("message", lines * 3, dtype=pl.String)
    assert REDACT.series(column).to_list() == [REDACT(t) for t in lines * 3]
    # Every secret passes the prefilter (else the column path would skip it).
    assert pl.Series([s.line for s in SECRETS]).str.contains(REDACT.prefilter).all()


def test_captures_are_redacted_value_by_value_and_stay_json() -> None:
    lines = _lines()
    captures = pl.Series(
        [
            json.dumps({"detail": t, "n": "7"}, ensure_ascii=False, separators=(",", ":"))
            for t in lines
        ]
    )
    got = [json.loads(text) for text in REDACT.captures(captures).to_list()]
    assert got == [{"detail": REDACT(t), "n": "7"} for t in lines]


def test_a_pem_block_split_into_rows_is_redacted_row_by_row() -> None:
    body = [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
        "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
        "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
        "Gk2FWmEIfY3zc+8Qx=",
    ]
    rows = ["-----BEGIN PRIVATE KEY-----", *body, "-----END PRIVATE KEY-----"]
    out = REDACT.series(pl.Series(rows)).to_list()
    assert out[1:-1] == [marker("key-material")] * len(body)
    assert (out[0], out[-1]) == (rows[0], rows[-1])


def test_the_case_host_names_are_kept() -> None:
    keeping = Redactor(keep={"172.16.135.5"})
    line = "worker 172.16.135.5 lost 172.16.135.9"
    assert keeping(line) == f"worker 172.16.135.5 lost {marker('ip')}"
    assert REDACT(line) == f"worker {marker('ip')} lost {marker('ip')}"


def test_no_redaction_changes_nothing() -> None:
    lines = _lines()
    assert [VERBATIM(t) for t in lines] == lines
    assert VERBATIM.series(pl.Series(lines)).to_list() == lines


def test_every_kind_is_in_the_table_and_every_row_of_it_is_named() -> None:
    named = {kind for detector in DETECTORS for kind in detector.kinds}
    assert named == set(BY_NAME)
    assert len(BY_NAME) == len(KINDS)
    assert {s.kind for s in SECRETS} <= set(BY_NAME)


def test_the_docs_list_every_kind() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "redaction.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1] for line in docs.splitlines() if line.startswith("| `")}
    assert rows == set(BY_NAME)
