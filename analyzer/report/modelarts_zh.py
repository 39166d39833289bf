"""``--template modelarts-zh``: the report in the layout of ModelArts' own diagnosis pages,
every sentence in Chinese.

Sections as ModelArts users know them: 诊断结论 (a table of 任务 / 当前状态 / 故障级别), 根因
(with 置信度 高/中/低 and its reason), 依据, 证据 (the cited rows, quoted verbatim), 修复建议
(steps that change a cluster say that they need the user's confirmation), 后续步骤 (what
was looked for and not found, what to collect when the information is not enough) and the
ML Diagnostics coverage. The diagnosis' sentences are said from their catalogue messages
(:mod:`analyzer.report.messages`); text that exists only in English (a signature's title, a
knowledge page's step) is quoted in 「」, as the report's note says. Log lines, codes and
citations are the same as in the default report.
"""

from __future__ import annotations

from analyzer.diagnose.findings import Findings, Message, Statement, Verdict
from analyzer.report.markdown import (
    KNOWLEDGE_LINK,
    basis,
    bundle_line,
    cite,
    coverage_lines,
    input_coverage_lines,
    picture,
    quote,
    time_text,
)
from analyzer.report.messages import say, text
from analyzer.report.unknown import outliers_section, phase_section

#: The default report's marker of a step that changes the cluster.
_APPROVAL = "**(needs approval)**"


def _zh(message: Message | None, english: str) -> str:
    """A diagnosis sentence in Chinese (findings from before messages existed: quoted)."""
    return text(message, "zh") if message is not None else f"「{english}」"


def _status(verdict: Verdict) -> str:
    if verdict.first_error is None:
        return say("zh.status.unknown", "zh")
    return say("zh.status.failed", "zh", mode=verdict.failure_mode)


def _statement(statement: Statement) -> str:
    cites = "，".join(cite(c) for c in statement.citations) or say("report.no_row", "zh")
    return f"- [{basis(statement, 'zh')}] {_zh(statement.message, statement.text)}（{cites}）"


def _step(message: Message | None, english: str) -> str:
    """A fix step; a knowledge page's step that changes the cluster says it needs the user's
    confirmation (the page marks it in English)."""
    if message is None or message.key != "knowledge.step":
        return _zh(message, english)
    step = str(message.params.get("step_en", english))
    if _APPROVAL not in step:
        return _zh(message, english)
    bare = step.replace(" " + _APPROVAL, "").replace(_APPROVAL, "").rstrip()
    bare_message = Message(key=message.key, params={"step_en": bare})
    return text(bare_message, "zh") + say("zh.needs_approval", "zh")


def _messages(items: list[str], messages: list[Message]) -> list[Message | None]:
    """``messages`` beside ``items`` (None for findings written without them)."""
    return list(messages) if len(messages) == len(items) else [None] * len(items)


def render(findings: Findings) -> str:
    verdict = findings.verdict
    culprit = verdict.culprit
    lines = [
        f"# {say('zh.title', 'zh')}",
        "",
        bundle_line(findings, "zh"),
        "",
        f"> {say('zh.english_note', 'zh')}",
        "",
        f"## {say('zh.conclusion', 'zh')}",
        "",
        say("zh.table", "zh"),
        "|---|---|---|",
    ]
    for attempt in findings.attempts:
        task = say(
            "zh.task",
            "zh",
            attempt=attempt.attempt,
            attempts=len(findings.attempts),
            hosts=attempt.hosts,
        )
        level = say(f"zh.level.{attempt.confidence}", "zh")
        lines.append(f"| {task} | {_status(attempt)} | {level} |")
    support = (
        "，" + _zh(culprit.support_message, culprit.support) if culprit.support is not None else ""
    )
    confidence = say(f"zh.confidence.{verdict.confidence}", "zh")
    lines += [
        "",
        picture("zh"),
        "",
        f"## {say('zh.root_cause', 'zh')}",
        "",
        f"- {say('report.cause', 'zh')}：{_zh(verdict.summary_message, verdict.summary)}",
        f"- {say('report.culprit', 'zh')}：{_zh(culprit.subject_message, culprit.subject)}"
        f"（{say(f'zh.culprit_kind.{culprit.kind}', 'zh')}）{support}",
        f"- {say('report.confidence', 'zh')}：{confidence}（"
        f"{_zh(verdict.confidence_message, verdict.confidence_reason)}）",
    ]
    if verdict.first_error is not None:
        first = verdict.first_error
        lines.append(
            "- "
            + say(
                "zh.first_error",
                "zh",
                signature=first.signature,
                citation=cite(first.citation),
                time=time_text(first.ts, "zh"),
                host=first.host or say("zh.unknown_node", "zh"),
            )
        )
    lines += ["", f"### {say('report.statements', 'zh')}", ""]
    lines += [_statement(s) for s in verdict.statements + verdict.conflicts]
    lines += ["", f"## {say('report.evidence', 'zh')}", ""]
    for row in verdict.evidence or verdict.leads:
        lines += quote(row, "zh")
    lines += outliers_section(verdict, cite, "zh")
    lines += phase_section(verdict, cite, "zh")
    lines += [f"## {say('zh.fix', 'zh')}", ""]
    said = _messages(verdict.next_steps, verdict.next_step_messages)
    steps = list(zip(verdict.next_steps, said, strict=True))
    fixes = steps if verdict.first_error is not None else []
    for number, (step, message) in enumerate(fixes, 1):
        lines.append(f"{number}. {_step(message, step)}")
    if not fixes:
        none = "zh.no_fix" if verdict.first_error is None else "zh.no_fix.known"
        lines.append(f"- {say(none, 'zh')}")
    lines += [
        "",
        f"> {say('zh.approval_note', 'zh')}",
        "",
        f"## {say('report.next_steps', 'zh')}",
        "",
    ]
    negative = _messages(verdict.negative_findings, verdict.negative_messages)
    follow = [_zh(m, n) for n, m in zip(verdict.negative_findings, negative, strict=True)]
    if verdict.confidence == "LOW":
        follow += [_step(m, s) for s, m in steps if (s, m) not in fixes]
    lines += [f"- {item}" for item in follow] or [f"- {say('zh.enough', 'zh')}"]
    coverage = input_coverage_lines(findings, "zh") + coverage_lines(findings, "zh")
    while coverage and not coverage[-1]:
        coverage.pop()
    if coverage:
        lines += ["", *coverage]
    if verdict.first_error is not None:
        page = verdict.first_error.knowledge
        lines += ["", say("report.see", "zh", page=page, link=KNOWLEDGE_LINK.format(page=page))]
    return "\n".join(lines).rstrip() + "\n"
