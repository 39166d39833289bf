"""``culprit replay`` (past incidents as regression tests) and ``culprit accuracy`` (the
verdicts scored on published incident logs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from analyzer.cli import options
from analyzer.cli.exits import EXIT_FAILED
from analyzer.cli.render import console

if TYPE_CHECKING:
    from rich.console import Console

    from analyzer.replay.corpus import Score
    from analyzer.replay.run import Outcome
    from analyzer.replay.spec import ExpectedAttempt

#: The published excerpts of the source tree, scored when no corpus is named.
REAL_LOG_CORPUS: Final = Path("fixtures/real")


def replay(
    specs: Annotated[
        list[Path], typer.Argument(help="Replay spec directories, or folders holding them.")
    ],
    accept: Annotated[
        bool,
        typer.Option(help="Freeze the current verdicts into expected.toml (after the diff)."),
    ] = False,
    junit: Annotated[
        Path | None, typer.Option(help="Also write the outcomes as JUnit XML to this file.")
    ] = None,
    signatures: Annotated[
        list[Path] | None,
        typer.Option("--signatures", help="An extra signature folder for every spec; repeatable."),
    ] = None,
    jobs: options.AnalysisJobs = None,
    work: Annotated[
        Path | None, typer.Option(help="Keep each run's case and reports in this directory.")
    ] = None,
) -> None:
    """Re-analyze past incidents and compare each with its expected.toml; exit 1 on any
    difference (or with --accept, write the new verdicts).

    Example: culprit replay fixtures/replay --junit replay.xml
    """
    from analyzer import api
    from analyzer.replay.junit import write_junit

    outcomes = api.replay(specs, work=work, signatures=signatures or [], jobs=jobs, accept=accept)
    screen = console()
    _print_outcomes(screen, outcomes, accept=accept)
    if junit is not None:
        write_junit(outcomes, junit)
    failed = [o for o in outcomes if not o.passed]
    screen.print(
        f"{len(outcomes) - len(failed)} of {len(outcomes)} specs pass"
        + (" (new verdicts written to expected.toml)" if accept and failed else ""),
        markup=False,
    )
    if failed and not accept:
        raise typer.Exit(EXIT_FAILED)


def accuracy(
    corpus: Annotated[
        Path, typer.Argument(help="A real-log corpus: folders of excerpt + source + expected.")
    ] = REAL_LOG_CORPUS,
    floor: Annotated[
        Path | None,
        typer.Option(help="Exit 1 when a score is below this floor (default: CORPUS/floor.toml)."),
    ] = None,
    misses: Annotated[
        bool, typer.Option("--misses", help="List every excerpt and score that missed.")
    ] = False,
    markdown: Annotated[
        Path | None, typer.Option(help="Also write the tables as Markdown to this file.")
    ] = None,
    jobs: options.AnalysisJobs = None,
    work: Annotated[
        Path | None, typer.Option(help="Keep each excerpt's case and reports in this directory.")
    ] = None,
    bundled: Annotated[
        bool,
        typer.Option(
            "--bundled", help="Analyze each excerpt as a bundle folder instead of as files."
        ),
    ] = False,
) -> None:
    """Score the verdicts on published incident logs (fixtures/real) by platform and failure
    class, beside the naive baseline (the first line with an error keyword).

    Example: culprit accuracy fixtures/real --misses
    """
    from analyzer import api
    from analyzer.replay import accuracy as scoring
    from analyzer.replay import corpus as corpus_mod

    floor_file = floor if floor is not None else corpus / "floor.toml"
    limits = corpus_mod.read_floor(floor_file) if floor_file.is_file() else None
    scores = api.accuracy(corpus, work=work, jobs=jobs, bundled=bundled)
    screen = console()
    _print_scores(screen, scores)
    if misses:
        for line in scoring.misses(scores):
            screen.print(line, markup=False)
    if markdown is not None:
        markdown.write_text(scoring.markdown(scores), encoding="utf-8")
    if limits is not None:
        problems = corpus_mod.below_floor(corpus_mod.tally("all", scores), limits)
        for problem in problems:
            screen.print(f"below the floor ({floor_file}): {problem}", markup=False)
        if problems:
            raise typer.Exit(EXIT_FAILED)


def _print_outcomes(screen: Console, outcomes: list[Outcome], *, accept: bool) -> None:
    """One line per spec (the last attempt expected and got), then every difference."""
    from rich.table import Table

    table = Table(title="culprit replay")
    for column in ("spec", "expected", "got", "result", "s"):
        table.add_column(column, justify="right" if column == "s" else "left")
    for outcome in outcomes:
        expected = outcome.spec.expected.attempts[-1] if outcome.spec.expected.attempts else None
        got = outcome.got[-1] if outcome.got else None
        result = "error" if outcome.error else ("pass" if outcome.passed else "FAIL")
        if accept and outcome.got is not None and not outcome.passed:
            result = "accepted"
        table.add_row(
            outcome.spec.name,
            _brief(expected),
            _brief(got),
            result,
            f"{outcome.seconds:.1f}",
        )
    screen.print(table)
    for outcome in outcomes:
        if outcome.error:
            screen.print(f"{outcome.spec.path}: error: {outcome.error}", markup=False)
        for difference in outcome.differences:
            screen.print(f"{outcome.spec.path}: {difference}", markup=False)


def _brief(attempt: ExpectedAttempt | None) -> str:
    if attempt is None:
        return "–"
    who = attempt.culprit_host or attempt.culprit_kind
    return f"{attempt.failure_mode}: {who}"


def _print_scores(screen: Console, scores: list[Score]) -> None:
    """One table per grouping (platform, failure class ...) and one for all excerpts."""
    from rich.table import Table

    from analyzer.replay import accuracy as scoring

    for key, rows in scoring.tables(scores).items():
        table = Table(title=f"culprit accuracy by {key}" if key != "total" else "all excerpts")
        table.add_column(key)
        for name, _ in scoring.COLUMNS:
            table.add_column(name, justify="right")
        for row in rows:
            table.add_row(row.group, *scoring.cells(row))
        screen.print(table)
