"""The report sections of the template rules (outlier hosts, training phase, leads), kept apart
from the rest of the Markdown report so each can change on its own."""

from __future__ import annotations

from collections.abc import Callable

from analyzer.diagnose.findings import Citation, Verdict

#: How a citation is written (the report's own ``path:line``).
Cite = Callable[[Citation], str]


def phase_section(verdict: Verdict, cite: Cite) -> list[str]:
    """Where in training the attempt failed, and the hosts' last completed steps."""
    phase = verdict.phase
    if phase is None:
        return []
    cites = ", ".join(cite(c) for c in phase.citations) or "no row"
    lines = ["## Training phase", "", f"- **[inferred: {phase.rule}]** {phase.text} ({cites})"]
    lagging = sorted(phase.last_steps, key=lambda s: (s.step, s.host or ""))[:5]
    if lagging and phase.step is not None and lagging[0].step < phase.step:
        lines += [
            "- Furthest behind: "
            + ", ".join(
                f"{s.host or 'an unnamed host'} at step {s.step} ({cite(s.citation)})"
                for s in lagging
                if s.step < phase.step
            )
            + "."
        ]
    return [*lines, ""]


def outliers_section(verdict: Verdict, cite: Cite) -> list[str]:
    """The hosts whose logs differ most from their peers', best first, when no signature
    decided the verdict (when one did, an agreeing ranking is one of its statements)."""
    if not verdict.outliers or verdict.first_error is not None:
        return []
    lines = [
        "## Hosts unlike their peers",
        "",
        "| rank | host | score | why | rows |",
        "|--:|---|--:|---|---|",
    ]
    for outlier in verdict.outliers:
        why = " ".join(outlier.reasons).replace("|", "\\|").replace("\n", " ")
        rows = ", ".join(cite(c) for c in outlier.citations[:3]) or "–"
        lines.append(f"| {outlier.rank} | {outlier.host} | {outlier.score:g} | {why} | {rows} |")
    rule = verdict.outliers[0].rule
    return [*lines, "", f"(inferred: {rule}; a ranking, not a cause.)", ""]


def leads_heading(verdict: Verdict) -> str:
    """The heading of the leads, naming the rule that ranked them."""
    rule = verdict.lead_rule or "rare-early-leads"
    return f"## Leads (rare, early error lines first; inferred: {rule})"
