"""One attempt's verdict: first real error, culprit, confidence, and the statements behind them.

Every statement cites rows. Rules that conclude something the rows do not literally say are
named (``rule``) and their statements marked *inferred*:

* ``first-root-within-skew``: the first error is the earliest root, simultaneous roots of
  other hosts decided by precedence (:mod:`analyzer.diagnose.first_error`);
* ``capture-resolved``: a row names a task, worker, pod hostname, address, IP or instance ID
  that the host map ties to a host (the alias row is cited);
* ``named-by-reporters``: the host that the most distinct hosts' rows name;
* ``silent-first``: the host whose workload logs stopped first, before the others timed out;
* ``earliest-secondary``: no root matched, the earliest consequence line decides (LOW).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from analyzer.diagnose import first_error, skew, subjects
from analyzer.diagnose.attempts import Attempt
from analyzer.diagnose.evidence import CaseData
from analyzer.diagnose.findings import Confidence, CulpritKind, SubjectKind
from analyzer.diagnose.knowledge import page
from analyzer.hosts import HostMap
from analyzer.signatures.classes import UNKNOWN

#: Sources whose rows are the workload's own output (a silent host stops writing them; its
#: node journal and the control plane go on).
WORKLOAD_SOURCES = ("cloud_logging", "modelarts", "text")
#: Families whose rows say what happened to a node (corroboration of a host culprit).
NODE_FAMILIES = ("gce", "gke", "kubelet", "node")
#: At most this many rows are cited for one statement (the count is given in words).
MAX_CITED = 5


@dataclass
class Claim:
    """A statement before its citations are turned into quoted rows."""

    text: str
    basis: str
    rule: str | None
    row_ids: list[int]


@dataclass
class CulpritDraft:
    kind: CulpritKind
    subject: str
    host: str | None = None
    row_ids: list[int] = field(default_factory=list)
    support: str | None = None
    #: (kind, name) of the subject the cited rows name, as they write it.
    named: tuple[SubjectKind, str] | None = None


@dataclass
class VerdictDraft:
    """A verdict whose citations are still row ids (the caller quotes them)."""

    attempt: Attempt
    failure_mode: str
    failure_class: str
    summary: str
    confidence: Confidence
    confidence_reason: str
    first_error: dict[str, object] | None
    culprit: CulpritDraft
    claims: list[Claim]
    conflicts: list[Claim]
    negative: list[str]
    next_steps: list[str]
    lead_ids: list[int]
    timeline_ids: list[int] = field(default_factory=list)


def _ts(value: object) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    return "an unknown time"


def _cite(row: dict[str, object]) -> str:
    return f"{row['path']}:{row['line']}"


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int) else None


@dataclass(frozen=True)
class Context:
    data: CaseData
    attempt: Attempt
    evidence: pl.DataFrame
    #: host -> (time in ns, row id) of the last row of its workload's own output here.
    last_seen: dict[str, tuple[int, int]]
    tolerance_ns: int

    @property
    def host_map(self) -> HostMap:
        return self.data.host_map


def decide(context: Context) -> VerdictDraft:
    """The verdict of one attempt."""
    offsets = skew.estimate(context.evidence)
    ranked = skew.corrected(context.evidence, offsets)
    winner = first_error.pick(ranked, "root", context.tolerance_ns)
    role = "root"
    if winner is None:
        winner = first_error.pick(ranked, "secondary", context.tolerance_ns)
        role = "secondary"
    if winner is None:
        return _undetermined(context)
    row = winner.row
    knowledge = page(str(row["knowledge"]))
    claims = [
        Claim(
            f"{row['host'] or 'An unnamed host'} logged {row['signature']} ({row['title']}) at "
            f"{_ts(row['ts'])}.",
            "observed",
            None,
            [int(str(row["row_id"]))],
        ),
        _ordering_claim(context, winner, role),
        *_offset_claims(offsets),
    ]
    votes = _votes(context)
    culprit, culprit_claims = _culprit(context, row, votes)
    claims += culprit_claims
    claims += _aftermath(context, row)
    conflicts = _conflicts(culprit, votes)
    negative = _negative(context, culprit)
    confidence, reason = _confidence(row, role, culprit, conflicts)
    steps = list(knowledge.next_steps)
    if confidence == "LOW":
        steps += _collect_next(culprit)
    summary = (
        f"{knowledge.title}: {culprit.subject}; first error {row['signature']} "
        f"on {row['host'] or 'an unnamed host'} at {_ts(row['ts'])} ({_cite(row)})."
    )
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
        kind = "another root-cause signature" if other["role"] == "root" else "a consequence"
        claims.append(
            Claim(
                f"{other['hosts']} host(s) logged {other['signature']} ({other['title']}; "
                f"{kind}), first at {_ts(other['ts'])}.",
                "observed",
                None,
                [int(other["row_id"])],
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
        rule = "first-root-within-skew"
    else:
        text = (
            f"No root-cause signature matched in attempt {context.attempt.index}; this is the "
            f"earliest of {winner.candidates} consequence rows (timeouts, terminations)"
        )
        rule = "earliest-secondary"
    rivals = winner.rivals.unique("host", keep="first", maintain_order=True)
    if rivals.height:
        text += (
            f"; {rivals.height} other host(s) reported one within the {tolerance:g} s clock-skew "
            f"tolerance and lost on signature precedence or time"
        )
    return Claim(
        text + ".",
        "inferred",
        rule,
        [int(str(row["row_id"])), *rivals["row_id"].head(MAX_CITED - 1).to_list()],
    )


def _subjects_of(context: Context, row: dict[str, object]) -> list[subjects.Subject]:
    """The subjects a row names under its signature's culprit rule: a capture group's value,
    or for the ``pod`` rule the pod the row is about."""
    rule = str(row["rule"])
    if rule == "pod":
        group, value = "pod", _str(row.get("pod"))
    elif rule.startswith("capture:"):
        group = rule.split(":", 1)[1]
        value = subjects.capture_value(str(row["captures"]), group)
    else:
        return []
    if value is None:
        return []
    return subjects.resolve(
        value,
        group,
        host_map=context.host_map,
        workload=_str(row.get("workload")),
        attempt=_int(row.get("attempt")),
    )


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _alias_rows(host_map: HostMap, host: str, name: str) -> list[int]:
    """The row that proves ``name`` is a name of ``host`` (empty when it is the host itself)."""
    if name == host:
        return []
    table = host_map.table.filter((pl.col("host") == host) & ~pl.col("conflict"))
    proof = table.filter(pl.col("alias") == name)
    if proof.height == 0:
        proof = table.filter(pl.col("kind") == "task")
    return proof["row_id"].head(1).to_list()


def _votes(context: Context) -> pl.DataFrame:
    """host, reporters, row_ids: hosts that rows of other hosts name as the one at fault."""
    naming = context.evidence.filter(
        pl.col("rule").str.starts_with("capture:") & pl.col("role").is_in(["root", "secondary"])
    )
    if naming.height == 0:
        return pl.DataFrame(
            schema={"host": pl.String, "reporters": pl.UInt32, "row_ids": pl.List(pl.Int64)}
        )
    naming = naming.with_columns(
        pl.col("rule").str.strip_prefix("capture:").alias("group"),
    )
    keys = naming.select("captures", "group", "workload", "attempt").unique()
    resolved: list[dict[str, object]] = []
    for captures, group, workload, attempt in keys.rows():
        value = subjects.capture_value(captures, group)
        if value is None:
            continue
        for subject in subjects.resolve(
            value, group, host_map=context.host_map, workload=workload, attempt=attempt
        ):
            if subject.host is not None:
                resolved.append(
                    {
                        "captures": captures,
                        "group": group,
                        "workload": workload,
                        "attempt": attempt,
                        "named": subject.host,
                    }
                )
    if not resolved:
        return pl.DataFrame(
            schema={"host": pl.String, "reporters": pl.UInt32, "row_ids": pl.List(pl.Int64)}
        )
    table = pl.DataFrame(
        resolved,
        schema={
            "captures": pl.String,
            "group": pl.String,
            "workload": pl.String,
            "attempt": pl.Int32,
            "named": pl.String,
        },
    )
    joined = naming.join(table, on=["captures", "group", "workload", "attempt"], nulls_equal=True)
    return (
        joined.filter(pl.col("host").is_null() | (pl.col("host") != pl.col("named")))
        .group_by("named")
        .agg(pl.col("host").n_unique().alias("reporters"), pl.col("row_id").sort().alias("row_ids"))
        .rename({"named": "host"})
        .sort(["reporters", "host"], descending=[True, False])
    )


def _program_culprit(context: Context, row: dict[str, object]) -> tuple[CulpritDraft, list[Claim]]:
    """A program-scoped root blames the program, never a host."""
    row_id = int(str(row["row_id"]))
    claims: list[Claim] = []
    same = context.evidence.filter(pl.col("signature") == row["signature"])
    hosts = same["host"].drop_nulls().n_unique()
    support = (
        f"reported by {hosts} of {context.attempt.hosts} hosts"
        if context.attempt.hosts
        else "the rows name no host"
    )
    claims.append(
        Claim(
            f"{row['signature']} is program-scoped: the program itself fails ({support}), "
            "so no host is blamed.",
            "inferred",
            "program-scope",
            [
                row_id,
                *same.filter(pl.col("row_id") != row_id)["row_id"].head(MAX_CITED - 1).to_list(),
            ],
        )
    )
    return CulpritDraft("program", f"the program ({row['title']})", None, [row_id], support), claims


def _culprit(
    context: Context, row: dict[str, object], votes: pl.DataFrame
) -> tuple[CulpritDraft, list[Claim]]:
    """The culprit of the winning row; ``votes`` are :func:`_votes` of the attempt."""
    scope = str(row["scope"])
    rule = str(row["rule"])
    row_id = int(str(row["row_id"]))
    claims: list[Claim] = []
    if scope == "program":
        return _program_culprit(context, row)
    kind: CulpritKind = "infrastructure" if scope == "infrastructure" else "host"
    host: str | None = None
    cited = [row_id]
    unmapped: list[subjects.Subject] = []
    named_subject: tuple[SubjectKind, str] | None = None
    if rule == "emitter" and row["host"] is not None:
        host = str(row["host"])
        claims.append(
            Claim(f"The row was written by {host} about itself.", "observed", None, [row_id])
        )
    elif rule == "emitter":
        writer = _writer(row)
        if writer is not None:
            unmapped.append(writer)
    elif rule.startswith("capture:") or rule == "pod":
        named = _subjects_of(context, row)
        found = [s for s in named if s.host is not None]
        if found:
            subject = found[0]
            host = subject.host
            named_subject = (subject.kind, subject.name)
            proof = _alias_rows(context.host_map, str(host), subject.name)
            cited += proof
            claims.append(
                Claim(
                    f"The row names {subject.name!r}: {subject.how}, which the case ties to "
                    f"{host}.",
                    "inferred",
                    "capture-resolved",
                    [row_id, *proof],
                )
            )
        else:
            unmapped += named
    if host is None and votes.height:
        top = votes.row(0, named=True)
        host = str(top["host"])
        kind = "host"
        ids = list(top["row_ids"])[:MAX_CITED]
        cited += ids
        claims.append(
            Claim(
                f"Rows of {top['reporters']} host(s) name {host} as the one they lost.",
                "inferred",
                "named-by-reporters",
                ids,
            )
        )
    if host is None and unmapped:
        return _named_subject(context, row, unmapped, cited), [
            *claims,
            _unmapped_claim(unmapped, row_id),
        ]
    if host is None:
        silent = _silent_first(context)
        if silent is not None:
            host, silent_ids, text = silent
            kind = "host"
            cited += silent_ids
            claims.append(Claim(text, "inferred", "silent-first", silent_ids))
    if host is None:
        return CulpritDraft("undetermined", "not determined", None, cited), claims
    support: str | None = None
    named_by = votes.filter(pl.col("host") == host)
    if named_by.height:
        reporters = int(named_by["reporters"][0])
        support = f"named by {reporters} of {context.attempt.hosts} hosts"
        ids = list(named_by["row_ids"][0])[:MAX_CITED]
        if not any(c.rule == "named-by-reporters" for c in claims):
            claims.append(
                Claim(
                    f"{host} is {support} of this attempt.",
                    "inferred",
                    "named-by-reporters",
                    ids,
                )
            )
    silent = _silent_first(context)
    if (
        silent is not None
        and silent[0] == host
        and not any(c.rule == "silent-first" for c in claims)
    ):
        claims.append(Claim(silent[2], "inferred", "silent-first", silent[1]))
    claims += _corroboration(context, host, row_id)
    blamed = f"node {host}" if kind == "infrastructure" else f"host {host}"
    return CulpritDraft(kind, blamed, host, cited, support, named_subject), claims


def _writer(row: dict[str, object]) -> subjects.Subject | None:
    """The subject that wrote a row without a host: its rank (a ``[rank3]:`` prefix, a
    ModelArts worker index) or its pod."""
    if row.get("worker") is not None:
        return subjects.Subject(str(row["worker"]), None, "the row's writer", "rank")
    if row.get("pod") is not None:
        return subjects.Subject(str(row["pod"]), None, "the row's writer", "pod")
    return None


def _named_subject(
    context: Context,
    row: dict[str, object],
    unmapped: list[subjects.Subject],
    cited: list[int],
) -> CulpritDraft:
    """The culprit when the first error names its subject (or was written by one) and no row
    of the case ties that subject to a host: the subject itself, as the row writes it."""
    first = unmapped[0]
    words = {"task": "task", "worker": "worker", "rank": "rank", "pod": "pod", "node": "node"}
    label = words.get(first.kind, "host" if first.kind == "host" else "address")
    subject = f"{label} {first.name}"
    if len(unmapped) > 1:
        subject += f" (and {len(unmapped) - 1} more named on the same row)"
    kind: CulpritKind = "subject"
    return CulpritDraft(kind, subject, None, cited, None, (first.kind, first.name))


def _unmapped_claim(unmapped: list[subjects.Subject], row_id: int) -> Claim:
    names = ", ".join(f"{s.kind} {s.name!r}" for s in unmapped)
    if unmapped[0].how == "the row's writer":
        text = f"The row was written by {names}; no row of the case ties it to a host."
    else:
        text = f"The row names {names} as the one at fault; no row of the case ties it to a host."
    return Claim(text, "observed", None, [row_id])


def _silent_first(context: Context) -> tuple[str, list[int], str] | None:
    """The host whose workload output stopped first, well before every other host's, when
    the others then timed out: ``(host, cited row ids, statement)``."""
    if len(context.last_seen) < 2:
        return None
    ordered = sorted(context.last_seen.items(), key=lambda item: (item[1][0], item[0]))
    (host, (last, row_id)), (_, (runner_up, _)) = ordered[0], ordered[1]
    if runner_up - last <= context.tolerance_ns:
        return None
    gap = (runner_up - last) / 1e9
    text = (
        f"{host}'s workload stopped logging first: its last line is {gap:.1f} s before any "
        "other host's."
    )
    return host, [row_id], text


def _corroboration(context: Context, host: str, winner_id: int) -> list[Claim]:
    node_rows = context.evidence.filter(
        (pl.col("host") == host)
        & (pl.col("row_id") != winner_id)
        & (pl.col("family").is_in(NODE_FAMILIES) | (pl.col("scope") == "infrastructure"))
    ).unique("signature", keep="first", maintain_order=True)
    return [
        Claim(
            f"{host}: {r['signature']} ({r['title']}) at {_ts(r['ts'])}.",
            "observed",
            None,
            [int(r["row_id"])],
        )
        for r in node_rows.head(MAX_CITED).iter_rows(named=True)
    ]


def _conflicts(culprit: CulpritDraft, votes: pl.DataFrame) -> list[Claim]:
    if culprit.kind in ("program", "undetermined"):
        return []
    if culprit.host is not None:
        votes = votes.filter(pl.col("host") != culprit.host)
    conflicts = []
    for other in votes.head(3).iter_rows(named=True):
        conflicts.append(
            Claim(
                f"Rows of {other['reporters']} host(s) name {other['host']} instead.",
                "observed",
                None,
                list(other["row_ids"])[:MAX_CITED],
            )
        )
    return conflicts


def _negative(context: Context, culprit: CulpritDraft) -> list[str]:
    notes = []
    if culprit.host is not None:
        node = context.evidence.filter(
            (pl.col("host") == culprit.host) & pl.col("family").is_in(NODE_FAMILIES)
        )
        if node.height == 0:
            notes.append(
                f"No node or infrastructure event (preemption, maintenance, host error, "
                f"OOMKilled, NotReady, shutdown) was found for {culprit.host} in attempt "
                f"{context.attempt.index}."
            )
    return notes


def _confidence(
    row: dict[str, object],
    role: str,
    culprit: CulpritDraft,
    conflicts: Sequence[Claim],
) -> tuple[Confidence, str]:
    if role != "root":
        return (
            "LOW",
            "No root-cause signature matched; the verdict rests on the earliest consequence "
            f"line ({row['signature']}) and the host it points at.",
        )
    if culprit.kind == "undetermined":
        return (
            "MEDIUM",
            f"The first error ({row['signature']}) is known, but no row ties it to a host.",
        )
    if culprit.kind == "subject":
        return (
            "MEDIUM",
            f"The first error ({row['signature']}) names {culprit.subject}, but no row of the "
            "case ties that name to a host.",
        )
    precedence = int(str(row["precedence"]))
    if precedence < 0:
        return (
            "MEDIUM",
            f"The first error matched only a generic signature ({row['signature']}, "
            f"precedence {precedence}); no more specific one explains it.",
        )
    if conflicts:
        return (
            "MEDIUM",
            "The first error is specific, but other rows name a different host (see conflicts).",
        )
    return (
        "HIGH",
        f"A specific root-cause signature ({row['signature']}) matched first"
        + (f", and the culprit is {culprit.support}" if culprit.support else "")
        + ".",
    )


def _collect_next(culprit: CulpritDraft) -> list[str]:
    where = f" of {culprit.host}" if culprit.host else " of every host"
    return [
        f"Collect the workload's container logs (stdout and stderr){where} for the attempt's "
        "window, with timestamps, and re-run the analysis.",
        f"Collect the node journal (kubelet, containerd, kernel) and serial console{where}.",
        "Collect GCE audit system events and GKE node events for the window (preemption, "
        "maintenance, host errors).",
    ]


def _undetermined(context: Context) -> VerdictDraft:
    """No known signature: say so, and list the most frequent error lines as leads."""
    leads = _leads(context)
    claims = [
        Claim(
            f"No known signature matched a root-cause or consequence line in attempt "
            f"{context.attempt.index}; the most frequent error lines are listed as leads.",
            "observed",
            None,
            leads,
        )
    ]
    return VerdictDraft(
        attempt=context.attempt,
        failure_mode="undetermined",
        failure_class=UNKNOWN,
        summary="Cause not determined: no known failure signature matched; see the leads.",
        confidence="LOW",
        confidence_reason=(
            "No signature of the catalogue matched a root-cause or consequence line, so no "
            "cause, host or rank is named."
        ),
        first_error=None,
        culprit=CulpritDraft("undetermined", "not determined", None, []),
        claims=claims,
        conflicts=[],
        negative=[
            f"No root-cause or consequence signature matched in attempt {context.attempt.index}."
        ],
        next_steps=_collect_next(CulpritDraft("undetermined", "not determined")),
        lead_ids=leads,
    )


#: Severities that make a row a lead when nothing is known.
_LEAD_SEVERITIES = ("ERROR", "CRITICAL", "ALERT", "EMERGENCY")
#: Words that make a row a lead whatever its severity (plain text logs often have none).
_LEAD_WORDS = r"(?i)\b(?:error|errors|fatal|fail|failed|failure|exception|panic|critical|abort)\b"


def _leads(context: Context, top: int = 5) -> list[int]:
    """The first row of each of the most frequent error-line shapes (numbers folded)."""
    rows = context.data.rows().select("row_id", "ts", pl.col("severity").cast(pl.String), "message")
    if context.attempt.start is not None and context.attempt.end is not None:
        rows = rows.filter(
            pl.col("ts").dt.epoch("ns").is_between(context.attempt.start, context.attempt.end)
        )
    shapes = (
        rows.filter(
            pl.col("severity").is_in(_LEAD_SEVERITIES) | pl.col("message").str.contains(_LEAD_WORDS)
        )
        .with_columns(
            pl.col("message")
            .str.slice(0, 200)
            .str.replace_all(r"0x[0-9a-fA-F]+|\d+", "#")
            .alias("shape")
        )
        .group_by("shape")
        .agg(pl.len().alias("count"), pl.col("row_id").min().alias("first"))
        .sort(["count", "first"], descending=[True, False])
        .head(top)
        .collect()
    )
    return shapes["first"].to_list()
