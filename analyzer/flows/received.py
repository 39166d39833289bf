"""A handoff received: verify it before anything else, unpack it, re-diagnose its evidence with
its own signature folders and attempts, compare the verdict with the packed findings, and
write the reports with a closing "Handoff" section."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from analyzer import defaults
from analyzer import handoff as handoff_mod
from analyzer.diagnose.findings import Findings
from analyzer.flows.cases import load_case
from analyzer.flows.results import AnalyzeResult, write_text
from analyzer.flows.settings import AnalyzeSettings
from analyzer.provenance.compare import HandoffCheck, differences
from analyzer.provenance.layout import CASE_DIR, TIMELINE
from analyzer.provenance.verify import Trust, Verification, verify_path
from analyzer.report.registry import FINDINGS_FILE, REPORT_FILE, renderer
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.matching import catalogue_digest

#: What ``analyze`` of a handoff writes beside the reports: the verification, as JSON.
CHECK_FILE: Final = "handoff.json"
#: Where ``analyze`` of a handoff unpacks it, under its output directory.
UNPACKED_SUBDIR: Final = "handoff"


def analyze_handoff(path: Path, out: Path, settings: AnalyzeSettings) -> AnalyzeResult:
    """Verify a handoff (with ``settings.trusted_keys`` and ``settings.handoff_sha256``),
    unpack it under ``OUT/handoff``, re-diagnose its evidence and compare the verdict with
    the packed findings; write the reports (a "Handoff" section at the end of report.md says
    what was verified and whether the verdicts agree) and ``handoff.json``.

    Raises:
        HandoffError: as for :func:`verify_handoff`.
        CaseError: the reports cannot be written.
    """
    render = renderer(settings.template)
    check = verify_path(path, Trust(settings.trusted_keys, settings.handoff_sha256))
    packed = check.contents.findings
    findings = reanalyze(
        check.members,
        out / UNPACKED_SUBDIR,
        float(packed.settings.get("skew_s", defaults.SKEW_S)),
        float(packed.settings.get("silence_s", defaults.SILENCE_S)),
        check.manifest.signature_folders,
    )
    result = HandoffCheck(check, differences(packed, findings), _notes(check, out))
    out.mkdir(parents=True, exist_ok=True)
    findings_path, report_path = out / FINDINGS_FILE, out / REPORT_FILE
    write_text(findings_path, findings.model_dump_json(indent=2) + "\n")
    write_text(report_path, render(findings).rstrip("\n") + "\n\n" + _section(result))
    write_text(out / CHECK_FILE, json.dumps(result.as_json(), indent=2) + "\n")
    if TIMELINE in check.members:
        # The sender's picture of the whole case (the mini-case holds only the cited rows),
        # so the report's link to it works; it was checked to be inert SVG.
        write_text(out / TIMELINE, check.members[TIMELINE].decode("utf-8"))
    return AnalyzeResult(
        out / UNPACKED_SUBDIR / CASE_DIR,
        findings_path,
        report_path,
        findings,
        False,
        False,
        handoff=result,
    )


def _notes(check: Verification, out: Path) -> list[str]:
    from analyzer import __version__

    notes = [f"the archive was repacked: {note}" for note in check.repacked]
    manifest = check.manifest
    if manifest.tool_version != __version__:
        notes.append(f"packed by culprit {manifest.tool_version}; this is culprit {__version__}")
    folders = [out / UNPACKED_SUBDIR / f for f in manifest.signature_folders]
    if catalogue_digest(load_catalogue(folders)) != manifest.catalogue_digest:
        notes.append(
            "the signature catalogue here differs from the one that made the packed matches"
        )
    return notes


def _section(check: HandoffCheck) -> str:
    """The report's closing section: what the verification proved, and the comparison."""
    summary = check.verification.summary()
    lines = ["## Handoff", "", summary[0].upper() + summary[1:] + "."]
    if check.verification.sha256 is not None:
        lines.append(f"Archive sha256: `{check.verification.sha256}`.")
    if check.differences:
        lines += ["", "**The re-diagnosis differs from the packed findings.json:**", ""]
        lines += [f"- {line}" for line in check.differences]
    else:
        lines += ["", "The re-diagnosis agrees with the packed findings.json."]
    if check.notes:
        lines += ["", *[f"- Note: {note}." for note in check.notes]]
    return "\n".join(lines) + "\n"


def reanalyze(
    members: dict[str, bytes],
    target: Path,
    skew_s: float,
    silence_s: float,
    signature_folders: Sequence[str] = (),
) -> Findings:
    """Diagnose a handoff's verified members, unpacked under ``target``, with its recorded
    attempts and its packed signature folders (in the manifest's order)."""
    from analyzer.diagnose.run import Settings, diagnose
    from analyzer.redact.case import for_case

    handoff_mod.unpack(members, target, signature_folders)
    catalogue = load_catalogue([target / folder for folder in signature_folders])
    case = load_case(target / CASE_DIR)
    return diagnose(
        case,
        catalogue,
        Settings(skew_s=skew_s, silence_s=silence_s),
        redact=for_case(case),
        attempts=handoff_mod.attempts_of(members),
    )
