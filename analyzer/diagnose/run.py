"""Diagnose a matched case: attempts, a verdict per attempt, coverage, all as
:class:`~analyzer.diagnose.findings.Findings` whose every citation quotes its row."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

import polars as pl

from analyzer import __version__, defaults
from analyzer.case.store import Case
from analyzer.diagnose import attempts as attempts_mod
from analyzer.diagnose.draft import Claim, Context, PhaseDraft, VerdictDraft, workload_rows
from analyzer.diagnose.evidence import CaseData, load
from analyzer.diagnose.findings import (
    BundleFile,
    BundleSummary,
    Citation,
    Coverage,
    Culprit,
    EvidenceRow,
    Findings,
    FirstError,
    HostStep,
    Message,
    NamedSubject,
    Phase,
    Statement,
    Verdict,
)
from analyzer.diagnose.findings import Outlier as OutlierFinding
from analyzer.diagnose.locate import cited_line, lead_line
from analyzer.diagnose.outliers import TOP as TOP_OUTLIERS
from analyzer.diagnose.outliers import Outlier, rank_hosts
from analyzer.diagnose.patterns import load_patterns
from analyzer.diagnose.verdict import decide
from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.matching import catalogue_digest

if TYPE_CHECKING:
    from analyzer.redact import Redactor

#: Clock-skew tolerance between hosts when no measurement says otherwise (seconds).
DEFAULT_SKEW_S = defaults.SKEW_S


@dataclass(frozen=True)
class Settings:
    skew_s: float = DEFAULT_SKEW_S
    silence_s: float = attempts_mod.DEFAULT_SILENCE_S


def diagnose(
    case: Case,
    catalogue: Catalogue,
    settings: Settings | None = None,
    *,
    redact: Redactor | None = None,
    attempts: list[attempts_mod.Attempt] | None = None,
    baseline: frozenset[str] = frozenset(),
    data: CaseData | None = None,
) -> Findings:
    """The findings of a matched case (``matches.parquet`` made with ``catalogue``).

    ``baseline`` holds the template texts of a healthy run of the same job: none of them is
    ever a lead. ``attempts`` replaces the attempt split (a handoff's few rows no longer show
    the silences and pod generations the full case did; its recorded attempts do). ``data``:
    the case's evidence when the caller read it already (:func:`analyzer.diagnose.evidence.
    load` of the same case and catalogue).
    """
    settings = settings or Settings()
    data, evidence, contexts = attempt_contexts(
        case, catalogue, settings, attempts=attempts, baseline=baseline, data=data
    )
    drafts = []
    for context in contexts:
        draft = decide(context)
        draft.outliers = context.outliers
        drafts.append(draft)
    daemon = _daemon_activity(data)
    extra = daemon["last_row"].to_list()
    quote = _redaction(redact, drafts)
    quoted = _quote(data, drafts, quote, extra, catalogue)
    verdicts = [_verdict(draft, quoted, data, quote) for draft in drafts]
    return Findings(
        tool_version=__version__,
        catalogue_digest=catalogue_digest(catalogue),
        bundle=_bundle(case, data),
        verdict=_final(verdicts),
        attempts=verdicts,
        coverage=_coverage(daemon, evidence, drafts, quoted),
        settings={"skew_s": settings.skew_s, "silence_s": settings.silence_s},
    )


def attempt_contexts(
    case: Case,
    catalogue: Catalogue,
    settings: Settings,
    *,
    attempts: list[attempts_mod.Attempt] | None = None,
    baseline: frozenset[str] = frozenset(),
    data: CaseData | None = None,
) -> tuple[CaseData, pl.DataFrame, list[Context]]:
    """The case's evidence read once, labelled with its attempt (``attempt_index``), and the
    context each attempt's verdict is decided in: with the attempt's templates and the hosts
    unlike their peers (``baseline``: template texts of a healthy run, never a lead)."""
    if data is None:
        data = load(case, catalogue)
    patterns = load_patterns(case)
    activity = data.activity()
    if attempts is None:
        attempts = attempts_mod.split(activity, silence_s=settings.silence_s)
    evidence = attempts_mod.assign_labelled(data.evidence.lazy(), attempts).collect()
    last_seen, started = _workload_span(activity, attempts)
    tolerance = int(settings.skew_s * 1e9)
    contexts = []
    for attempt in attempts:
        table = patterns.within(attempt.start, attempt.end)
        contexts.append(
            Context(
                data=data,
                attempt=attempt,
                evidence=evidence.filter(pl.col("attempt_index") == attempt.index),
                last_seen=last_seen.get(attempt.index, {}),
                workload_start=started.get(attempt.index),
                tolerance_ns=tolerance,
                templates=table,
                template_rows=patterns.rows,
                outliers=rank_hosts(table, tolerance),
                known_templates=baseline,
            )
        )
    return data, evidence, contexts


def _redaction(redact: Redactor | None, drafts: list[VerdictDraft]) -> Redactor:
    """``redact`` (none when None), keeping the address a verdict blames as written when no
    host of the case stands for it ("address 10.8.0.9"): that address is the verdict."""
    from analyzer.redact import VERBATIM

    blamed = {
        name
        for draft in drafts
        if draft.culprit.named is not None and draft.culprit.host is None
        for name in (draft.culprit.named[1], re.sub(r":\d+$", "", draft.culprit.named[1]))
    }
    return (redact or VERBATIM).keeping(blamed)


def _final(verdicts: list[Verdict]) -> Verdict:
    """The attempt that ended the workload: the latest one with a first error (a trailing
    attempt with no failure in it did not end anything), else the latest one."""
    failed = [v for v in verdicts if v.first_error is not None]
    return failed[-1] if failed else verdicts[-1]


def _workload_span(
    activity: pl.LazyFrame, attempts: list[attempts_mod.Attempt]
) -> tuple[dict[int, dict[str, tuple[int, int]]], dict[int, int]]:
    """Per attempt: host -> (time in ns, row id) of the host's last workload row there, and
    the time in ns of the attempt's first workload row."""
    table = (
        attempts_mod.assign_labelled(
            activity.filter(
                workload_rows() & pl.col("host").is_not_null() & pl.col("ts").is_not_null()
            ),
            attempts,
        )
        .group_by("attempt_index", "host")
        .agg(
            pl.col("ts").max().dt.epoch("ns").alias("last"),
            pl.col("ts").min().dt.epoch("ns").alias("first"),
            pl.col("row_id").sort_by("ts", "row_id").last().alias("row_id"),
        )
        .collect()
    )
    last: dict[int, dict[str, tuple[int, int]]] = {}
    started: dict[int, int] = {}
    for index, host, last_ns, first_ns, row_id in table.select(
        "attempt_index", "host", "last", "first", "row_id"
    ).rows():
        last.setdefault(int(index), {})[str(host)] = (int(last_ns), int(row_id))
        started[int(index)] = min(started.get(int(index), int(first_ns)), int(first_ns))
    return last, started


def _cited_ids(drafts: list[VerdictDraft]) -> set[int]:
    ids: set[int] = set()
    for draft in drafts:
        for claim in draft.claims + draft.conflicts:
            ids.update(claim.row_ids)
        ids.update(draft.culprit.row_ids)
        ids.update(draft.lead_ids)
        ids.update(draft.timeline_ids)
        for outlier in draft.outliers[:TOP_OUTLIERS]:
            ids.update(outlier.row_ids)
        if draft.phase is not None:
            ids.update(draft.phase.row_ids)
            ids.update(row_id for _, _, row_id in draft.phase.last_steps)
        if draft.first_error is not None:
            ids.add(int(str(draft.first_error["row_id"])))
    return ids


def _quote(
    data: CaseData,
    drafts: list[VerdictDraft],
    redact: Redactor,
    extra: list[int],
    catalogue: Catalogue,
) -> dict[int, EvidenceRow]:
    """Every cited row, read once: path, line (the physical line that states the matched
    signature, :mod:`analyzer.diagnose.locate`), time, host, message (redacted)."""
    ids = sorted(_cited_ids(drafts) | set(extra))
    if not ids:
        return {}
    leads = {i for draft in drafts for i in draft.lead_ids}
    rows = (
        data.rows()
        .select(
            "row_id",
            "file_id",
            "line",
            "ts",
            pl.col("host").cast(pl.String),
            pl.col("reader").cast(pl.String),
            "extra",
            "message",
        )
        .filter(pl.col("row_id").is_in(ids))
        .collect()
        .join(data.files.select("file_id", "path"), on="file_id", how="left")
    )
    signatures = (
        data.evidence.filter(pl.col("row_id").is_in(ids))
        .sort("precedence", "signature", descending=[True, False])
        .group_by("row_id", maintain_order=True)
        .agg(pl.col("signature").first(), pl.col("role").first())
    )
    rows = rows.join(signatures, on="row_id", how="left")
    # Thousands of cited rows at 4,096 hosts (every node's last heartbeat): the detectors run
    # once per distinct message that their hints let through, not once per row.
    rows = rows.with_columns(redact.series(rows["message"]).alias("quoted"))
    by_code = {s.code: s for s in catalogue.signatures}
    quoted = {}
    for row in rows.iter_rows(named=True):
        first_line = int(row["line"])
        if row["signature"] is None and int(row["row_id"]) in leads:
            # A lead has no signature to say which line of a folded record states the error.
            line = lead_line(first_line, row["reader"], row["extra"], str(row["message"]))
        else:
            line = cited_line(
                first_line,
                row["reader"],
                row["extra"],
                str(row["message"]),
                by_code.get(str(row["signature"])) if row["signature"] else None,
            )
        citation = Citation(
            path=str(row["path"]),
            line=line,
            row_id=row["row_id"],
            record_line=first_line if line != first_line else None,
        )
        quoted[int(row["row_id"])] = EvidenceRow(
            citation=citation,
            ts=row["ts"],
            host=row["host"],
            signature=row["signature"],
            role=row["role"],
            message=str(row["quoted"]),
        )
    return quoted


def _citations(ids: list[int], quoted: dict[int, EvidenceRow]) -> list[Citation]:
    return [quoted[i].citation for i in dict.fromkeys(ids) if i in quoted]


def _statement(
    claim: Claim, quoted: dict[int, EvidenceRow], redact: Callable[[str], str]
) -> Statement:
    """A claim as findings state it: its text redacted (it may quote a capture: "The row
    names '10.8.0.9:8471'"), its citations as they are."""
    return Statement(
        text=redact(claim.text),
        basis="observed" if claim.basis == "observed" else "inferred",
        rule=claim.rule,
        citations=_citations(claim.row_ids, quoted),
        message=_redacted(claim.message, redact),
    )


@overload
def _redacted(message: Message, redact: Callable[[str], str]) -> Message: ...
@overload
def _redacted(message: None, redact: Callable[[str], str]) -> None: ...
def _redacted(message: Message | None, redact: Callable[[str], str]) -> Message | None:
    """``message`` with every text parameter redacted as the English text is (a parameter
    may quote a capture)."""
    if message is None:
        return None
    params: dict[str, str | int | float | Message] = {
        name: (
            redact(value)
            if isinstance(value, str)
            else _redacted(value, redact)
            if isinstance(value, Message)
            else value
        )
        for name, value in message.params.items()
    }
    return Message(key=message.key, params=params)


def _time(ns: int | None) -> dt.datetime | None:
    if ns is None:
        return None
    return dt.datetime.fromtimestamp(ns // 1_000_000_000, tz=dt.UTC).replace(
        microsecond=(ns % 1_000_000_000) // 1000
    )


def _aliases(data: CaseData, host: str | None) -> list[str]:
    if host is None:
        return []
    table = data.host_map.table
    names = table.filter((pl.col("host") == host) & ~pl.col("conflict") & (pl.col("alias") != host))
    return sorted(set(names["alias"].to_list()))


def _verdict(
    draft: VerdictDraft,
    quoted: dict[int, EvidenceRow],
    data: CaseData,
    redact: Callable[[str], str],
) -> Verdict:
    """The verdict of one attempt. Every text made from the rows (claims, summary, subject,
    reasons, next steps) is redacted; citations and the structured fields that identify the
    culprit (its host, aliases and the name a row gives it) are not."""
    first = None
    if draft.first_error is not None:
        row = draft.first_error
        row_id = int(str(row["row_id"]))
        first = FirstError(
            signature=str(row["signature"]),
            title=str(row["title"]),
            knowledge=str(row["knowledge"]),
            citation=quoted[row_id].citation,
            ts=quoted[row_id].ts,
            host=quoted[row_id].host,
            message=quoted[row_id].message,
        )
    culprit = draft.culprit
    aliases = _aliases(data, culprit.host)
    cited: list[int] = []
    for claim in draft.claims + draft.conflicts:
        cited += claim.row_ids
    cited = list(dict.fromkeys(cited + culprit.row_ids + draft.lead_ids))
    return Verdict(
        attempt=draft.attempt.index,
        start=_time(draft.attempt.start),
        end=_time(draft.attempt.end),
        boundary=draft.attempt.boundary,
        hosts=draft.attempt.hosts,
        failure_mode=draft.failure_mode,
        failure_class=draft.failure_class,
        summary=(
            redact(draft.summary.text)
            if first is None
            else f"{redact(draft.summary.text)} ({first.citation.path}:{first.citation.line})."
        ),
        confidence=draft.confidence,
        confidence_reason=redact(draft.confidence_reason.text),
        first_error=first,
        culprit=Culprit(
            kind=culprit.kind,
            host=culprit.host,
            aliases=aliases,
            subject=redact(culprit.subject),
            evidence=_citations(culprit.row_ids, quoted),
            support=culprit.support,
            named=(
                None
                if culprit.named is None
                else NamedSubject(kind=culprit.named[0], name=culprit.named[1])
            ),
            subject_message=_redacted(culprit.subject_message, redact),
            support_message=culprit.support_message,
        ),
        statements=[_statement(c, quoted, redact) for c in draft.claims],
        conflicts=[_statement(c, quoted, redact) for c in draft.conflicts],
        negative_findings=[redact(item.text) for item in draft.negative],
        next_steps=[redact(item.text) for item in draft.next_steps],
        evidence=[quoted[i] for i in cited if i in quoted and i not in draft.lead_ids],
        timeline=[quoted[i] for i in draft.timeline_ids if i in quoted],
        leads=[quoted[i] for i in draft.lead_ids if i in quoted],
        lead_rule=draft.lead_rule,
        outliers=[_outlier(o, quoted, redact) for o in draft.outliers[:TOP_OUTLIERS]],
        phase=None if draft.phase is None else _phase(draft.phase, quoted, redact),
        summary_message=_redacted(
            draft.summary.message
            if first is None
            else Message(
                key="summary.cited",
                params={
                    "summary": draft.summary.message,
                    "citation": f"{first.citation.path}:{first.citation.line}",
                },
            ),
            redact,
        ),
        confidence_message=_redacted(draft.confidence_reason.message, redact),
        negative_messages=[_redacted(item.message, redact) for item in draft.negative],
        next_step_messages=[_redacted(item.message, redact) for item in draft.next_steps],
    )


def _phase(
    phase: PhaseDraft, quoted: dict[int, EvidenceRow], redact: Callable[[str], str]
) -> Phase:
    return Phase(
        phase=phase.phase,
        step=phase.step,
        text=redact(phase.text),
        message=None if phase.message is None else _redacted(phase.message, redact),
        citations=_citations(phase.row_ids, quoted),
        last_steps=[
            HostStep(host=host, step=step, citation=quoted[row_id].citation)
            for host, step, row_id in phase.last_steps
            if row_id in quoted
        ],
    )


def _outlier(
    outlier: Outlier, quoted: dict[int, EvidenceRow], redact: Callable[[str], str]
) -> OutlierFinding:
    return OutlierFinding(
        host=outlier.host,
        rank=outlier.rank,
        score=outlier.score,
        reasons=[redact(text) for text in outlier.reasons],
        reason_messages=[_redacted(m, redact) for m in outlier.reason_messages],
        citations=_citations(outlier.row_ids, quoted),
    )


def _bundle(case: Case, data: CaseData) -> BundleSummary:
    files = [
        BundleFile(
            path=str(r["path"]),
            sha256=r["sha256"],
            rows=int(r["rows"] or 0),
            quarantined=int(r["quarantined"] or 0),
            out_of_range=int(r["out_of_range"] or 0),
        )
        for r in data.files.sort("path").iter_rows(named=True)
    ]
    return BundleSummary(
        id=case.meta.bundle.content_hash,
        files=files,
        rows=case.meta.counts.rows,
        hosts=len(data.host_names),
    )


def _daemon_activity(data: CaseData) -> pl.DataFrame:
    """host, last (time), last_row of every node's ML Diagnostics (Diagon) daemon log."""
    return (
        data.activity()
        .filter((pl.col("source") == "diagon") & pl.col("host").is_not_null())
        .group_by("host")
        .agg(
            pl.col("ts").max().alias("last"),
            pl.col("row_id").sort_by("ts", "row_id").last().alias("last_row"),
        )
        .sort("host")
        .collect()
    )


def _coverage(
    daemon: pl.DataFrame,
    evidence: pl.DataFrame,
    drafts: list[VerdictDraft],
    quoted: dict[int, EvidenceRow],
) -> list[Coverage]:
    """Per node with ML Diagnostics (Diagon) daemon logs: registered, last heartbeat, and
    whether it had stopped before the final verdict's first error (context only)."""
    if daemon.height == 0:
        return []
    registered = set(
        evidence.filter(pl.col("signature") == "DIAG-DMN-002")["host"].drop_nulls().to_list()
    )
    final = drafts[-1].first_error
    incident = final["ts"] if final is not None else None
    coverage = []
    for row in daemon.iter_rows(named=True):
        last = row["last"]
        stopped = bool(incident is not None and last is not None and last < incident)
        row_id = int(row["last_row"])
        coverage.append(
            Coverage(
                host=str(row["host"]),
                registered=str(row["host"]) in registered,
                last_seen=last,
                stopped_before_incident=stopped,
                citations=[quoted[row_id].citation] if row_id in quoted else [],
            )
        )
    return coverage
