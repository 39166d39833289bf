"""Analysis: ingest (or reuse) a case, match the catalogue (unless already matched with it),
diagnose, and write the reports; or diagnose and render a case already matched."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from analyzer import __version__, defaults
from analyzer import handoff as handoff_mod
from analyzer.case.layout import MATCHES_FILE, meta_path
from analyzer.case.store import Case
from analyzer.diagnose.findings import Findings
from analyzer.engine import engine_named
from analyzer.engine.remote import is_url
from analyzer.errors import CaseError, UsageError
from analyzer.flows.cases import ingest_job, ingest_with, load_case
from analyzer.flows.settings import AnalyzeSettings
from analyzer.ingest.pipeline.progress import Progress
from analyzer.report.registry import (
    FINDINGS_FILE,
    HTML_FILE,
    REPORT_FILE,
    REPORT_FORMATS,
    renderer,
)
from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.matching import catalogue_digest, matches_meta

#: Where ``analyze`` puts the case of a bundle, under its output directory.
CASE_SUBDIR: Final = "case"


@dataclass(frozen=True)
class AnalyzeResult:
    """What :func:`analyze` wrote and concluded."""

    case: Path
    findings_path: Path
    report_path: Path
    findings: Findings
    ingested: bool
    matched: bool


def is_case(path: Path) -> bool:
    return path.is_dir() and meta_path(path).is_file()


def needs_matching(case: Case, catalogue: Catalogue) -> bool:
    """True unless the case's matches were made with this very catalogue over these rows."""
    path = case.path / MATCHES_FILE
    if not path.exists():
        return True
    meta = matches_meta(path)
    return (
        meta.get("catalogue_digest") != catalogue_digest(catalogue)
        or meta.get("rows_scanned") != case.meta.counts.rows
        or meta.get("tool_version") != __version__
    )


def analyze(
    inputs: Sequence[str | Path],
    out: str | Path | None = None,
    settings: AnalyzeSettings | None = None,
    *,
    progress: Progress | None = None,
) -> AnalyzeResult:
    """Ingest (or reuse) a case, match the catalogue (unless already matched with it),
    diagnose, and write ``findings.json`` and ``report.md`` (and ``report.html`` when
    ``settings.html``).

    Args:
        inputs: one case directory, a handoff archive, or the bundle's inputs (directories,
            archives, files; local paths or URLs).
        out: where everything goes: a bundle's case in ``OUT/case``, the reports in ``OUT``.
            Without it, a case's reports go into the case directory, and a bundle needs it.
        settings: how the analysis runs (:class:`AnalyzeSettings`; its defaults otherwise).
        progress: receives ingest progress reports.

    Raises:
        UsageError: unknown template, backend or engine, or a bundle without ``out``.
        BundleError, CaseError, SignatureError: the bundle, the case or a signature folder.
    """
    from analyzer.diagnose.run import Settings, diagnose
    from analyzer.signatures.backends import backend_named

    settings = settings or AnalyzeSettings()
    render = renderer(settings.template)
    chosen = backend_named(settings.backend)
    runner = engine_named(
        settings.engine, address=settings.address, workers=settings.workers, shards=settings.shards
    )
    # URLs stay text: Path() would fold the "//" of gs://bucket.
    paths = [p if isinstance(p, Path) or is_url(p) else Path(p) for p in inputs]
    first = paths[0] if len(paths) == 1 and isinstance(paths[0], Path) else None
    if first is not None and handoff_mod.is_handoff(first):
        if out is None:
            raise UsageError("a handoff needs -o DIR (it is unpacked and re-diagnosed there)")
        return analyze_handoff(first, Path(out), settings.template)
    ingested = False
    catalogue = load_catalogue(list(settings.signatures))
    with runner.session():
        if first is not None and is_case(first):
            case_dir = first
            report_dir = Path(out) if out is not None else case_dir
        else:
            if out is None:
                raise UsageError(
                    "a bundle needs -o DIR (the case goes to DIR/case, reports to DIR)"
                )
            report_dir = Path(out)
            case_dir = report_dir / CASE_SUBDIR
            job, identity = ingest_job(paths, settings.read, settings.limits, None)
            result = ingest_with(
                runner,
                job,
                identity,
                case_dir,
                force=False,
                progress=progress,
                jobs=settings.jobs,
            )
            ingested = not result.reused
        opened = load_case(case_dir)
        matched = needs_matching(opened, catalogue)
        if matched:
            runner.match(opened, catalogue, chosen)
    quote = _quote(settings)
    findings = diagnose(
        opened,
        catalogue,
        Settings(skew_s=settings.skew_s, silence_s=settings.silence_s),
        redact=quote,
    )
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        findings_path = report_dir / FINDINGS_FILE
        report_path = report_dir / REPORT_FILE
        write_text(findings_path, findings.model_dump_json(indent=2) + "\n")
        write_text(report_path, render(findings))
        if settings.html:
            from analyzer.report import html as html_report

            write_text(
                report_dir / HTML_FILE,
                html_report.render(opened, findings, catalogue, redact=quote),
            )
    except OSError as exc:
        raise CaseError(f"cannot write the reports: {exc}", path=str(report_dir)) from None
    return AnalyzeResult(case_dir, findings_path, report_path, findings, ingested, matched)


def write_text(path: Path, text: str) -> None:
    """Write atomically (a reader never sees half a report)."""
    temporary = path.with_name(f".{path.name}.partial")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def _quote(settings: AnalyzeSettings) -> Callable[[str], str]:
    from analyzer.report.redact import keep, redact

    return redact if settings.redact else keep


def diagnose_case(case: str | Path, settings: AnalyzeSettings | None = None) -> Findings:
    """The findings of an already matched case, without writing anything.

    Raises:
        CaseError: not a case, or the case has not been matched with this catalogue.
    """
    return _diagnosed(case, settings or AnalyzeSettings())[2]


def _diagnosed(
    case: str | Path, settings: AnalyzeSettings
) -> tuple[Case, Catalogue, Findings, Callable[[str], str]]:
    """The opened case, its catalogue, its findings and the redaction they were made with."""
    from analyzer.diagnose.run import Settings, diagnose

    opened = load_case(case)
    catalogue = load_catalogue(list(settings.signatures))
    if needs_matching(opened, catalogue):
        raise CaseError(
            "the case is not matched with this catalogue; run `culprit match`", path=str(case)
        )
    quote = _quote(settings)
    findings = diagnose(
        opened,
        catalogue,
        Settings(skew_s=settings.skew_s, silence_s=settings.silence_s),
        redact=quote,
    )
    return opened, catalogue, findings, quote


def report_html(case: str | Path, settings: AnalyzeSettings | None = None) -> str:
    """The self-contained HTML report of an already matched case (nothing is written).

    Raises:
        CaseError: not a case, or not matched with this catalogue.
    """
    from analyzer.report import html

    opened, catalogue, findings, quote = _diagnosed(case, settings or AnalyzeSettings())
    return html.render(opened, findings, catalogue, redact=quote)


def report(
    case: str | Path,
    format: str = "md",
    out: str | Path | None = None,
    settings: AnalyzeSettings | None = None,
) -> Path:
    """Write one report of an already matched case into ``out`` (default: the case
    directory): ``report.md`` (in ``settings.template``), ``report.html`` or
    ``findings.json``; the file written.

    Raises:
        UsageError: unknown format or template.
        CaseError: not a case, not matched with this catalogue, or the report cannot be
            written.
    """
    settings = settings or AnalyzeSettings()
    if format not in REPORT_FORMATS:
        raise UsageError(f"unknown format {format!r}; known: {', '.join(REPORT_FORMATS)}")
    render = renderer(settings.template)
    target = Path(out) if out is not None else Path(case)
    if format == "html":
        text, name = report_html(case, settings), HTML_FILE
    else:
        findings = diagnose_case(case, settings)
        if format == "json":
            text, name = findings.model_dump_json(indent=2) + "\n", FINDINGS_FILE
        else:
            text, name = render(findings), REPORT_FILE
    try:
        target.mkdir(parents=True, exist_ok=True)
        write_text(target / name, text)
    except OSError as exc:
        raise CaseError(f"cannot write the report: {exc}", path=str(target)) from None
    return target / name


def findings_schema() -> dict[str, Any]:
    """The JSON Schema of ``findings.json``."""
    return Findings.model_json_schema()


# -- handoffs, re-diagnosed on the receiving machine ----------------------------------------


def reanalyze(members: dict[str, bytes], target: Path, skew_s: float, silence_s: float) -> Findings:
    """Diagnose a handoff's mini-case with its recorded attempts and packed signatures."""
    from analyzer.diagnose.run import Settings, diagnose
    from analyzer.report.redact import redact

    handoff_mod.unpack(members, target)
    folders = sorted(p for p in (target / handoff_mod.SIGNATURES_DIR).glob("*") if p.is_dir())
    catalogue = load_catalogue(folders)
    return diagnose(
        load_case(target / handoff_mod.CASE_DIR),
        catalogue,
        Settings(skew_s=skew_s, silence_s=silence_s),
        redact=redact,
        attempts=handoff_mod.attempts_of(members),
    )


def analyze_handoff(path: Path, out: Path, template: str) -> AnalyzeResult:
    """Verify a handoff, unpack it under ``OUT/handoff`` and re-diagnose its evidence."""
    render = renderer(template)
    _, members = handoff_mod.read(path)
    recorded = json.loads(members["findings.json"]).get("settings", {})
    findings = reanalyze(
        members,
        out / "handoff",
        float(recorded.get("skew_s", defaults.SKEW_S)),
        float(recorded.get("silence_s", defaults.SILENCE_S)),
    )
    out.mkdir(parents=True, exist_ok=True)
    findings_path, report_path = out / FINDINGS_FILE, out / REPORT_FILE
    write_text(findings_path, findings.model_dump_json(indent=2) + "\n")
    write_text(report_path, render(findings))
    return AnalyzeResult(
        out / "handoff" / handoff_mod.CASE_DIR, findings_path, report_path, findings, False, False
    )
