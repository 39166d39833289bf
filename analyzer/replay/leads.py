"""The leads scored on a real-log corpus as a new user meets a failure the catalogue does not
know: every excerpt whose expected.toml names a first-error line is analyzed with the
built-in catalogue switched off (so every verdict is "no known cause"), and the question is
whether the expected line is among the top 5 leads, in the evidence order of
:mod:`analyzer.diagnose.leads` and, beside it, in the frequency order used before.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from analyzer.errors import AnalyzerError
from analyzer.replay.corpus import Excerpt, find_excerpts

#: Leads counted (the top 5 of the verdict).
TOP: int = 5


@dataclass(frozen=True)
class LeadScore:
    excerpt: str
    platform: str
    #: The expected line is among the top 5 leads (evidence order).
    evidence: bool
    #: ... among the top 5 of the frequency order.
    frequency: bool
    #: The verdict said "no known cause" (LOW, class unknown) as it must without signatures.
    honest: bool
    error: str | None = None


def _frequency_citations(case: Path, start: int | None, end: int | None) -> list[str]:
    """``path:line`` of the frequency order's top leads (the rows' own lines, as before)."""
    from analyzer.diagnose.leads import by_frequency

    rows = pl.scan_parquet(str(case / "rows" / "*.parquet"))
    ids = by_frequency(rows.select("row_id", "ts", "severity", "message"), start, end, TOP)
    if not ids:
        return []
    files = pl.read_parquet(case / "files.parquet").select("file_id", "path")
    found = (
        rows.select("row_id", "file_id", "line")
        .filter(pl.col("row_id").is_in(ids))
        .collect()
        .join(files, on="file_id")
    )
    return [f"{p}:{n}" for p, n in found.select("path", "line").rows()]


def score_leads(excerpt: Excerpt, work: Path) -> LeadScore:
    """Analyze ``excerpt`` without the built-in catalogue into ``work`` and score its leads."""
    from analyzer.flows.analysis import analyze
    from analyzer.flows.settings import AnalyzeSettings
    from analyzer.signatures.classes import UNKNOWN

    expected = excerpt.expected.lines
    platform = excerpt.expected.platform
    try:
        result = analyze(excerpt.logs, work, AnalyzeSettings(jobs=1, builtin_signatures=False))
    except AnalyzerError as exc:
        return LeadScore(excerpt.name, platform, False, False, False, str(exc))
    verdict = result.findings.verdict
    cited = [f"{lead.citation.path}:{lead.citation.line}" for lead in verdict.leads[:TOP]]
    start = None if verdict.start is None else _ns(verdict.start)
    end = None if verdict.end is None else _ns(verdict.end)
    frequency = _frequency_citations(work / "case", start, end)
    return LeadScore(
        excerpt=excerpt.name,
        platform=platform,
        evidence=bool(expected & set(cited)),
        frequency=bool(expected & set(frequency)),
        honest=verdict.failure_class == UNKNOWN and verdict.confidence == "LOW",
    )


def _ns(value: object) -> int:
    import datetime as dt

    assert isinstance(value, dt.datetime)
    return int(value.timestamp()) * 1_000_000_000 + value.microsecond * 1000


def _one(task: tuple[Excerpt, Path]) -> LeadScore:
    return score_leads(*task)


def score_corpus_leads(
    corpus: str | Path, *, work: str | Path | None = None, jobs: int | None = None
) -> list[LeadScore]:
    """Every excerpt of ``corpus`` with an expected first-error line, scored (module doc)."""
    excerpts = [e for e in find_excerpts(Path(corpus)) if e.expected.lines]
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-leads-") as scratch:
            return _run(excerpts, Path(scratch), jobs)
    return _run(excerpts, Path(work), jobs)


def _run(excerpts: Sequence[Excerpt], work: Path, jobs: int | None) -> list[LeadScore]:
    tasks = [(excerpt, work / excerpt.name) for excerpt in excerpts]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks) or 1))
    if jobs == 1:
        return [_one(task) for task in tasks]
    # Spawned, not forked: polars' thread pool does not survive a fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_one, tasks, chunksize=4))


def summary(scores: Sequence[LeadScore]) -> list[str]:
    """Markdown table rows: per platform and in all, the share in the top 5 of each order."""
    lines = [
        "| platform | excerpts | expected line in top 5 leads | frequency order (before) "
        "| honest no-known-cause |",
        "|---|---:|---:|---:|---:|",
    ]
    groups = [*sorted({s.platform for s in scores}), "all"]
    for group in groups:
        part = [s for s in scores if group in ("all", s.platform)]
        n = len(part)

        def cell(count: int, total: int = n) -> str:
            return f"{count / total:.0%} ({count})" if total else "–"

        lines.append(
            f"| {group} | {n} | {cell(sum(s.evidence for s in part))} | "
            f"{cell(sum(s.frequency for s in part))} | {cell(sum(s.honest for s in part))} |"
        )
    return lines
