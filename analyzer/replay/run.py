"""Re-run the analysis of every spec and compare it with what the spec expects.

Specs run in parallel processes (one per core by default): each is an independent
``analyze`` into its own work directory. A spec passes when every expected attempt agrees on
failure mode, first-error citation, culprit kind and host, the attempt counts agree, and the
report mentions every ``must_mention`` string.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.diagnose.attempts import DEFAULT_SILENCE_S
from analyzer.diagnose.findings import Findings, Verdict
from analyzer.diagnose.run import DEFAULT_SKEW_S
from analyzer.errors import AnalyzerError
from analyzer.replay.spec import NO_FIRST_ERROR, Expected, ExpectedAttempt, Spec


@dataclass(frozen=True)
class Outcome:
    """What one spec's re-analysis concluded and how it differs from the expectation."""

    spec: Spec
    #: The attempts as they would be written to expected.toml (None when analysis failed).
    got: list[ExpectedAttempt] | None
    differences: list[str]
    seconds: float
    error: str | None = None
    #: must_mention strings that the new report no longer contains, by attempt index.
    missing: dict[int, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.error is None and not self.differences


def observed(findings: Findings) -> list[ExpectedAttempt]:
    """The findings' attempts in expected.toml terms (without must_mention)."""
    return [_attempt(v) for v in findings.attempts]


def _attempt(verdict: Verdict) -> ExpectedAttempt:
    first = verdict.first_error
    return ExpectedAttempt(
        index=verdict.attempt,
        failure_mode=verdict.failure_mode,
        first_error=(
            NO_FIRST_ERROR if first is None else f"{first.citation.path}:{first.citation.line}"
        ),
        culprit_kind=verdict.culprit.kind,
        culprit_host=verdict.culprit.host,
    )


def compare(
    expected: Expected, got: list[ExpectedAttempt], texts: dict[int, str]
) -> tuple[list[str], dict[int, list[str]]]:
    """Readable differences, and the must_mention strings missing from each attempt's text."""
    differences = []
    if len(expected.attempts) != len(got):
        differences.append(f"attempts: expected {len(expected.attempts)}, got {len(got)}")
    by_index = {a.index: a for a in got}
    missing: dict[int, list[str]] = {}
    for want in expected.attempts:
        have = by_index.get(want.index)
        if have is None:
            differences.append(f"attempt {want.index}: missing")
            continue
        for name in ("failure_mode", "first_error", "culprit_kind"):
            if getattr(want, name) != getattr(have, name):
                differences.append(
                    f"attempt {want.index} {name}: expected {getattr(want, name)!r}, "
                    f"got {getattr(have, name)!r}"
                )
        if want.culprit_host is not None and want.culprit_host != have.culprit_host:
            differences.append(
                f"attempt {want.index} culprit_host: expected {want.culprit_host!r}, "
                f"got {have.culprit_host!r}"
            )
        text = texts.get(want.index, "")
        absent = [m for m in want.must_mention if m not in text]
        if absent:
            missing[want.index] = absent
            differences += [
                f"attempt {want.index} must_mention: {m!r} not in the report" for m in absent
            ]
    return differences, missing


def _texts(findings: Findings, report: str) -> dict[int, str]:
    """Where an attempt's must_mention strings are looked for: the report for the verdict's
    attempt, the attempt's findings (statements and quoted rows) for the others."""
    texts = {}
    for verdict in findings.attempts:
        if verdict.attempt == findings.verdict.attempt:
            texts[verdict.attempt] = report
        else:
            texts[verdict.attempt] = verdict.model_dump_json()
    return texts


def _baseline_case(spec: Spec, work: Path) -> Path | None:
    """The spec's baseline as a case: as given, or its bundle ingested into ``work``."""
    from analyzer.flows.analysis import CASE_SUBDIR, is_case
    from analyzer.flows.cases import ingest

    given = spec.baseline
    if given is None or is_case(given) or is_case(given / CASE_SUBDIR):
        return given
    target = work / "baseline-case"
    ingest([given], target)
    return target


def run_spec(spec: Spec, work: Path, signatures: Sequence[Path] = ()) -> Outcome:
    """Analyze one spec's input into ``work`` and compare."""
    from analyzer.flows.analysis import analyze
    from analyzer.flows.settings import AnalyzeSettings

    started = time.perf_counter()
    expected = spec.expected
    try:
        result = analyze(
            [spec.input],
            work,
            AnalyzeSettings(
                signatures=tuple(signatures),
                baseline=_baseline_case(spec, work),
                skew_s=expected.skew_s if expected.skew_s is not None else DEFAULT_SKEW_S,
                silence_s=(
                    expected.silence_s if expected.silence_s is not None else DEFAULT_SILENCE_S
                ),
            ),
        )
    except AnalyzerError as exc:
        return Outcome(spec, None, [], time.perf_counter() - started, error=str(exc))
    got = observed(result.findings)
    report = result.report_path.read_text(encoding="utf-8")
    differences, missing = compare(spec.expected, got, _texts(result.findings, report))
    return Outcome(spec, got, differences, time.perf_counter() - started, missing=missing)


def _run(args: tuple[Spec, Path, tuple[Path, ...]]) -> Outcome:
    spec, work, signatures = args
    return run_spec(spec, work, signatures)


def replay(
    specs: Sequence[Spec], work: Path, *, signatures: Sequence[Path] = (), jobs: int | None = None
) -> list[Outcome]:
    """Every spec's outcome, in the specs' order; ``work/<n>-<name>`` holds each run."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(specs)))
    tasks = [
        (spec, work / f"{number:03d}-{spec.name}", tuple(signatures))
        for number, spec in enumerate(specs)
    ]
    if jobs == 1:
        return [_run(task) for task in tasks]
    # Spawned, not forked: polars' thread pool does not survive a fork.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_run, tasks))


def accepted(outcome: Outcome) -> Expected:
    """The spec's expectation with the current verdict frozen in (must_mention strings the
    report still contains are kept; the others are dropped and listed in the differences)."""
    assert outcome.got is not None
    previous = {a.index: a for a in outcome.spec.expected.attempts}
    attempts = []
    for attempt in outcome.got:
        before = previous.get(attempt.index)
        keep = [
            m
            for m in (before.must_mention if before else [])
            if m not in outcome.missing.get(attempt.index, [])
        ]
        attempts.append(attempt.model_copy(update={"must_mention": keep}))
    return outcome.spec.expected.model_copy(update={"attempts": attempts})


def replay_specs(
    paths: Sequence[str | Path],
    *,
    work: str | Path | None = None,
    signatures: Sequence[str | Path] = (),
    jobs: int | None = None,
    accept: bool = False,
) -> list[Outcome]:
    """Re-analyze every replay spec in ``paths`` (spec directories, or folders holding them)
    and compare with its expected.toml; with ``accept``, freeze each current verdict into
    its expected.toml (the outcomes still show what changed).

    Args:
        work: where each run's case and reports go (a temporary directory, removed
            afterwards, when None).
        signatures: extra signature folders used for every spec ("what would this new
            signature change across our past incidents?").
        jobs: parallel analyses (default: one per core).

    Raises:
        UsageError: a path holds no spec, or a spec is invalid.
        SignatureError: an extra signature folder does not load.
    """
    import tempfile

    from analyzer.replay.spec import find_specs, write_expected
    from analyzer.signatures.catalog import load

    specs = find_specs([Path(p) for p in paths])
    extra = [Path(s) for s in signatures]
    load(extra)  # a broken signature folder fails once, not once per spec
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-replay-") as scratch:
            outcomes = replay(specs, Path(scratch), signatures=extra, jobs=jobs)
    else:
        outcomes = replay(specs, Path(work), signatures=extra, jobs=jobs)
    if accept:
        for outcome in outcomes:
            if outcome.got is not None:
                write_expected(outcome.spec.path, accepted(outcome))
    return outcomes
