"""``report.md``: the verdict in three lines, then every row it rests on, quoted verbatim.

The text is a pure function of the findings (no clock, no environment), so the same bundle
gives the same bytes. Messages are already redacted in the findings when redaction is on.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from analyzer import defaults
from analyzer.diagnose.findings import (
    BundleFile,
    Citation,
    EvidenceRow,
    Findings,
    Statement,
    Verdict,
)
from analyzer.report import unknown
from analyzer.report.messages import Language, say

#: Where knowledge pages are linked (relative to the catalogue's knowledge folder).
KNOWLEDGE_LINK = "knowledge/{page}.md"
#: The host × time picture written beside report.md (:mod:`analyzer.report.timeline`).
TIMELINE_FILE = "timeline.svg"
#: Signature roles the catalogue has words for.
ROLES = ("root", "secondary", "context", "noise")
#: Files listed by name under a coverage count; the rest are counted.
LISTED_FILES = 10


def time_text(value: dt.datetime | None, lang: Language = "en") -> str:
    if value is None:
        return say("report.unknown_time", lang)
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def cite(citation: Citation) -> str:
    return f"`{citation.path}:{citation.line}`"


def _cell(text: str) -> str:
    """Text safe inside a table cell (one line, no pipe)."""
    return " ".join(text.split()).replace("|", "\\|")


def _fence(message: str) -> list[str]:
    """A fenced block that the message cannot close early."""
    longest = 2
    run = 0
    for char in message:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    return [fence + "text", message, fence]


def quote(row: EvidenceRow, lang: Language = "en") -> list[str]:
    """A cited row: where, when, who and what matched, then the row verbatim in a fence."""
    words = say(f"role.{row.role}", lang) if row.role in ROLES else row.role
    role = (f" ({words})" if lang == "en" else f"（{words}）") if row.role else ""
    signature = f" · {row.signature}{role}" if row.signature else ""
    host = row.host or say("report.host_unknown", lang)
    head = f"- {cite(row.citation)} · {time_text(row.ts, lang)} · {host}{signature}"
    block = "\n".join(_fence(row.message)).split("\n")
    return [head, "", *("  " + line if line else "" for line in block), ""]


def basis(statement: Statement, lang: Language = "en") -> str:
    if statement.basis == "observed":
        return say("report.observed", lang)
    return say("report.inferred", lang, rule=str(statement.rule))


def _statement(statement: Statement) -> str:
    cites = ", ".join(cite(c) for c in statement.citations) or say("report.no_row", "en")
    return f"- **[{basis(statement)}]** {statement.text} ({cites})"


def verdict_lines(verdict: Verdict) -> list[str]:
    """The three lines every report starts with: cause, culprit, confidence."""
    culprit = verdict.culprit
    who = culprit.subject if culprit.kind != "undetermined" else say("report.not_determined", "en")
    support = f" ({culprit.support})" if culprit.support else ""
    return [
        f"**{say('report.cause', 'en')}:** {verdict.summary}",
        f"**{say('report.culprit', 'en')}:** {who} — {culprit.kind}{support}",
        f"**{say('report.confidence', 'en')}:** {verdict.confidence} — {verdict.confidence_reason}",
    ]


def _failure_table(attempts: Iterable[Verdict]) -> list[str]:
    lines = [
        "| attempt | start | end | told apart by | hosts | failure mode | first error | culprit "
        "| confidence |",
        "|--:|---|---|---|--:|---|---|---|---|",
    ]
    for v in attempts:
        first = (
            f"{v.first_error.signature} {cite(v.first_error.citation)}" if v.first_error else "–"
        )
        culprit = v.culprit.host or v.culprit.subject
        lines.append(
            f"| {v.attempt} | {time_text(v.start)} | {time_text(v.end)} | {_cell(v.boundary)} "
            f"| {v.hosts} | {v.failure_mode} | {first} | {_cell(culprit)} ({v.culprit.kind}) "
            f"| {v.confidence} |"
        )
    return lines


def _timeline(rows: list[EvidenceRow]) -> list[str]:
    lines = ["| time (UTC) | host | signature | row |", "|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {time_text(row.ts)} | {_cell(row.host or '–')} | {row.signature or '–'} "
            f"({row.role or '–'}) | {cite(row.citation)} |"
        )
    return lines


def out_of_range_files(findings: Findings) -> list[BundleFile]:
    """The files with rows whose time the case could not place."""
    return [f for f in findings.bundle.files if f.out_of_range]


def input_coverage_lines(findings: Findings, lang: Language) -> list[str]:
    """What the verdict could not use: rows with out-of-range times (nothing when none)."""
    files = out_of_range_files(findings)
    if not files:
        return []
    lines = [
        f"## {say('report.input_coverage', lang)}",
        "",
        say(
            "coverage.out_of_range",
            lang,
            rows=f"{sum(f.out_of_range for f in files):,}",
            files=f"{len(files):,}",
            earliest=defaults.TS_EARLIEST_YEAR,
            latest=defaults.TS_LATEST_YEAR,
            days=defaults.TS_FILE_OUTLIER_DAYS,
        ),
        "",
    ]
    lines += [
        "- " + say("coverage.out_of_range_file", lang, path=f.path, rows=f"{f.out_of_range:,}")
        for f in files[:LISTED_FILES]
    ]
    if len(files) > LISTED_FILES:
        more = f"{len(files) - LISTED_FILES:,}"
        lines.append("- " + say("coverage.more_files", lang, count=more))
    return [*lines, ""]


def bundle_line(findings: Findings, lang: Language) -> str:
    return say(
        "report.bundle",
        lang,
        bundle=findings.bundle.id[:12],
        rows=f"{findings.bundle.rows:,}",
        files=f"{len(findings.bundle.files):,}",
        hosts=f"{findings.bundle.hosts:,}",
        version=findings.tool_version,
        catalogue=findings.catalogue_digest[:12],
    )


def picture(lang: Language) -> str:
    return f"![{say('report.picture', lang)}]({TIMELINE_FILE})"


def coverage_lines(findings: Findings, lang: Language) -> list[str]:
    """The ML Diagnostics coverage section (empty without Diagon daemon logs)."""
    if not findings.coverage:
        return []
    registered = sum(c.registered for c in findings.coverage)
    stopped = [c for c in findings.coverage if c.stopped_before_incident]
    lines = [
        f"## {say('report.coverage', lang)}",
        "",
        say(
            "coverage.diagon",
            lang,
            nodes=len(findings.coverage),
            registered=registered,
            stopped=len(stopped),
        ),
        "",
    ]
    lines += [
        "- "
        + say(
            "coverage.stopped",
            lang,
            host=c.host,
            time=time_text(c.last_seen, lang),
            citations=(", " if lang == "en" else "，").join(cite(x) for x in c.citations)
            or say("report.no_row", lang),
        )
        for c in stopped
    ]
    return lines + ([""] if stopped else [])


def render(findings: Findings) -> str:
    verdict = findings.verdict
    lines = [
        "# " + say("report.title", "en", attempt=verdict.attempt, attempts=len(findings.attempts)),
        "",
        *(line + "  " for line in verdict_lines(verdict)),
        "",
        bundle_line(findings, "en"),
        "",
        picture("en"),
        "",
    ]
    if verdict.first_error is not None:
        first = verdict.first_error
        lines += [
            f"## {say('report.first_error', 'en')}",
            "",
            say(
                "report.first_error.line",
                "en",
                signature=first.signature,
                title_en=first.title,
                page=first.knowledge,
                link=KNOWLEDGE_LINK.format(page=first.knowledge),
            ),
            "",
            *quote(
                EvidenceRow(
                    citation=first.citation,
                    ts=first.ts,
                    host=first.host,
                    signature=first.signature,
                    role=None,
                    message=first.message,
                )
            ),
        ]
    none = "- " + say("report.none", "en")
    lines += [f"## {say('report.statements', 'en')}", ""]
    lines += [_statement(s) for s in verdict.statements] + [""]
    if verdict.conflicts:
        lines += [f"## {say('report.conflicts', 'en')}", ""]
        lines += [_statement(s) for s in verdict.conflicts] + [""]
    if verdict.evidence:
        lines += [f"## {say('report.evidence', 'en')}", ""]
        for row in verdict.evidence:
            lines += quote(row)
    if verdict.leads:
        lines += [unknown.leads_heading(verdict), ""]
        for row in verdict.leads:
            lines += quote(row)
    lines += unknown.outliers_section(verdict, cite)
    lines += unknown.phase_section(verdict, cite)
    lines += [f"## {say('report.failures', 'en')}", "", *_failure_table(findings.attempts), ""]
    if verdict.timeline:
        lines += [f"## {say('report.timeline', 'en')}", "", *_timeline(verdict.timeline), ""]
    lines += [f"## {say('report.negative', 'en')}", ""]
    lines += [f"- {n}" for n in verdict.negative_findings] or [none]
    lines += [""]
    lines += input_coverage_lines(findings, "en")
    lines += coverage_lines(findings, "en")
    lines += [f"## {say('report.next_steps', 'en')}", ""]
    lines += [f"{i}. {step}" for i, step in enumerate(verdict.next_steps, 1)] or [none]
    if verdict.first_error is not None:
        page = verdict.first_error.knowledge
        see = say("report.see", "en", page=page, link=KNOWLEDGE_LINK.format(page=page))
        lines += ["", see]
    return "\n".join(lines).rstrip() + "\n"
