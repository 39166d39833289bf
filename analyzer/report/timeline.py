"""``timeline.svg``: the host × time picture beside ``report.md``, as plain SVG.

It draws the same data as the heat strip of ``report.html`` (:func:`analyzer.report.heat.
heat_strip`: one bucketing, one host order, one grouping), so the culprit is the first row
and past :data:`analyzer.report.heat.SINGLE_ROWS` hosts the rest are counted groups: the
picture stays a few dozen rows, and a few tens of KB, at 4,096 hosts. Runs of equal cells
are one rectangle. No script, no font or image from anywhere: a ticket system, a mail client
or a browser offline shows it as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from analyzer.case.store import Case
from analyzer.diagnose.evidence import CaseData, load
from analyzer.diagnose.findings import Findings
from analyzer.report.heat import heat_strip
from analyzer.report.markdown import TIMELINE_FILE

__all__ = ["TIMELINE_FILE", "picture", "render"]
from analyzer.signatures.catalog import Catalogue

#: Cell colours by code (silent, logging, context/noise, consequence, root cause).
COLOURS: Final = ("#ffffff", "#d9d9d9", "#9ecae1", "#fd8d3c", "#d7301f")
LABEL_W: Final = 290
CELL_W: Final = 9
ROW_H: Final = 14
TOP: Final = 58
#: Longest label shown whole; longer ones keep their start and end (where host names differ).
LABEL_CHARS: Final = 40


def _escape(text: str) -> str:
    """``text`` as SVG character data, as ``xml.sax.saxutils.escape`` writes it (that module
    imports urllib.request and http: a two-hundredth of a second of a small analysis)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _label(text: str) -> str:
    if len(text) <= LABEL_CHARS:
        return text
    return text[:15] + "…" + text[-(LABEL_CHARS - 16) :]


def _cut(text: str, chars: int = 150) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _runs(codes: str) -> list[tuple[int, int, int]]:
    """(first bucket, length, code) of each run of equal non-zero cells."""
    runs: list[tuple[int, int, int]] = []
    for bucket, char in enumerate(codes):
        code = int(char)
        if runs and runs[-1][2] == code and runs[-1][0] + runs[-1][1] == bucket:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1, code)
        elif code:
            runs.append((bucket, 1, code))
    return runs


def render(strip: dict[str, Any], title: str) -> str:
    """The picture of ``strip`` (heat-strip data) under ``title`` (the verdict in a line)."""
    rows: list[dict[str, Any]] = strip["rows"]
    buckets = max(int(strip["buckets"]), 1)
    width = LABEL_W + CELL_W * buckets + 36
    height = TOP + ROW_H * max(len(rows), 1) + 30
    hosts = sum(int(row["hosts"]) for row in rows)
    desc = (
        f"{hosts:,} hosts in {len(rows)} rows over time (UTC); culprit first; "
        "red: root-cause signature, orange: consequence, blue: context, grey: logging; "
        "diamond: first error; dashed line: attempt start."
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="t d" '
        'font-family="monospace" font-size="11">',
        f'<title id="t">{_escape(title)}</title>',
        f'<desc id="d">{_escape(desc)}</desc>',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="4" y="14" font-size="12" font-weight="bold">{_escape(_cut(title))}</text>',
        f'<text x="4" y="30">{hosts:,} hosts in {len(rows)} rows, the culprit first; times in UTC.'
        "</text>",
    ]
    if not rows:
        out += ['<text x="4" y="70">No timestamped rows with a host.</text>', "</svg>"]
        return "\n".join(out) + "\n"
    bottom = TOP + ROW_H * len(rows)
    out.append(f'<text x="4" y="{TOP - 6}">time (UTC) →</text>')
    for tick in strip.get("ticks", []):
        x = LABEL_W + float(tick["x"]) * CELL_W
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 4}" y2="{bottom}" stroke="#eeeeee"/>'
            f'<text x="{x:.1f}" y="{TOP - 6}" text-anchor="middle">{_escape(tick["label"])}</text>'
        )
    for index, row in enumerate(rows):
        y = TOP + index * ROW_H
        label = str(row["label"])
        out.append(f"<g><title>{_escape(label)}</title>")
        out.append(f'<text x="4" y="{y + 10}">{_escape(_label(label))}</text>')
        for start, length, code in _runs(str(row["codes"])):
            out.append(
                f'<rect x="{LABEL_W + start * CELL_W}" y="{y}" width="{length * CELL_W - 1}" '
                f'height="{ROW_H - 2}" fill="{COLOURS[code]}"/>'
            )
        out.append("</g>")
    for marker in strip["markers"]:
        if marker["kind"] == "attempt":
            x = LABEL_W + int(marker["bucket"]) * CELL_W - 1
            out.append(
                f'<line x1="{x}" x2="{x}" y1="{TOP - 2}" y2="{bottom}" stroke="#333333" '
                f'stroke-dasharray="3,3"><title>attempt {marker["attempt"]} starts</title></line>'
            )
    for marker in strip["markers"]:
        if marker["kind"] != "first-error" or marker["row"] is None:
            continue
        cx = LABEL_W + int(marker["bucket"]) * CELL_W + CELL_W / 2
        cy = TOP + int(marker["row"]) * ROW_H + (ROW_H - 2) / 2
        what = (
            f"first error of attempt {marker['attempt']}: {marker['signature']} on "
            f"{marker['host']} at {marker['ts']} ({marker['path']}:{marker['line']})"
        )
        out.append(
            f'<path d="M{cx} {cy - 6} L{cx + 6} {cy} L{cx} {cy + 6} L{cx - 6} {cy} Z" '
            f'fill="#000000" stroke="#ffffff" stroke-width="1.5"><title>{_escape(what)}</title>'
            "</path>"
        )
    legend_y = bottom + 20
    x = 4
    for code, words in ((4, "root cause"), (3, "consequence"), (2, "context"), (1, "logging")):
        out.append(
            f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" fill="{COLOURS[code]}"/>'
            f'<text x="{x + 14}" y="{legend_y}">{words}</text>'
        )
        x += 14 + 8 * len(words) + 12
    out.append(f'<text x="{x}" y="{legend_y}">◆ first error  ┆ attempt start</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def picture(
    case: Case,
    findings: Findings,
    catalogue: Catalogue,
    *,
    redact: Callable[[str], str],
    data: CaseData | None = None,
) -> str:
    """``timeline.svg`` of a diagnosed case (as :func:`analyzer.report.html.render` gets it;
    ``data``: its evidence, when read already)."""
    strip = heat_strip(data if data is not None else load(case, catalogue), findings, redact)
    return render(strip, f"culprit: {findings.verdict.summary}")
