"""How a handoff's re-diagnosis differs from the findings packed in it, attempt by attempt,
in words a reader can act on."""

from __future__ import annotations

from analyzer.diagnose.findings import Findings, Verdict


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
