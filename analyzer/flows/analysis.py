"""Analysis: ingest (or reuse) a case, match the catalogue (unless already matched with it),
diagnose, and write the reports; or diagnose and render a case already matched."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from analyzer import __version__
from analyzer.case import space
from analyzer.case.layout import MATCHES_FILE, meta_path
from analyzer.case.lock import case_lock
from analyzer.case.store import Case
from analyzer.case.writer import check_replaceable
from analyzer.diagnose.findings import Findings
from analyzer.engine import engine_named
from analyzer.engine.remote import is_url
from analyzer.errors import CaseError, DiskSpaceError, HandoffError, UsageError
from analyzer.flows.cases import ingest_job, ingest_with, load_case
from analyzer.flows.results import AnalyzeResult, write_text
from analyzer.flows.settings import AnalyzeSettings
from analyzer.ingest.pipeline.progress import Progress
from analyzer.provenance.archive import is_handoff
from analyzer.report import timeline
from analyzer.report.registry import (
    FINDINGS_FILE,
    HTML_FILE,
    REPORT_FILE,
    REPORT_FORMATS,
    renderer,
)
from analyzer.report.timeline import TIMELINE_FILE
from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.matching import catalogue_digest, matches_meta
from analyzer.streams import ExpansionBudget

if TYPE_CHECKING:
    from analyzer.diagnose.host_errors import HostErrors
    from analyzer.redact import Redactor

#: Where ``analyze`` puts the case of a bundle, under its output directory.
CASE_SUBDIR: Final = "case"


def is_case(path: Path) -> bool:
    return path.is_dir() and meta_path(path).is_file()


def _baseline(settings: AnalyzeSettings) -> frozenset[str]:
    """The template texts of the baseline case of ``settings`` (none without one)."""
    if settings.baseline is None:
        return frozenset()
    from analyzer.diagnose.patterns import baseline_templates

    path = settings.baseline
    if not is_case(path) and is_case(path / CASE_SUBDIR):
        path = path / CASE_SUBDIR
    if not is_case(path):
        raise UsageError(
            f"--baseline {path}: not a case (nor an analysis output with case/)", path=str(path)
        )
    return baseline_templates(load_case(path))


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
    from analyzer.diagnose.evidence import load as load_evidence
    from analyzer.diagnose.patterns import make_patterns
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
    handoff = _handoff_input(paths, settings)
    if handoff is not None:
        from analyzer.flows.received import analyze_handoff

        if out is None:
            raise UsageError("a handoff needs -o DIR (it is unpacked and re-diagnosed there)")
        return analyze_handoff(handoff, Path(out), settings)
    catalogue = load_catalogue(list(settings.signatures), builtin=settings.builtin_signatures)
    lock: AbstractContextManager[None]
    from_bundle = not (first is not None and is_case(first))
    if first is not None and not from_bundle:
        case_dir = first
        report_dir = Path(out) if out is not None else case_dir
        lock = contextlib.nullcontext()
    elif out is None:
        raise UsageError("a bundle needs -o DIR (the case goes to DIR/case, reports to DIR)")
    else:
        report_dir = Path(out)
        case_dir = report_dir / CASE_SUBDIR
        # The case is written into OUT: one process at a time, from the ingest to the last
        # report (the lock `culprit ingest` takes).
        check_replaceable(case_dir)
        lock = case_lock(case_dir, wait_s=settings.wait_s)
    with lock:
        ingested = False
        with runner.session():
            if from_bundle:
                job, identity = ingest_job(
                    paths, settings.read, settings.limits, None, settings.scratch
                )
                result = ingest_with(
                    runner,
                    job,
                    identity,
                    case_dir,
                    force=False,
                    progress=progress,
                    jobs=settings.jobs,
                    space_check=settings.space_check,
                )
                ingested = not result.reused
            opened = load_case(case_dir)
            matched = needs_matching(opened, catalogue)
            if matched:
                runner.match(opened, catalogue, chosen)
        # The log templates, before the evidence and every row's activity are in memory: the
        # analysis then peaks at the larger of the two, not at their sum (at 4,096 hosts,
        # 3.4 GB when the diagnosis made them).
        make_patterns(opened)
        # Read once for the diagnosis, the redaction and the pictures (a scan of every row
        # file).
        data = load_evidence(opened, catalogue)
        quote = _quote(settings, opened, data.host_names)
        findings = diagnose(
            opened,
            catalogue,
            Settings(skew_s=settings.skew_s, silence_s=settings.silence_s),
            redact=quote,
            baseline=_baseline(settings),
            data=data,
        )
        findings_path = report_dir / FINDINGS_FILE
        report_path = report_dir / REPORT_FILE
        try:
            report_dir.mkdir(parents=True, exist_ok=True)
            write_text(findings_path, findings.model_dump_json(indent=2) + "\n")
            write_text(report_path, render(findings))
            write_text(
                report_dir / TIMELINE_FILE,
                timeline.picture(opened, findings, catalogue, redact=quote, data=data),
            )
            if settings.html:
                from analyzer.report import html as html_report

                write_text(
                    report_dir / HTML_FILE,
                    html_report.render(opened, findings, catalogue, redact=quote, data=data),
                )
        except OSError as exc:
            raise _unwritable(exc, "cannot write the reports", report_dir) from None
        return AnalyzeResult(case_dir, findings_path, report_path, findings, ingested, matched)


def _unwritable(exc: OSError, what: str, where: Path) -> CaseError:
    if space.is_disk_full(exc):
        return DiskSpaceError(f"no space left on device; {what}", path=str(where))
    return CaseError(f"{what}: {exc}", path=str(where))


def _handoff_input(paths: Sequence[str | Path], settings: AnalyzeSettings) -> Path | None:
    """The input that is a handoff (recognized by content, whatever its name), if any.

    Raises:
        HandoffError: a handoff among other inputs.
        UsageError: ``--trusted-key`` or ``--sha256`` without a handoff to check.
    """
    limits = settings.limits
    budget = ExpansionBudget(limits.max_ratio, limits.floor_bytes, limits.max_total_bytes)
    found = [p for p in paths if isinstance(p, Path) and is_handoff(p, budget)]
    if found and len(paths) > 1:
        raise HandoffError(
            "a handoff is analyzed alone (it holds MANIFEST.json), not with other inputs",
            path=str(found[0]),
        )
    if not found and (settings.trusted_keys or settings.handoff_sha256 is not None):
        raise UsageError(
            "--trusted-key and --sha256 check a handoff, and no input holds a MANIFEST.json"
        )
    return found[0] if found else None


def _quote(settings: AnalyzeSettings, case: Case, hosts: Iterable[str] | None = None) -> Redactor:
    """The redaction of ``case``'s outputs, or none (``--no-redact``); ``hosts``: the case's
    host names when already read."""
    from analyzer.redact.case import for_case

    return for_case(case, enabled=settings.redact, hosts=hosts)


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
    from analyzer.diagnose.patterns import make_patterns
    from analyzer.diagnose.run import Settings, diagnose

    opened = load_case(case)
    catalogue = load_catalogue(list(settings.signatures), builtin=settings.builtin_signatures)
    if needs_matching(opened, catalogue):
        raise CaseError(
            "the case is not matched with this catalogue; run `culprit match`", path=str(case)
        )
    make_patterns(opened)  # before the rows are read, as in analyze()
    quote = _quote(settings, opened)
    findings = diagnose(
        opened,
        catalogue,
        Settings(skew_s=settings.skew_s, silence_s=settings.silence_s),
        redact=quote,
        baseline=_baseline(settings),
    )
    return opened, catalogue, findings, quote


def host_errors(case: str | Path, settings: AnalyzeSettings | None = None) -> HostErrors:
    """Every host's error rows and first errors as the diagnosis reads them (the rule of
    :mod:`analyzer.diagnose.host_errors`), without writing anything.

    Raises:
        CaseError: not a case, or the case has not been matched with this catalogue.
    """
    from analyzer.diagnose.host_errors import host_errors as read_host_errors
    from analyzer.diagnose.run import Settings

    settings = settings or AnalyzeSettings()
    opened = load_case(case)
    catalogue = load_catalogue(list(settings.signatures))
    if needs_matching(opened, catalogue):
        raise CaseError(
            "the case is not matched with this catalogue; run `culprit match`", path=str(case)
        )
    return read_host_errors(
        opened, catalogue, Settings(skew_s=settings.skew_s, silence_s=settings.silence_s)
    )


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
    picture: str | None = None
    if format == "html":
        text, name = report_html(case, settings), HTML_FILE
    elif format == "json":
        text, name = diagnose_case(case, settings).model_dump_json(indent=2) + "\n", FINDINGS_FILE
    else:
        opened, catalogue, findings, quote = _diagnosed(case, settings)
        text, name = render(findings), REPORT_FILE
        picture = timeline.picture(opened, findings, catalogue, redact=quote)
    try:
        target.mkdir(parents=True, exist_ok=True)
        write_text(target / name, text)
        if picture is not None:
            write_text(target / TIMELINE_FILE, picture)
    except OSError as exc:
        raise _unwritable(exc, "cannot write the report", target) from None
    return target / name


def findings_schema() -> dict[str, Any]:
    """The JSON Schema of ``findings.json``."""
    return Findings.model_json_schema()
