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

from analyzer.case.store import Case
from analyzer.diagnose.evidence import CaseData, load
from analyzer.diagnose.findings import Citation, EvidenceRow, Findings, Verdict
from analyzer.report.heat import MESSAGE_CHARS, heat_strip
from analyzer.report.markdown import time_text
from analyzer.signatures.catalog import KNOWLEDGE_DIR, Catalogue

TEMPLATES: Final = Path(__file__).with_name("templates")
#: Lines of the same file shown before and after each attempt's first error.
CONTEXT_LINES: Final = 5
_FRONT_MATTER: Final = re.compile(r"\A\+\+\+\n.*?\n\+\+\+\n", re.DOTALL)


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["when"] = time_text
    environment.filters["cite"] = lambda c: f"{c.path}:{c.line}"
    return environment


def render(
    case: Case, findings: Findings, catalogue: Catalogue, *, redact: Callable[[str], str]
) -> str:
    """The HTML report of a diagnosed case (``findings`` made from ``case`` and
    ``catalogue``; ``redact`` applied to every message quoted beyond the findings')."""
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
            knowledge=pages,
            context=context,
            rows=_cited_rows(findings),
            anchor=_anchor,
            case_rows=case.meta.counts.rows,
        )
    )


def _anchor(citation: Citation) -> str:
    return f"row-{citation.row_id}"


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _cited_rows(findings: Findings) -> list[EvidenceRow]:
    """Every row the findings quote, once, in time order (the anchors citations link to)."""
    seen: dict[int, EvidenceRow] = {}
    for verdict in findings.attempts:
        for row in [*verdict.evidence, *verdict.timeline, *verdict.leads]:
            seen.setdefault(row.citation.row_id, row)
    return sorted(seen.values(), key=lambda r: (r.ts is None, r.ts, r.citation.row_id))


def _context(
    data: CaseData, verdict: Verdict, redact: Callable[[str], str]
) -> list[dict[str, Any]]:
    """The lines around an attempt's first error in its own file, the error marked."""
    first = verdict.first_error
    assert first is not None
    file_id = first.citation.row_id >> 32
    line = first.citation.line
    rows = (
        data.rows()
        .filter(
            (pl.col("file_id") == file_id)
            & pl.col("line").is_between(line - CONTEXT_LINES, line + CONTEXT_LINES)
        )
        .select("line", "ts", pl.col("host").cast(pl.String), "message")
        .sort("line")
        .collect()
    )
    return [
        {
            "line": number,
            "ts": ts,
            "host": host,
            "message": redact(message)[:MESSAGE_CHARS],
            "first": number == line,
        }
        for number, ts, host, message in rows.iter_rows()
    ]


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
            pages.append({"id": page, "html": _markdown().render(text)})
    return pages


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # Raw HTML in a page is shown as text, never run.
    return MarkdownIt("commonmark", {"html": False}).enable("table")
