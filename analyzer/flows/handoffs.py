"""Handoffs: pack an analysis into a redacted, checksummed archive that another machine can
verify and re-diagnose; verify one; analyze one."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer import defaults
from analyzer import handoff as handoff_mod
from analyzer.diagnose.findings import Findings
from analyzer.errors import UsageError
from analyzer.flows.analysis import analyze, reanalyze
from analyzer.flows.cases import load_case
from analyzer.flows.settings import AnalyzeSettings
from analyzer.signatures.catalog import load as load_catalogue


@dataclass(frozen=True)
class HandoffResult:
    """What :func:`handoff` wrote."""

    path: Path
    case_id: str
    members: int
    bytes: int
    rows: int
    findings: Findings
    #: Whether re-diagnosing the packed evidence gave the same verdicts (checked on creation).
    reproduces: bool


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


def handoff(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    case_id: str | None = None,
    context: int = defaults.HANDOFF_CONTEXT,
    settings: AnalyzeSettings | None = None,
) -> HandoffResult:
    """Analyze a case (or a bundle, ingested into a scratch directory) and pack the handoff
    archive ``out`` (``.tar.zst``): redacted report and findings, the rows behind them, the
    host map, the attempts, extra signature folders and a manifest of sha256s. Of
    ``settings`` the signature folders, skew and silence apply (a handoff is always redacted).

    Raises:
        UsageError: ``out`` does not end in .tar.zst, or ``context`` is negative.
        BundleError, CaseError, SignatureError: as for :func:`analyze`.
    """
    from analyzer.diagnose import attempts as attempts_mod
    from analyzer.diagnose.evidence import load as load_evidence
    from analyzer.report.redact import redact

    given = settings or AnalyzeSettings()
    target = Path(out)
    if not target.name.endswith(".tar.zst"):
        raise UsageError("the handoff file name must end in .tar.zst", path=str(target))
    if context < 0:
        raise UsageError("--context must be >= 0")
    folders = list(given.signatures)
    chosen = AnalyzeSettings(
        signatures=given.signatures, skew_s=given.skew_s, silence_s=given.silence_s
    )
    with handoff_mod.scratch() as scratch:
        result = analyze(inputs, Path(scratch) / "out", chosen)
        opened = load_case(result.case)
        catalogue = load_catalogue(folders)
        activity = load_evidence(opened, catalogue).activity()
        attempts = attempts_mod.split(activity, silence_s=chosen.silence_s)
        chosen_id = case_id or result.findings.bundle.id[:12]
        archive, manifest, ids = handoff_mod.build(
            opened,
            result.findings,
            result.report_path.read_text(encoding="utf-8"),
            attempts,
            redact=redact,
            case_id=chosen_id,
            signature_folders=folders,
            context=context,
        )
        members = handoff_mod.parse(archive, str(target))[1]
        again = reanalyze(members, Path(scratch) / "check", chosen.skew_s, chosen.silence_s)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_bytes(target, archive)
    except OSError as exc:
        raise UsageError(f"cannot write the handoff: {exc}", path=str(target)) from None
    return HandoffResult(
        path=target,
        case_id=chosen_id,
        members=len(manifest.members) + 1,
        bytes=len(archive),
        rows=len(ids),
        findings=result.findings,
        reproduces=verdict_key(again) == verdict_key(result.findings),
    )


def _write_bytes(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.partial")
    temporary.write_bytes(data)
    temporary.replace(path)


def verify_handoff(path: str | Path) -> dict[str, Any]:
    """Check a handoff archive against its manifest; return the manifest.

    Raises:
        HandoffError: damaged, tampered with, or not a handoff.
    """
    manifest, _ = handoff_mod.read(Path(path))
    return dataclasses.asdict(manifest)
