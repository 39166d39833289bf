"""The report sections of the template rules (outlier hosts, training phase, leads), kept apart
from the rest of the Markdown report so each can change on its own. Each says its words from
the message catalogue (:mod:`analyzer.report.messages`), in English or Chinese."""

from __future__ import annotations

from collections.abc import Callable

from analyzer.diagnose.findings import Citation, Message, Verdict
from analyzer.report.messages import Language, say, text

#: How a citation is written (the report's own ``path:line``).
Cite = Callable[[Citation], str]

_COMMA = {"en": ", ", "zh": "，"}


def _said(message: Message | None, english: str, lang: Language) -> str:
    """A diagnosis sentence in ``lang`` (English as findings state it; quoted in Chinese when
    the findings carry no message)."""
    if lang == "en":
        return english
    return text(message, lang) if message is not None else f"「{english}」"


def phase_section(verdict: Verdict, cite: Cite, lang: Language = "en") -> list[str]:
    """Where in training the attempt failed, and the hosts' last completed steps."""
    phase = verdict.phase
    if phase is None:
        return []
    comma = _COMMA[lang]
    cites = comma.join(cite(c) for c in phase.citations) or say("report.no_row", lang)
    lines = [
        f"## {say('report.phase', lang)}",
        "",
        say(
            "report.phase.line",
            lang,
            basis=say("report.inferred", lang, rule=phase.rule),
            text=_said(phase.message, phase.text, lang),
            citations=cites,
        ),
    ]
    lagging = sorted(phase.last_steps, key=lambda s: (s.step, s.host or ""))[:5]
    if lagging and phase.step is not None and lagging[0].step < phase.step:
        hosts = comma.join(
            say(
                "report.phase.host_step",
                lang,
                host=s.host or say("host.unnamed", lang),
                step=s.step,
                citation=cite(s.citation),
            )
            for s in lagging
            if s.step < phase.step
        )
        lines += [say("report.phase.behind", lang, hosts=hosts)]
    return [*lines, ""]


def outliers_section(verdict: Verdict, cite: Cite, lang: Language = "en") -> list[str]:
    """The hosts whose logs differ most from their peers', best first, when no signature
    decided the verdict (when one did, an agreeing ranking is one of its statements)."""
    if not verdict.outliers or verdict.first_error is not None:
        return []
    lines = [
        f"## {say('report.outliers', lang)}",
        "",
        say("report.outliers.table", lang),
        "|--:|---|--:|---|---|",
    ]
    for outlier in verdict.outliers:
        if lang == "en" or len(outlier.reason_messages) != len(outlier.reasons):
            reasons = [_said(None, r, lang) for r in outlier.reasons]
        else:
            reasons = [text(m, lang) for m in outlier.reason_messages]
        joined = (" " if lang == "en" else "").join(reasons)
        why = joined.replace("|", "\\|").replace("\n", " ")
        rows = _COMMA[lang].join(cite(c) for c in outlier.citations[:3]) or "–"
        lines.append(f"| {outlier.rank} | {outlier.host} | {outlier.score:g} | {why} | {rows} |")
    rule = verdict.outliers[0].rule
    return [*lines, "", say("report.outliers.note", lang, rule=rule), ""]


def leads_heading(verdict: Verdict, lang: Language = "en") -> str:
    """The heading of the leads, naming the rule that ranked them."""
    rule = verdict.lead_rule or "rare-early-leads"
    return f"## {say('report.leads', lang, rule=rule)}"
