"""One attempt's verdict: first real error, culprit (:mod:`analyzer.diagnose.culprit`),
confidence, and the statements behind them.

Every statement cites rows. Rules that conclude something the rows do not literally say are
named (``rule``) and their statements marked *inferred*:

* ``first-root-within-skew``: the first error is the earliest root, simultaneous roots of
  other hosts decided by precedence (:mod:`analyzer.diagnose.first_error`);
* ``earliest-secondary``: no root matched, the earliest consequence line decides (LOW);
* the culprit's rules are listed in :mod:`analyzer.diagnose.culprit`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analyzer.diagnose import first_error, relevance, skew
from analyzer.diagnose import leads as leads_mod
from analyzer.diagnose.culprit import blame, unexplained
from analyzer.diagnose.draft import (
    MAX_CITED,
    Claim,
    Context,
    CulpritDraft,
    Said,
    VerdictDraft,
    host_message,
    message,
    said,
    when,
    when_message,
)
from analyzer.diagnose.findings import Confidence, Message
from analyzer.diagnose.knowledge import page
from analyzer.diagnose.phases import training_phase
from analyzer.diagnose.unmapped import undetermined
from analyzer.signatures.classes import UNKNOWN


def candidates(context: Context) -> tuple[pl.DataFrame, skew.Offsets, pl.DataFrame]:
    """The attempt's evidence as the first-error rule reads it: times corrected by measured
    clock offsets (``rank_ts``), catch-all roots yielding to a specific reading of their row,
    unrelated infrastructure events made context. Also the offsets and the rows set aside
    (the verdict states both)."""
    offsets = skew.estimate(context.evidence)
    ranked = skew.corrected(context.evidence, offsets)
    ranked = first_error.yield_to_specific(ranked)
    aside = relevance.unrelated(context, ranked)
    return relevance.set_aside(ranked, aside), offsets, aside


def decide(context: Context) -> VerdictDraft:
    """The verdict of one attempt."""
    ranked, offsets, aside = candidates(context)
    winner = first_error.pick(ranked, "root", context.tolerance_ns)
    role = "root"
    if winner is None:
        winner = first_error.pick(ranked, "secondary", context.tolerance_ns)
        role = "secondary"
    if winner is None:
        return _undetermined(context, relevance.notes(context, aside))
    row = winner.row
    knowledge = page(str(row["knowledge"]))
    claims = [
        Claim(
            f"{row['host'] or 'An unnamed host'} logged {row['signature']} ({row['title']}) at "
            f"{when(row['ts'])}.",
            "observed",
            None,
            [int(str(row["row_id"]))],
            message(
                "claim.logged",
                host=host_message(row["host"], "host.unnamed_start"),
                signature=str(row["signature"]),
                title_en=str(row["title"]),
                time=when_message(row["ts"]),
            ),
        ),
        _ordering_claim(context, winner, role),
        *_offset_claims(offsets),
    ]
    blamed = blame(context, row)
    culprit, conflicts = blamed.culprit, blamed.conflicts
    negative = blamed.negative + relevance.notes(context, aside)
    claims += blamed.claims
    claims += _corroborated(context, culprit)
    claims += _aftermath(context, row)
    confidence, reason = _confidence(row, role, culprit, conflicts)
    steps = [said("knowledge.step", step, step_en=step) for step in knowledge.next_steps]
    if confidence == "LOW":
        steps += _collect_next(culprit)
    # The citation (the physical line that states the error) is added once rows are quoted.
    summary = said(
        "summary.known",
        f"{knowledge.title}: {culprit.subject}; first error {row['signature']} "
        f"on {row['host'] or 'an unnamed host'} at {when(row['ts'])}",
        title_en=knowledge.title,
        subject=culprit.subject_message or culprit.subject,
        signature=str(row["signature"]),
        host=host_message(row["host"]),
        time=when_message(row["ts"]),
    )
    phase = training_phase(context, row, [])
    return VerdictDraft(
        attempt=context.attempt,
        failure_mode=knowledge.failure_mode,
        failure_class=knowledge.failure_class,
        summary=summary,
        confidence=confidence,
        confidence_reason=reason,
        first_error=row,
        culprit=culprit,
        claims=claims,
        conflicts=conflicts,
        negative=negative,
        next_steps=steps,
        lead_ids=[],
        timeline_ids=_timeline(context, row),
        phase=phase,
    )


#: The cross-host timeline spans this long before and after the first error.
TIMELINE_WINDOW_S = 60
#: And shows at most this many rows.
TIMELINE_ROWS = 20


def _timeline(context: Context, row: dict[str, object]) -> list[int]:
    """The first row of each (host, signature) around the first error, earliest first: the
    start of the cascade as the hosts saw it."""
    if row["ts"] is None:
        return []
    window = pl.duration(seconds=TIMELINE_WINDOW_S)
    around = context.evidence.filter(
        pl.col("ts").is_between(pl.lit(row["ts"]) - window, pl.lit(row["ts"]) + window)
        & (pl.col("role") != "context")
    )
    firsts = around.sort("ts", "row_id").unique(["host", "signature"], keep="first")
    return (
        firsts.sort("ts", "row_id")["row_id"]
        .unique(maintain_order=True)
        .head(TIMELINE_ROWS)
        .to_list()
    )


#: At most this many other signatures are summarized after the first error.
AFTERMATH_SIGNATURES = 8


def _aftermath(context: Context, row: dict[str, object]) -> list[Claim]:
    """What else the attempt's hosts reported from the first error on (one statement per
    signature, citing its first row): the cascade, and any other root-cause lines."""
    winner_id = int(str(row["row_id"]))
    since = context.evidence.filter(
        (pl.col("row_id") != winner_id)
        & pl.col("role").is_in(["root", "secondary"])
        & pl.col("ts").is_not_null()
    )
    if row["ts"] is not None:
        since = since.filter(
            pl.col("ts") >= pl.lit(row["ts"]) - pl.duration(nanoseconds=context.tolerance_ns)
        )
    summary = (
        since.sort("ts", "row_id")
        .group_by("signature", maintain_order=True)
        .agg(
            pl.col("host").n_unique().alias("hosts"),
            pl.col("row_id").first(),
            pl.col("ts").first(),
            pl.col("title").first(),
            pl.col("role").first(),
        )
        .head(AFTERMATH_SIGNATURES)
    )
    claims = []
    for other in summary.iter_rows(named=True):
        root = other["role"] == "root"
        kind = "another root-cause signature" if root else "a consequence"
        claims.append(
            Claim(
                f"{other['hosts']} host(s) logged {other['signature']} ({other['title']}; "
                f"{kind}), first at {when(other['ts'])}.",
                "observed",
                None,
                [int(other["row_id"])],
                message(
                    "claim.aftermath.root" if root else "claim.aftermath.consequence",
                    hosts=int(other["hosts"]),
                    signature=str(other["signature"]),
                    title_en=str(other["title"]),
                    time=when_message(other["ts"]),
                ),
            )
        )
    return claims


def _offset_claims(offsets: skew.Offsets) -> list[Claim]:
    if offsets.hosts == 0:
        return []
    return [
        Claim(
            f"Clock offsets of {offsets.hosts} hosts were measured from {offsets.signature} "
            "(a line every task writes at the same real moment); the largest is "
            f"{offsets.largest_ns / 1e9:.2f} s, and first errors were compared on corrected "
            "times.",
            "inferred",
            "clock-offsets",
            offsets.row_ids[:MAX_CITED],
            message(
                "claim.clock_offsets",
                hosts=offsets.hosts,
                signature=str(offsets.signature),
                largest=f"{offsets.largest_ns / 1e9:.2f}",
            ),
        )
    ]


def _ordering_claim(context: Context, winner: first_error.Winner, role: str) -> Claim:
    row = winner.row
    tolerance = context.tolerance_ns / 1e9
    if role == "root":
        text = (
            f"It is the first root-cause error of attempt {context.attempt.index}: the earliest "
            f"of {winner.candidates} root-cause rows"
        )
        rule, key = "first-root-within-skew", "claim.first_root"
    else:
        text = (
            f"No root-cause signature matched in attempt {context.attempt.index}; this is the "
            f"earliest of {winner.candidates} consequence rows (timeouts, terminations)"
        )
        rule, key = "earliest-secondary", "claim.earliest_secondary"
    params: dict[str, str | int | float | Message] = {
        "attempt": context.attempt.index,
        "candidates": int(winner.candidates),
    }
    rivals = winner.rivals.unique("host", keep="first", maintain_order=True)
    if rivals.height:
        text += (
            f"; {rivals.height} other host(s) reported one within the {tolerance:g} s clock-skew "
            f"tolerance and lost on signature precedence or time"
        )
        key += ".rivals"
        params |= {"rivals": rivals.height, "tolerance": f"{tolerance:g}"}
    return Claim(
        text + ".",
        "inferred",
        rule,
        [int(str(row["row_id"])), *rivals["row_id"].head(MAX_CITED - 1).to_list()],
        message(key, **params),
    )


def _confidence(
    row: dict[str, object],
    role: str,
    culprit: CulpritDraft,
    conflicts: Sequence[Claim],
) -> tuple[Confidence, Said]:
    signature = str(row["signature"])
    if role != "root":
        return (
            "LOW",
            said(
                "confidence.no_root",
                "No root-cause signature matched; the verdict rests on the earliest consequence "
                f"line ({signature}) and the host it points at.",
                signature=signature,
            ),
        )
    if culprit.kind == "undetermined":
        return (
            "MEDIUM",
            said(
                "confidence.no_host",
                f"The first error ({signature}) is known, but no row ties it to a host.",
                signature=signature,
            ),
        )
    if culprit.kind == "subject":
        return (
            "MEDIUM",
            said(
                "confidence.unmapped_subject",
                f"The first error ({signature}) names {culprit.subject}, but no row of the "
                "case ties that name to a host.",
                signature=signature,
                subject=culprit.subject_message or culprit.subject,
            ),
        )
    precedence = int(str(row["precedence"]))
    if precedence < 0:
        return (
            "MEDIUM",
            said(
                "confidence.generic",
                f"The first error matched only a generic signature ({signature}, "
                f"precedence {precedence}); no more specific one explains it.",
                signature=signature,
                precedence=precedence,
            ),
        )
    if conflicts:
        return (
            "MEDIUM",
            said(
                "confidence.conflicts",
                "The first error is specific, but other rows name a different host (see "
                "conflicts).",
            ),
        )
    if culprit.support:
        return (
            "HIGH",
            said(
                "confidence.high.support",
                f"A specific root-cause signature ({signature}) matched first, and the culprit "
                f"is {culprit.support}.",
                signature=signature,
                support=culprit.support_message or culprit.support,
            ),
        )
    return (
        "HIGH",
        said(
            "confidence.high",
            f"A specific root-cause signature ({signature}) matched first.",
            signature=signature,
        ),
    )


def _collect_next(culprit: CulpritDraft) -> list[Said]:
    host = culprit.host
    where = f" of {host}" if host else " of every host"
    suffix = ".host" if host else ".every_host"
    params: dict[str, str | int | float | Message] = {"host": host} if host else {}
    return [
        said(
            "step.collect_container_logs" + suffix,
            f"Collect the workload's container logs (stdout and stderr){where} for the "
            "attempt's window, with timestamps, and re-run the analysis.",
            **params,
        ),
        said(
            "step.collect_node_journal" + suffix,
            f"Collect the node journal (kubelet, containerd, kernel) and serial console{where}.",
            **params,
        ),
        said(
            "step.collect_gce_events",
            "Collect GCE audit system events and GKE node events for the window (preemption, "
            "maintenance, host errors).",
        ),
    ]


def _reasons(reasons: list[Message]) -> Message:
    """Up to three outlier reasons as one message (sentences side by side)."""
    shown = reasons[:3]
    return message(f"outlier.reasons.{len(shown)}", **{f"r{i + 1}": r for i, r in enumerate(shown)})


def _corroborated(context: Context, culprit: CulpritDraft) -> list[Claim]:
    """A statement when the blamed host is also the attempt's top spatial outlier (the two
    rules agree; the verdict's confidence does not change)."""
    if culprit.host is None or not context.outliers or context.outliers[0].host != culprit.host:
        return []
    top = context.outliers[0]
    return [
        Claim(
            f"{top.host} is also the host whose logs differ most from its peers' "
            f"(score {top.score:g}): " + " ".join(top.reasons[:2]),
            "inferred",
            "spatial-outlier",
            top.row_ids[:MAX_CITED],
            message(
                "claim.outlier_corroborates",
                host=top.host,
                score=f"{top.score:g}",
                reasons=_reasons(top.reason_messages[:2]),
            ),
        )
    ]


def _undetermined(context: Context, set_aside: list[Said]) -> VerdictDraft:
    """No known signature: say so, list the leads (:mod:`analyzer.diagnose.leads`), and name
    the subject that informational rows say failed, or else the most outlying host (the
    cause stays unknown, the confidence LOW)."""
    leads = _leads(context)
    claims = [
        Claim(
            f"No known signature matched a root-cause or consequence line in attempt "
            f"{context.attempt.index}.",
            "observed",
            None,
            leads,
            message("claim.no_signature", attempt=context.attempt.index),
        )
    ]
    if leads:
        claims.append(
            Claim(
                f"{len(leads)} lead(s), ranked by evidence rather than frequency: the error lines "
                "that set the most outlying host apart first (rare, or logged before every "
                "other host), then other rare error lines, earliest first"
                + (
                    ", leaving out every template the baseline run also logged"
                    if context.known_templates
                    else ""
                )
                + ".",
                "inferred",
                leads_mod.RULE,
                leads,
                message(
                    "claim.leads.baseline" if context.known_templates else "claim.leads",
                    count=len(leads),
                ),
            )
        )
    phase = training_phase(context, None, leads)
    named = unexplained(context)
    culprit = undetermined()
    if named is not None:
        culprit = named[0]
        claims += named[1]
    else:
        suspect = _outlier_culprit(context)
        if suspect is not None:
            culprit, claim = suspect
            claims.append(claim)
    return VerdictDraft(
        attempt=context.attempt,
        failure_mode="undetermined",
        failure_class=UNKNOWN,
        summary=said(
            "summary.undetermined",
            "Cause not determined: no known failure signature matched; see the leads.",
        ),
        confidence="LOW",
        confidence_reason=(
            said(
                "confidence.undetermined.named",
                "No signature of the catalogue matched a root-cause or consequence line, so no "
                "cause is named; the culprit is only who the rows say failed.",
            )
            if named is not None
            else said(
                "confidence.undetermined.outlier",
                "No signature of the catalogue matched a root-cause or consequence line, so no "
                "cause is named; the host is only the one whose logs differ most from its "
                "peers' (inferred).",
            )
            if culprit.host is not None
            else said(
                "confidence.undetermined",
                "No signature of the catalogue matched a root-cause or consequence line, so no "
                "cause, host or rank is named.",
            )
        ),
        first_error=None,
        culprit=culprit,
        claims=claims,
        conflicts=[],
        negative=[
            said(
                "negative.no_signature",
                "No root-cause or consequence signature matched in attempt "
                f"{context.attempt.index}.",
                attempt=context.attempt.index,
            ),
            *set_aside,
        ],
        next_steps=_collect_next(undetermined()),
        lead_ids=leads,
        lead_rule=leads_mod.RULE if leads else None,
        phase=phase,
    )


def _leads(context: Context) -> list[int]:
    if context.templates is None:
        return []
    return leads_mod.rank_leads(
        context.templates,
        context.outliers,
        context.known_templates,
        margin_ns=context.tolerance_ns,
    )


def _outlier_culprit(context: Context) -> tuple[CulpritDraft, Claim] | None:
    """The top spatial outlier as the culprit when it stands clear of the runner-up."""
    if not context.outliers:
        return None
    top = context.outliers[0]
    runner_up = context.outliers[1].score if len(context.outliers) > 1 else 0.0
    if top.score <= runner_up:
        return None
    score, runner = f"{top.score:g}", f"{runner_up:g}"
    support = said(
        "support.spatial_outlier",
        f"spatial outlier, score {score} (next {runner})",
        score=score,
        next=runner,
    )
    ids = top.row_ids[:MAX_CITED]
    claim = Claim(
        f"{top.host}'s logs differ most from its peers' in attempt {context.attempt.index} "
        f"(score {score}, next {runner}): " + " ".join(top.reasons[:3]),
        "inferred",
        "spatial-outlier",
        ids,
        message(
            "claim.spatial_outlier",
            host=top.host,
            attempt=context.attempt.index,
            score=score,
            next=runner,
            reasons=_reasons(top.reason_messages[:3]),
        ),
    )
    subject = said("subject.host", f"host {top.host}", host=top.host)
    culprit = CulpritDraft(
        "host",
        subject.text,
        top.host,
        ids,
        support.text,
        subject_message=subject.message,
        support_message=support.message,
    )
    return culprit, claim
