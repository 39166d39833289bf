"""What the commands print is redacted before it is written: tokens and keys go, addresses
and e-mails (how hosts and people are told apart) stay, and JSON stays JSON."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.collect.redaction import output_redactor, redact_file

TOKEN = "ya29.a0AfH6SMBx3kQ9vV2mLpZr8TnWcYd5EfGhJk1234567890abcdefghij"


def test_json_stays_valid_and_only_secrets_go(tmp_path: Path) -> None:
    entry = {
        "textPayload": f'curl -H "Authorization: Bearer {TOKEN}" https://10.0.0.3/ by ops@example.com',
        "jsonPayload": {"MESSAGE": "step 12 done on 10.0.0.4"},
    }
    source = tmp_path / "in.json"
    source.write_text(json.dumps([entry], indent=2) + "\n")

    size, _digest, changed = redact_file(source, tmp_path / "out.json", output_redactor())

    text = (tmp_path / "out.json").read_text()
    assert changed == 1 and size == len(text.encode())
    parsed = json.loads(text)[0]
    assert TOKEN not in text
    assert "[REDACTED:gcp-oauth-token]" in parsed["textPayload"]
    assert "10.0.0.3" in parsed["textPayload"] and "ops@example.com" in parsed["textPayload"]
    assert parsed["jsonPayload"] == entry["jsonPayload"]


def test_bytes_that_are_not_utf8_are_kept(tmp_path: Path) -> None:
    source = tmp_path / "in.log"
    source.write_bytes(
        b"\xff\xfe broken\n" + f"token={TOKEN}\n".encode() + b"no newline at the end"
    )

    redact_file(source, tmp_path / "out.log", output_redactor())

    data = (tmp_path / "out.log").read_bytes()
    assert data.startswith(b"\xff\xfe broken\n") and data.endswith(b"no newline at the end")
    assert TOKEN.encode() not in data


def test_no_redact_copies_the_bytes(tmp_path: Path) -> None:
    source = tmp_path / "in.log"
    source.write_text(f"token={TOKEN}\n")
    redact_file(source, tmp_path / "out.log", output_redactor(enabled=False))
    assert (tmp_path / "out.log").read_bytes() == source.read_bytes()
