"""Score the analyzer on the real-log corpus: analyze every excerpt, compare each verdict
with what its ``expected.toml`` says, and tally the result by platform and failure class,
beside the naive baseline (the first line with an error keyword)."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import shutil
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from analyzer.diagnose.findings import Findings
from analyzer.errors import AnalyzerError
from analyzer.replay.corpus import Excerpt, Said, Score, Tally, by, score, tally
from analyzer.replay.precision import Precision


def said(findings: Findings) -> Said:
    """The final verdict of ``findings`` in the corpus' terms."""
    verdict = findings.verdict
    first = verdict.first_error
    culprit = verdict.culprit
    subjects: list[tuple[str, str]] = []
    names: list[str] = []
    if culprit.named is not None:
        subjects.append((culprit.named.kind, culprit.named.name))
        names.append(culprit.named.name)
    if culprit.host is not None:
        subjects.append(("host", culprit.host))
        names.append(culprit.host)
        subjects += [(_alias_kind(alias), alias) for alias in culprit.aliases]
    if first is not None and first.host is not None:
        names.append(first.host)
    return Said(
        first_error=None if first is None else f"{first.citation.path}:{first.citation.line}",
        failure_class=verdict.failure_class,
        confidence=verdict.confidence,
        subjects=tuple(subjects),
        names=tuple(dict.fromkeys(names)),
    )


def _alias_kind(alias: str) -> str:
    return "task" if "task:" in alias or alias.startswith("task ") else "host"


def score_one(excerpt: Excerpt, work: Path, *, bundled: bool = False) -> Score:
    """Analyze one excerpt's log files into ``work`` and score the verdict; with ``bundled``,
    the files are first copied into a bundle folder (``work/bundle/logs/``) and the folder is
    analyzed, which must not change the verdict."""
    from analyzer.flows.analysis import analyze
    from analyzer.flows.settings import AnalyzeSettings

    inputs: list[Path] = excerpt.logs
    if bundled:
        folder = work / "bundle" / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        for log in excerpt.logs:
            shutil.copyfile(log, folder / log.name)
        inputs = [work / "bundle"]
    try:
        result = analyze(inputs, work / "out" if bundled else work, AnalyzeSettings(jobs=1))
    except AnalyzerError as exc:
        return score(excerpt, None, error=str(exc))
    found = said(result.findings)
    if bundled and found.first_error is not None:
        found = dataclasses.replace(found, first_error=found.first_error.removeprefix("logs/"))
    return score(excerpt, found)


def _score(task: tuple[Excerpt, Path, bool]) -> Score:
    excerpt, work, bundled = task
    return score_one(excerpt, work, bundled=bundled)


def run(
    excerpts: Sequence[Excerpt],
    work: Path,
    *,
    jobs: int | None = None,
    bundled: bool = False,
) -> list[Score]:
    """Every excerpt's score, in the excerpts' order (``work/<name>`` holds each analysis);
    ``bundled`` analyzes each excerpt as a bundle folder instead of as files."""
    tasks = [(excerpt, work / excerpt.name, bundled) for excerpt in excerpts]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    if jobs == 1:
        return [_score(task) for task in tasks]
    # Spawned, not forked: polars' thread pool does not survive a fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_score, tasks, chunksize=4))


def _percent(tally_: Tally, part: str) -> str:
    ratio = tally_.ratio(part)
    return "–" if ratio is None else f"{ratio:.0%}"


#: The table's columns: heading, and how a tally fills it.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("excerpts", "excerpts"),
    ("first error", "first_error"),
    ("baseline first error", "baseline"),
    ("class", "failure_class"),
    ("culprit (of named)", "culprit"),
    ("invented hosts", "invented"),
    ("honest unknown", "honest_unknown"),
)


def cells(tally_: Tally) -> list[str]:
    """One table row: counts for excerpts and invented hosts, percentages for the rest (the
    culprit among excerpts that name one, honest answers among those with no known cause)."""
    row = []
    for _, part in COLUMNS:
        if part in ("excerpts", "invented"):
            row.append(str(getattr(tally_, part)))
        elif part == "culprit":
            row.append(f"{_percent(tally_, part)} ({tally_.culprit}/{tally_.named})")
        elif part == "honest_unknown":
            row.append(f"{_percent(tally_, part)} ({tally_.honest_unknown}/{tally_.unknown})")
        else:
            row.append(f"{_percent(tally_, part)} ({getattr(tally_, part)})")
    return row


def tables(scores: Sequence[Score]) -> dict[str, list[Tally]]:
    """The tallies a report shows: by platform, by failure class, and the total."""
    return {
        "platform": by(scores, "platform"),
        "class": by(scores, "failure_class"),
        "total": [tally("all", scores)],
    }


def markdown(scores: Sequence[Score]) -> str:
    """The tables as Markdown (for docs/accuracy.md)."""
    out = []
    for key, rows in tables(scores).items():
        header = [key] + [name for name, _ in COLUMNS]
        out.append("| " + " | ".join(header) + " |")
        out.append("|---|" + "---:|" * len(COLUMNS))
        out += ["| " + " | ".join([t.group, *cells(t)]) + " |" for t in rows]
        out.append("")
    return "\n".join(out)


def misses(scores: Sequence[Score]) -> list[str]:
    """One line per excerpt and score it missed, for reading the failures."""
    lines = []
    for item in scores:
        got = item.said
        where = got.first_error if got else None
        if item.error:
            lines.append(f"{item.excerpt}: error: {item.error}")
            continue
        if not item.first_error:
            lines.append(f"{item.excerpt}: first error: got {where}")
        if not item.failure_class_ok:
            lines.append(
                f"{item.excerpt}: class: expected {item.failure_class}, "
                f"got {got.failure_class if got else None}"
            )
        if item.culprit is False:
            lines.append(f"{item.excerpt}: culprit: got {list(got.subjects) if got else None}")
        if item.invented:
            lines.append(f"{item.excerpt}: invented: {', '.join(item.invented)}")
    return lines


def score_corpus(
    corpus: str | Path,
    *,
    work: str | Path | None = None,
    jobs: int | None = None,
    bundled: bool = False,
) -> list[Score]:
    """Analyze every excerpt of a real-log corpus (``fixtures/real``) and score each verdict
    against its expected.toml (first-error line, class, culprit, invented hosts, honest
    unknowns) and the naive baseline. With ``bundled``, each excerpt is analyzed as a bundle
    folder holding its files rather than as the files themselves (the verdicts must agree).

    Raises:
        UsageError: the folder holds no excerpt, or an excerpt is invalid.
    """
    import tempfile

    from analyzer.replay.corpus import find_excerpts

    excerpts = find_excerpts(Path(corpus))
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-accuracy-") as scratch:
            return run(excerpts, Path(scratch), jobs=jobs, bundled=bundled)
    return run(excerpts, Path(work), jobs=jobs, bundled=bundled)


def signature_precision(
    corpus: str | Path, *, work: str | Path | None = None, jobs: int | None = None
) -> list[Precision]:
    """Analyze every excerpt of a real-log corpus and count, per signature, where it fires on
    INFO/DEBUG lines and on excerpts whose failure is of another class."""
    import tempfile

    from analyzer.diagnose.knowledge import pages
    from analyzer.replay.corpus import find_excerpts
    from analyzer.replay.precision import precision
    from analyzer.signatures.catalog import load

    excerpts = find_excerpts(Path(corpus))
    classes = {page.id: page.failure_class for page in pages().values()}
    catalogue = load()
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-precision-") as scratch:
            run(excerpts, Path(scratch), jobs=jobs)
            return precision(excerpts, Path(scratch), catalogue, classes)
    run(excerpts, Path(work), jobs=jobs)
    return precision(excerpts, Path(work), catalogue, classes)
