"""The report layouts, by name: a new template is one module and one entry here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from analyzer.diagnose.findings import Findings
from analyzer.errors import UsageError
from analyzer.report import markdown, modelarts_zh

Renderer = Callable[[Findings], str]

#: Template name -> the function that renders findings as ``report.md``.
RENDERERS: Final[dict[str, Renderer]] = {
    "default": markdown.render,
    "modelarts-zh": modelarts_zh.render,
}
TEMPLATES: Final = tuple(RENDERERS)

#: What ``culprit report --format`` writes, and the file each is written to.
FINDINGS_FILE: Final = "findings.json"
REPORT_FILE: Final = "report.md"
HTML_FILE: Final = "report.html"
REPORT_FORMATS: Final = ("md", "html", "json")


def renderer(template: str) -> Renderer:
    """The renderer of ``template``.

    Raises:
        UsageError: no such template.
    """
    try:
        return RENDERERS[template]
    except KeyError:
        raise UsageError(f"unknown template {template!r}; known: {', '.join(TEMPLATES)}") from None
