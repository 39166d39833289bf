"""``culprit analyze`` (the whole chain: ingest, match, diagnose, reports) and ``culprit
report`` (one report of a case already matched)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from analyzer import defaults
from analyzer.cli import options
from analyzer.cli.progress import ProgressBar
from analyzer.cli.render import console, print_lines

if TYPE_CHECKING:
    from analyzer.api import AnalyzeResult, HandoffCheck


def analyze(
    bundle: Annotated[
        list[str],
        typer.Argument(
            help="A case directory, a handoff archive, or a bundle (directories, archives, "
            "files; paths or URLs)."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Output directory: the case in OUT/case, report.md and findings.json in OUT "
            "(a case's reports default to the case directory).",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print findings.json to stdout instead of the verdict.")
    ] = False,
    template: options.Template = defaults.TEMPLATE,
    no_redact: options.NoRedact = False,
    skew: options.Skew = defaults.SKEW_S,
    silence: options.Silence = defaults.SILENCE_S,
    backend: options.Backend = defaults.BACKEND,
    signatures: options.ExtraSignatures = None,
    no_builtin_signatures: Annotated[
        bool,
        typer.Option(
            "--no-builtin-signatures",
            help="Leave the packaged catalogue out (only --signatures folders): the verdict "
            "rests on the template rules (leads, outlier hosts, phase), as for a failure no "
            "signature knows.",
        ),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            help="A case (or analysis output) of a healthy run of the same job: no template "
            "it logged becomes a lead."
        ),
    ] = None,
    jobs: options.ReadJobs = None,
    engine: options.Engine = defaults.ENGINE,
    address: Annotated[
        str | None,
        typer.Option(help="Ray cluster to join (default: start a local Ray instance)."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="CPUs of the local Ray instance (default: all).")
    ] = None,
    shards: Annotated[
        int | None,
        typer.Option(help="Pieces the work is cut into under Ray (default: one per CPU)."),
    ] = None,
    html: Annotated[
        bool,
        typer.Option(
            "--html", help="Also write report.html (self-contained: opens with no network)."
        ),
    ] = False,
    scratch: options.Scratch = None,
    wait: options.Wait = defaults.LOCK_WAIT_S,
    space_check: options.SpaceCheck = defaults.SPACE_CHECK,
    quiet: options.Quiet = False,
    trusted_key: options.TrustedKeys = None,
    sha256: options.HandoffSha256 = None,
) -> None:
    """Ingest (or reuse) a case, match, diagnose; write report.md and findings.json and print
    the verdict. A handoff (any archive holding MANIFEST.json) is verified first, then
    re-diagnosed and compared with the findings packed in it.

    Example: culprit analyze incident.tar.zst -o /tmp/incident
    """
    from analyzer import api

    # findings.json on stdout is for a program: no bar on stderr either.
    with ProgressBar(enabled=not quiet and not json_out) as progress:
        result = api.analyze(
            bundle,
            out,
            api.settings(
                signatures=tuple(signatures or ()),
                builtin_signatures=not no_builtin_signatures,
                baseline=baseline,
                backend=backend,
                redact=not no_redact,
                template=template,
                skew_s=skew,
                silence_s=silence,
                jobs=jobs,
                engine=engine,
                address=address,
                workers=workers,
                shards=shards,
                html=html,
                trusted_keys=tuple(trusted_key or ()),
                handoff_sha256=sha256,
                scratch=scratch,
                wait_s=wait,
                space_check=space_check,
            ),
            progress=progress,
        )
    if json_out:
        sys.stdout.write(result.findings.model_dump_json(indent=2) + "\n")
    else:
        _print_verdict(result, html=html)
    if result.handoff is not None:
        _print_handoff(result.handoff, stderr=json_out)


def report(
    case: Annotated[Path, typer.Argument(help="A matched case directory.")],
    format_: options.ReportFormat = defaults.REPORT_FORMAT,
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Directory to write into (default: the case)."),
    ] = None,
    template: options.MarkdownTemplate = defaults.TEMPLATE,
    no_redact: options.NoRedact = False,
    signatures: options.ExtraSignatures = None,
) -> None:
    """Write one report of a matched case without re-running anything else.

    Example: culprit report /tmp/incident/case --format html -o /tmp/incident
    """
    from analyzer import api

    written = api.report(
        case,
        format_,
        out,
        api.settings(signatures=tuple(signatures or ()), redact=not no_redact, template=template),
    )
    console().print(f"wrote {written}", markup=False)


def _print_handoff(check: HandoffCheck, *, stderr: bool) -> None:
    """What the handoff's verification proved, and whether the re-diagnosis agrees with the
    packed findings (stderr when stdout carries findings.json)."""
    screen = console(stderr=stderr)
    screen.print(f"Handoff: {check.verification.summary()}", markup=False)
    for note in check.notes:
        screen.print(f"note: {note}", markup=False)
    if check.differences:
        screen.print(
            "warning: the re-diagnosis differs from the packed findings.json (the handoff was "
            "edited, or does not reproduce):",
            style="yellow",
            markup=False,
        )
        for line in check.differences:
            screen.print(f"  {line}", style="yellow", markup=False)


def _print_verdict(result: AnalyzeResult, *, html: bool) -> None:
    """The verdict as plain text (the report's Markdown emphasis dropped), then where the
    first error and the reports are."""
    from analyzer import api
    from analyzer.report.markdown import verdict_lines

    verdict = result.findings.verdict
    lines = [line.replace("**", "") for line in verdict_lines(verdict)]
    if verdict.first_error is not None:
        cited = verdict.first_error.citation
        lines.append(f"First error: {cited.path}:{cited.line}")
    attempts = len(result.findings.attempts)
    lines.append(
        f"{attempts} attempt(s); report: {result.report_path}; findings: {result.findings_path}"
    )
    if html:
        lines.append(f"HTML report: {result.report_path.with_name(api.HTML_FILE)}")
    print_lines(lines)
