"""``report.html``: one self-contained page (inline CSS, JS and SVG; nothing from the network).

It shows what ``report.md`` says (the verdict, the failure table, every cited row) and what
only a picture can: the host × time heat strip (:mod:`analyzer.report.heat`), where a click
on a cell or on the first-error marker lists the rows behind it. The knowledge page behind
every signature it cites is rendered inline. The data goes into the page as compact JSON and
the strip is drawn in the browser, so 4,096 hosts stay a few MB.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import jinja2
import polars as pl
from markdown_it import MarkdownIt

from analyzer import defaults
from analyzer.case.store import Case
from analyzer.diagnose.evidence import CaseData, load
from analyzer.diagnose.findings import Citation, EvidenceRow, Findings, Verdict
from analyzer.report.heat import MESSAGE_CHARS, heat_strip, summary_rows
from analyzer.report.markdown import LISTED_FILES, out_of_range_files, time_text
from analyzer.report.templating import html_environment
from analyzer.signatures.catalog import KNOWLEDGE_DIR, Catalogue

TEMPLATES: Final = Path(__file__).with_name("templates")
#: Lines of the same file shown before and after each attempt's first error...
CONTEXT_LINES: Final = 5
#: ...and around the first cited row of this many other hosts of its timeline...
CONTEXT_HOSTS: Final = 6
#: ...with this many lines before and after.
OTHER_HOST_LINES: Final = 2
_FRONT_MATTER: Final = re.compile(r"\A\+\+\+\n.*?\n\+\+\+\n", re.DOTALL)


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    environment = html_environment(TEMPLATES)
    environment.filters["when"] = time_text
    environment.filters["cite"] = lambda c: f"{c.path}:{c.line}"
    return environment


def render(
    case: Case,
    findings: Findings,
    catalogue: Catalogue,
    *,
    redact: Callable[[str], str],
    data: CaseData | None = None,
) -> str:
    """The HTML report of a diagnosed case (``findings`` made from ``case`` and
    ``catalogue``; ``redact`` applied to every message quoted beyond the findings';
    ``data``: the case's evidence, when read already)."""
    if data is None:
        data = load(case, catalogue)
    strip = heat_strip(data, findings, redact)
    pages = _knowledge(findings, catalogue)
    context = {
        verdict.attempt: _context(data, verdict, redact)
        for verdict in findings.attempts
        if verdict.first_error is not None
    }
    return (
        _environment()
        .get_template("report.html")
        .render(
            findings=findings,
            final=findings.verdict,
            attempts=findings.attempts,
            strip_json=_script_json(strip),
            strip_table=summary_rows(strip),
            knowledge=pages,
            context=context,
            rows=_cited_rows(findings, _coverage_rows(data, findings, redact)),
            anchor=_anchor,
            case_rows=case.meta.counts.rows,
            out_of_range=out_of_range_files(findings),
            listed=LISTED_FILES,
            ts_years=(
                defaults.TS_EARLIEST_YEAR,
                defaults.TS_LATEST_YEAR,
                defaults.TS_FILE_OUTLIER_DAYS,
            ),
        )
    )


def _anchor(citation: Citation) -> str:
    return f"row-{citation.row_id}"


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _cited_rows(findings: Findings, more: list[EvidenceRow]) -> list[EvidenceRow]:
    """Every row the findings cite, once, in time order (the anchors citations link to):
    the verdicts' rows, then ``more`` (rows only the coverage table cites)."""
    seen: dict[int, EvidenceRow] = {}
    for verdict in findings.attempts:
        for row in [*verdict.evidence, *verdict.timeline, *verdict.leads]:
            seen.setdefault(row.citation.row_id, row)
    for row in more:
        seen.setdefault(row.citation.row_id, row)
    return sorted(seen.values(), key=lambda r: (r.ts is None, r.ts, r.citation.row_id))


def _coverage_rows(
    data: CaseData, findings: Findings, redact: Callable[[str], str]
) -> list[EvidenceRow]:
    """The rows the coverage table cites (each daemon's last row): findings carry only their
    citations, and a citation must link to its quoted row like every other."""
    wanted = {c.row_id: c for entry in findings.coverage for c in entry.citations}
    if not wanted:
        return []
    found = (
        data.rows()
        .filter(pl.col("row_id").is_in(list(wanted)))
        .select("row_id", "ts", pl.col("host").cast(pl.String), "message")
        .collect()
    )
    return [
        EvidenceRow(
            citation=wanted[row_id],
            ts=ts,
            host=host,
            signature=None,
            role=None,
            message=redact(message),
        )
        for row_id, ts, host, message in found.iter_rows()
    ]


def _context(
    data: CaseData, verdict: Verdict, redact: Callable[[str], str]
) -> list[dict[str, Any]]:
    """Blocks of lines around the attempt's first error and around the first cited row of
    each of the next hosts of its timeline, each in its own file, the cited row marked."""
    first = verdict.first_error
    assert first is not None
    targets = [(first.citation, first.host, CONTEXT_LINES)]
    for row in verdict.timeline:
        if len(targets) > CONTEXT_HOSTS:
            break
        if row.host != first.host and row.host not in {t[1] for t in targets}:
            targets.append((row.citation, row.host, OTHER_HOST_LINES))
    wanted = pl.lit(False)
    for citation, _, around in targets:
        wanted = wanted | (
            (pl.col("file_id") == citation.row_id >> 32)
            & pl.col("line").is_between(citation.line - around, citation.line + around)
        )
    rows = (
        data.rows()
        .filter(wanted)
        .select("file_id", "line", "ts", pl.col("host").cast(pl.String), "message")
        .collect()
    )
    blocks = []
    for citation, host, around in targets:
        lines = rows.filter(
            (pl.col("file_id") == citation.row_id >> 32)
            & pl.col("line").is_between(citation.line - around, citation.line + around)
        ).sort("line")
        blocks.append(
            {
                "path": citation.path,
                "host": host,
                "anchor": _anchor(citation),
                "lines": [
                    {
                        "line": number,
                        "ts": ts,
                        "host": row_host,
                        "message": redact(message)[:MESSAGE_CHARS],
                        "cited": number == citation.line,
                    }
                    for number, ts, row_host, message in lines.select(
                        "line", "ts", "host", "message"
                    ).iter_rows()
                ],
            }
        )
    return blocks


def _knowledge(findings: Findings, catalogue: Catalogue) -> list[dict[str, str]]:
    """The knowledge pages behind every signature the findings cite, rendered to HTML."""
    by_code = {s.code: s for s in catalogue.signatures}
    wanted: list[str] = []
    for verdict in findings.attempts:
        codes = [r.signature for r in [*verdict.evidence, *verdict.timeline] if r.signature]
        if verdict.first_error is not None:
            wanted.append(verdict.first_error.knowledge)
        wanted += [by_code[c].knowledge for c in codes if c in by_code]
    pages = []
    for page in dict.fromkeys(wanted):
        path = KNOWLEDGE_DIR / f"{page}.md"
        if path.is_file():
            text = _FRONT_MATTER.sub("", path.read_text(encoding="utf-8"), count=1)
            pages.append({"id": page, "html": _demote(_markdown().render(text))})
    return pages


_HEADING: Final = re.compile(r"<(/?)h([1-6])>")


def _demote(html: str) -> str:
    """A page's headings two levels down: the report has one h1, and the pages sit under its
    "Knowledge" h2."""
    return _HEADING.sub(lambda m: f"<{m.group(1)}h{min(int(m.group(2)) + 2, 6)}>", html)


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # Raw HTML in a page is shown as text, never run.
    return MarkdownIt("commonmark", {"html": False}).enable("table")
