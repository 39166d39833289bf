"""``--template modelarts-zh``: the report in the layout of ModelArts' own diagnosis pages.

Sections as ModelArts users know them: 诊断结论 (a table of 任务 / 当前状态 / 故障级别), 根因
(with 置信度 HIGH/MEDIUM/LOW), 证据 (the cited rows, quoted verbatim), 修复建议 (steps that
change a cluster say that they need the user's confirmation) and 后续步骤 (what to collect
when the information is not enough). Citations are the same as in the default report.
"""

from __future__ import annotations

from analyzer.diagnose.findings import Findings, Verdict
from analyzer.report.markdown import KNOWLEDGE_LINK, TIMELINE_FILE, cite, quote, time_text

#: 故障级别 of a verdict: how much of the job the failure stopped.
_LEVEL = {
    "HIGH": "严重（作业中断）",
    "MEDIUM": "严重（作业中断，根因待确认）",
    "LOW": "待定（信息不足）",
}
_KIND = {
    "host": "节点/主机",
    "program": "训练程序",
    "infrastructure": "基础设施",
    "undetermined": "未确定",
}
#: The default report's marker of a step that changes the cluster.
_APPROVAL = "**(needs approval)**"


def _status(verdict: Verdict) -> str:
    if verdict.first_error is None:
        return "异常（原因未确定）"
    return f"失败：{verdict.failure_mode}"


def _task(findings: Findings, verdict: Verdict) -> str:
    return f"第 {verdict.attempt} 次运行（共 {len(findings.attempts)} 次），{verdict.hosts} 个节点"


def render(findings: Findings) -> str:
    verdict = findings.verdict
    culprit = verdict.culprit
    lines = [
        "# 诊断报告",
        "",
        "## 诊断结论",
        "",
        "| 任务 | 当前状态 | 故障级别 |",
        "|---|---|---|",
    ]
    for attempt in findings.attempts:
        lines.append(
            f"| {_task(findings, attempt)} | {_status(attempt)} | {_LEVEL[attempt.confidence]} |"
        )
    lines += [
        "",
        f"![主机 × 时间分布：首个错误与各次运行起点，故障主机在最上方]({TIMELINE_FILE})",
        "",
        "## 根因",
        "",
        f"- 结论：{verdict.summary}",
        f"- 故障对象：{culprit.subject}（{_KIND[culprit.kind]}）"
        + (f"，{culprit.support}" if culprit.support else ""),
        f"- 置信度：{verdict.confidence}（{verdict.confidence_reason}）",
    ]
    if verdict.first_error is not None:
        first = verdict.first_error
        lines.append(
            f"- 首个错误：{first.signature} {cite(first.citation)}，{time_text(first.ts)}，"
            f"{first.host or '未知节点'}"
        )
    lines += ["", "### 依据", ""]
    for statement in verdict.statements + verdict.conflicts:
        basis = "观察" if statement.basis == "observed" else f"推断（{statement.rule}）"
        cites = "，".join(cite(c) for c in statement.citations) or "无"
        lines.append(f"- [{basis}] {statement.text}（{cites}）")
    lines += ["", "## 证据", ""]
    for row in verdict.evidence or verdict.leads:
        lines += quote(row)
    lines += ["## 修复建议", ""]
    steps = verdict.next_steps if verdict.first_error is not None else []
    for number, step in enumerate(steps, 1):
        confirm = "（需用户确认后执行）" if _APPROVAL in step else ""
        lines.append(f"{number}. {step.replace(_APPROVAL, '').rstrip()}{confirm}")
    if not steps:
        lines.append("- 暂无：根因未确定。")
    lines += [
        "",
        "> 标注“需用户确认后执行”的步骤会改变集群或作业状态，请确认后再操作。",
        "",
        "## 后续步骤",
        "",
    ]
    follow = list(verdict.negative_findings)
    if verdict.confidence == "LOW":
        follow += [s for s in verdict.next_steps if s not in steps]
    lines += [f"- {item}" for item in follow] or ["- 信息充分，无需补充采集。"]
    if verdict.first_error is not None:
        page = verdict.first_error.knowledge
        lines += ["", f"参考：[{page}]({KNOWLEDGE_LINK.format(page=page)})"]
    return "\n".join(lines).rstrip() + "\n"
