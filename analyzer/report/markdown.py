"""``report.md``: the verdict in three lines, then every row it rests on, quoted verbatim.

The text is a pure function of the findings (no clock, no environment), so the same bundle
gives the same bytes. Messages are already redacted in the findings when redaction is on.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from analyzer.diagnose.findings import Citation, EvidenceRow, Findings, Statement, Verdict

#: Where knowledge pages are linked (relative to the catalogue's knowledge folder).
KNOWLEDGE_LINK = "knowledge/{page}.md"
#: The host × time picture written beside report.md (:mod:`analyzer.report.timeline`).
TIMELINE_FILE = "timeline.svg"


def time_text(value: dt.datetime | None) -> str:
    if value is None:
        return "unknown time"
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


def quote(row: EvidenceRow) -> list[str]:
    role = f" ({row.role})" if row.role else ""
    signature = f" · {row.signature}{role}" if row.signature else ""
    host = row.host or "host unknown"
    head = f"- {cite(row.citation)} · {time_text(row.ts)} · {host}{signature}"
    block = "\n".join(_fence(row.message)).split("\n")
    return [head, "", *("  " + line if line else "" for line in block), ""]


def _statement(statement: Statement) -> str:
    basis = "observed" if statement.basis == "observed" else f"inferred: {statement.rule}"
    cites = ", ".join(cite(c) for c in statement.citations) or "no row"
    return f"- **[{basis}]** {statement.text} ({cites})"


def verdict_lines(verdict: Verdict) -> list[str]:
    """The three lines every report starts with: cause, culprit, confidence."""
    culprit = verdict.culprit
    who = culprit.subject if culprit.kind != "undetermined" else "not determined"
    support = f" ({culprit.support})" if culprit.support else ""
    return [
        f"**Cause:** {verdict.summary}",
        f"**Culprit:** {who} — {culprit.kind}{support}",
        f"**Confidence:** {verdict.confidence} — {verdict.confidence_reason}",
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


def render(findings: Findings) -> str:
    verdict = findings.verdict
    lines = [
        f"# culprit report: attempt {verdict.attempt} of {len(findings.attempts)}",
        "",
        *(line + "  " for line in verdict_lines(verdict)),
        "",
        f"Bundle `{findings.bundle.id[:12]}`: {findings.bundle.rows:,} rows from "
        f"{len(findings.bundle.files):,} files, {findings.bundle.hosts:,} hosts. culprit "
        f"{findings.tool_version}, catalogue `{findings.catalogue_digest[:12]}`.",
        "",
        f"![Hosts over time: first errors, attempt starts, the culprit first]({TIMELINE_FILE})",
        "",
    ]
    if verdict.first_error is not None:
        first = verdict.first_error
        lines += [
            "## First error",
            "",
            f"{first.signature}: {first.title} (knowledge: "
            f"[{first.knowledge}]({KNOWLEDGE_LINK.format(page=first.knowledge)}))",
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
    lines += ["## What the verdict rests on", ""]
    lines += [_statement(s) for s in verdict.statements] + [""]
    if verdict.conflicts:
        lines += ["## Conflicting evidence", ""]
        lines += [_statement(s) for s in verdict.conflicts] + [""]
    if verdict.evidence:
        lines += ["## Evidence rows", ""]
        for row in verdict.evidence:
            lines += quote(row)
    if verdict.leads:
        lines += ["## Leads (most frequent error lines)", ""]
        for row in verdict.leads:
            lines += quote(row)
    lines += ["## Failure table", "", *_failure_table(findings.attempts), ""]
    if verdict.timeline:
        lines += ["## Timeline around the first error", "", *_timeline(verdict.timeline), ""]
    lines += ["## Negative findings", ""]
    lines += [f"- {n}" for n in verdict.negative_findings] or ["- None."]
    lines += [""]
    if findings.coverage:
        registered = sum(c.registered for c in findings.coverage)
        stopped = [c for c in findings.coverage if c.stopped_before_incident]
        lines += [
            "## ML Diagnostics coverage",
            "",
            f"Diagon daemon logs from {len(findings.coverage)} node(s); {registered} registered "
            f"with the backend; {len(stopped)} stopped before the first error (context only: "
            "it explains missing profiles, it is not a cause).",
            "",
        ]
        lines += [
            f"- {c.host}: last seen {time_text(c.last_seen)} "
            f"({', '.join(cite(x) for x in c.citations) or 'no row'})"
            for c in stopped
        ]
        lines += [""] if stopped else []
    lines += ["## Next steps", ""]
    lines += [f"{i}. {step}" for i, step in enumerate(verdict.next_steps, 1)] or ["- None."]
    if verdict.first_error is not None:
        page = verdict.first_error.knowledge
        lines += ["", f"See [{page}]({KNOWLEDGE_LINK.format(page=page)})."]
    return "\n".join(lines).rstrip() + "\n"
