"""The names inside a handoff archive (``culprit-handoff/1``)."""

from __future__ import annotations

from typing import Final

from analyzer.case.layout import (
    DUPLICATES_FILE,
    FILES_FILE,
    HOSTS_FILE,
    MATCHES_FILE,
    META_FILE,
    QUARANTINE_FILE,
    ROWS_DIR,
)

FORMAT: Final = "culprit-handoff/1"
MANIFEST: Final = "MANIFEST.json"
#: The detached Ed25519 signature over the exact bytes of MANIFEST.json (``--sign``).
SIGNATURE: Final = "MANIFEST.sig"
REPORT: Final = "report.md"
#: The host × time picture report.md links (packed since it exists; older handoffs lack it).
TIMELINE: Final = "timeline.svg"
FINDINGS: Final = "findings.json"
ATTEMPTS: Final = "attempts.json"
CASE_DIR: Final = "case"
SIGNATURES_DIR: Final = "signatures"
EVIDENCE_FILE: Final = "evidence.parquet"
EVIDENCE: Final = f"{CASE_DIR}/{ROWS_DIR}/{EVIDENCE_FILE}"
MATCHES: Final = f"{CASE_DIR}/{MATCHES_FILE}"
CASE_META: Final = f"{CASE_DIR}/{META_FILE}"
HOSTS: Final = f"{CASE_DIR}/{HOSTS_FILE}"
FILES: Final = f"{CASE_DIR}/{FILES_FILE}"
QUARANTINE: Final = f"{CASE_DIR}/{QUARANTINE_FILE}"
DUPLICATES: Final = f"{CASE_DIR}/{DUPLICATES_FILE}"
#: Every member a handoff holds besides the signature folders (the manifest lists them all).
REQUIRED: Final = (
    REPORT,
    FINDINGS,
    ATTEMPTS,
    EVIDENCE,
    MATCHES,
    CASE_META,
    HOSTS,
    FILES,
    QUARANTINE,
    DUPLICATES,
)
#: Members a handoff may hold besides those (listed and checked when present).
OPTIONAL: Final = (TIMELINE,)
#: Members outside the manifest's list: the manifest itself and its signature.
UNLISTED: Final = (MANIFEST, SIGNATURE)
