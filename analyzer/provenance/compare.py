"""How a handoff's re-diagnosis differs from the findings packed in it, attempt by attempt,
in words a reader can act on."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.diagnose.findings import Findings, Verdict
from analyzer.provenance.verify import Verification


def _first_error(verdict: Verdict) -> str:
    first = verdict.first_error
    if first is None:
        return "none"
    return f"{first.signature} at {first.citation.path}:{first.citation.line}"


def _culprit(verdict: Verdict) -> str:
    culprit = verdict.culprit
    return culprit.kind if culprit.host is None else f"{culprit.kind} {culprit.host}"


#: What two verdicts must agree on, each with how to say it.
_ASPECTS = (
    ("failure mode", lambda v: v.failure_mode),
    ("first error", _first_error),
    ("culprit", _culprit),
    ("confidence", lambda v: v.confidence),
)


def differences(packed: Findings, again: Findings) -> list[str]:
    """One line per attempt and aspect where ``again`` (the re-diagnosis) differs from
    ``packed`` (the handoff's findings.json); empty when they agree."""
    lines = []
    if len(packed.attempts) != len(again.attempts):
        lines.append(
            f"{len(packed.attempts)} attempt(s) packed, {len(again.attempts)} re-diagnosed"
        )
    for old, new in zip(packed.attempts, again.attempts, strict=False):
        for aspect, say in _ASPECTS:
            before, after = say(old), say(new)
            if before != after:
                lines.append(
                    f"attempt {old.attempt}: {aspect} {before} (packed) vs {after} (re-diagnosed)"
                )
    return lines


def verdict_key(findings: Findings) -> list[tuple[object, ...]]:
    """What two analyses must agree on to have the same verdict, attempt by attempt."""
    return [
        (
            v.attempt,
            v.failure_mode,
            None
            if v.first_error is None
            else (v.first_error.citation.path, v.first_error.citation.line),
            v.culprit.kind,
            v.culprit.host,
            v.confidence,
        )
        for v in findings.attempts
    ]


@dataclass(frozen=True)
class HandoffCheck:
    """What ``analyze`` of a handoff established besides the verdict."""

    verification: Verification
    #: How the re-diagnosis differs from the packed findings (empty: it agrees).
    differences: list[str]
    #: Facts that may explain a difference (another catalogue or culprit version here).
    notes: list[str]

    def as_json(self) -> dict[str, object]:
        verified = self.verification
        signer = verified.signer
        return {
            "archive": verified.path,
            "sha256": verified.sha256,
            "compression": verified.compression,
            "repacked": list(verified.repacked),
            "manifest": verified.manifest.model_dump(exclude={"members"}),
            "members": len(verified.manifest.members),
            "signed_by": None if signer is None else signer.fingerprint,
            "trusted": signer is not None and signer.trusted,
            "agrees_with_packed_findings": not self.differences,
            "differences": self.differences,
            "notes": self.notes,
        }
