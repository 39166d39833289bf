"""Who is to blame for an attempt's first error: the host that wrote it, the subject it names
(resolved through the host map, or kept as written when nothing ties it to a host), the host
most others name, or the host that went silent first; node events that corroborate it and rows
that name someone else (conflicts).

Rules whose statements are *inferred*:

* ``capture-resolved``: a row names a task, worker, pod hostname, address, IP or instance ID
  that the host map ties to a host (the alias row is cited);
* ``named-by-reporters``: the host that the most distinct hosts' rows name;
* ``silent-first``: the host whose workload logs stopped first, before the others timed out;
* ``program-scope``: a program-scoped first error blames the program, never a host.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from analyzer.diagnose import subjects
from analyzer.diagnose.draft import (
    MAX_CITED,
    NODE_FAMILIES,
    Claim,
    Context,
    CulpritDraft,
    Said,
    as_int,
    as_str,
    message,
    said,
    when,
    when_message,
)
from analyzer.diagnose.findings import CulpritKind, SubjectKind
from analyzer.diagnose.unmapped import (
    how_of,
    kind_message,
    named_subject,
    reporter,
    undetermined,
    unmapped_claim,
    writer,
)
from analyzer.hosts import HostMap


def _subjects_of(context: Context, row: dict[str, object]) -> list[subjects.Subject]:
    """The subjects a row names under its signature's culprit rule: a capture group's value,
    or for the ``pod`` rule the pod the row is about."""
    rule = str(row["rule"])
    if rule == "pod":
        group, value = "pod", as_str(row.get("pod"))
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
        workload=as_str(row.get("workload")),
        attempt=as_int(row.get("attempt")),
    )


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
        said(
            "support.reported_by",
            f"reported by {hosts} of {context.attempt.hosts} hosts",
            hosts=hosts,
            total=context.attempt.hosts,
        )
        if context.attempt.hosts
        else said("support.no_host", "the rows name no host")
    )
    claims.append(
        Claim(
            f"{row['signature']} is program-scoped: the program itself fails ({support.text}), "
            "so no host is blamed.",
            "inferred",
            "program-scope",
            [
                row_id,
                *same.filter(pl.col("row_id") != row_id)["row_id"].head(MAX_CITED - 1).to_list(),
            ],
            message(
                "claim.program_scope", signature=str(row["signature"]), support=support.message
            ),
        )
    )
    where = _where_reported(context, row)
    subject = said("subject.program", f"the program ({row['title']})", title_en=str(row["title"]))
    if where is not None:
        subject = said(
            "subject.program.where",
            f"{subject.text}, reported by {where.kind} {where.name}",
            title_en=str(row["title"]),
            kind=kind_message(where.kind),
            name=where.name,
        )
        claims.append(
            Claim(
                f"The row names {where.kind} {where.name!r} as where the program failed.",
                "observed",
                None,
                [row_id],
                message(
                    "claim.program_where",
                    kind=kind_message(where.kind),
                    name=repr(where.name),
                ),
            )
        )
    named = None if where is None else (where.kind, where.name)
    return (
        CulpritDraft(
            "program",
            subject.text,
            None,
            [row_id],
            support.text,
            named,
            subject.message,
            support.message,
        ),
        claims,
    )


def _where_reported(context: Context, row: dict[str, object]) -> subjects.Subject | None:
    """The task, worker or rank a program-scoped first error's row names (through any
    signature that captures a subject on that row): where the program's failure surfaced."""
    on_row = context.evidence.filter(
        (pl.col("row_id") == row["row_id"]) & pl.col("rule").str.starts_with("capture:")
    )
    for other in on_row.iter_rows(named=True):
        for found in _subjects_of(context, other):
            if found.kind in ("task", "worker", "rank"):
                return found
    return None


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
    named_as: tuple[SubjectKind, str] | None = None
    if rule == "emitter" and row["host"] is not None:
        host = str(row["host"])
        claims.append(
            Claim(
                f"The row was written by {host} about itself.",
                "observed",
                None,
                [row_id],
                message("claim.self", host=host),
            )
        )
    elif rule == "emitter":
        wrote = writer(row) or reporter(context, row)
        if wrote is not None:
            unmapped.append(wrote)
    elif rule.startswith("capture:") or rule == "pod":
        named = _subjects_of(context, row)
        found = [s for s in named if s.host is not None]
        if found:
            subject = found[0]
            host = subject.host
            named_as = (subject.kind, subject.name)
            proof = _alias_rows(context.host_map, str(host), subject.name)
            cited += proof
            claims.append(
                Claim(
                    f"The row names {subject.name!r}: {subject.how}, which the case ties to "
                    f"{host}.",
                    "inferred",
                    "capture-resolved",
                    [row_id, *proof],
                    message(
                        "claim.names",
                        name=repr(subject.name),
                        how=how_of(subject),
                        host=str(host),
                    ),
                )
            )
        else:
            unmapped += named
    if host is None and not unmapped:
        follows = _companion(context, row)
        if follows is not None:
            companion_id, named = follows
            cited.append(companion_id)
            found = [s for s in named if s.host is not None]
            if found:
                host = found[0].host
                named_as = (found[0].kind, found[0].name)
                claims.append(
                    Claim(
                        f"The next line of the same error names {found[0].name!r}: "
                        f"{found[0].how}, which the case ties to {host}.",
                        "inferred",
                        "capture-resolved",
                        [row_id, companion_id],
                        message(
                            "claim.next_line_names",
                            name=repr(found[0].name),
                            how=how_of(found[0]),
                            host=str(host),
                        ),
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
                message("claim.lost", reporters=int(top["reporters"]), host=host),
            )
        )
    if host is None and unmapped:
        return named_subject(context, row, unmapped, cited), [
            *claims,
            unmapped_claim(unmapped, cited),
        ]
    if host is None:
        silent = _silent_first(context)
        if silent is not None:
            host, silent_ids, text = silent
            kind = "host"
            cited += silent_ids
            claims.append(Claim(text.text, "inferred", "silent-first", silent_ids, text.message))
    if host is None:
        draft = undetermined()
        draft.row_ids = cited
        return draft, claims
    support: Said | None = None
    named_by = votes.filter(pl.col("host") == host)
    if named_by.height:
        reporters = int(named_by["reporters"][0])
        support = said(
            "support.named_by",
            f"named by {reporters} of {context.attempt.hosts} hosts",
            reporters=reporters,
            total=context.attempt.hosts,
        )
        ids = list(named_by["row_ids"][0])[:MAX_CITED]
        if not any(c.rule == "named-by-reporters" for c in claims):
            claims.append(
                Claim(
                    f"{host} is {support.text} of this attempt.",
                    "inferred",
                    "named-by-reporters",
                    ids,
                    message("claim.named_by", host=host, support=support.message),
                )
            )
    silent = _silent_first(context)
    if (
        silent is not None
        and silent[0] == host
        and not any(c.rule == "silent-first" for c in claims)
    ):
        claims.append(
            Claim(silent[2].text, "inferred", "silent-first", silent[1], silent[2].message)
        )
    claims += _corroboration(context, host, row_id)
    blamed = (
        said("subject.node", f"node {host}", host=host)
        if kind == "infrastructure"
        else said("subject.host", f"host {host}", host=host)
    )
    return (
        CulpritDraft(
            kind,
            blamed.text,
            host,
            cited,
            None if support is None else support.text,
            named_as,
            blamed.message,
            None if support is None else support.message,
        ),
        claims,
    )


#: How many rows after the first error a line of the same error may name its subject.
COMPANION_ROWS = 10


def _companion(
    context: Context, row: dict[str, object]
) -> tuple[int, list[subjects.Subject]] | None:
    """A row that goes on stating the first error and names the subject it does not: the
    next rows of the same file (within :data:`COMPANION_ROWS`) matched by a signature of the
    same knowledge page with a culprit rule (Ray's ``OutOfMemoryError`` line, then ``Memory on
    the node (IP: …)``)."""
    row_id = int(str(row["row_id"]))
    following = context.evidence.filter(
        (pl.col("knowledge") == row["knowledge"])
        & (pl.col("file_id") == row["file_id"])
        & (pl.col("row_id") > row_id)
        & (pl.col("row_id") <= row_id + COMPANION_ROWS)
        & (pl.col("rule").str.starts_with("capture:") | (pl.col("rule") == "pod"))
    ).sort("row_id")
    for other in following.iter_rows(named=True):
        named = _subjects_of(context, other)
        if named:
            return int(other["row_id"]), named
    return None


def _silent_first(context: Context) -> tuple[str, list[int], Said] | None:
    """The host whose workload output stopped first, well before every other host's, when
    the others then timed out: ``(host, cited row ids, statement)``."""
    if len(context.last_seen) < 2:
        return None
    ordered = sorted(context.last_seen.items(), key=lambda item: (item[1][0], item[0]))
    (host, (last, row_id)), (_, (runner_up, _)) = ordered[0], ordered[1]
    if runner_up - last <= context.tolerance_ns:
        return None
    gap = (runner_up - last) / 1e9
    text = said(
        "claim.silent_first",
        f"{host}'s workload stopped logging first: its last line is {gap:.1f} s before any "
        "other host's.",
        host=host,
        gap=f"{gap:.1f}",
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
            f"{host}: {r['signature']} ({r['title']}) at {when(r['ts'])}.",
            "observed",
            None,
            [int(r["row_id"])],
            message(
                "claim.node_event",
                host=host,
                signature=str(r["signature"]),
                title_en=str(r["title"]),
                time=when_message(r["ts"]),
            ),
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
                message(
                    "claim.instead", reporters=int(other["reporters"]), host=str(other["host"])
                ),
            )
        )
    return conflicts


def _negative(context: Context, culprit: CulpritDraft) -> list[Said]:
    notes = []
    if culprit.host is not None:
        node = context.evidence.filter(
            (pl.col("host") == culprit.host) & pl.col("family").is_in(NODE_FAMILIES)
        )
        if node.height == 0:
            notes.append(
                said(
                    "negative.no_node_event",
                    f"No node or infrastructure event (preemption, maintenance, host error, "
                    f"OOMKilled, NotReady, shutdown) was found for {culprit.host} in attempt "
                    f"{context.attempt.index}.",
                    host=culprit.host,
                    attempt=context.attempt.index,
                )
            )
    return notes


@dataclass(frozen=True)
class Blame:
    """The culprit of a first error, the statements behind it, the rows that name someone
    else, and what was looked for and not found."""

    culprit: CulpritDraft
    claims: list[Claim]
    conflicts: list[Claim]
    negative: list[Said]


def blame(context: Context, row: dict[str, object]) -> Blame:
    """Who is to blame for ``row``, the attempt's first error (see the module docstring)."""
    votes = _votes(context)
    culprit, claims = _culprit(context, row, votes)
    return Blame(culprit, claims, _conflicts(culprit, votes), _negative(context, culprit))


def unexplained(context: Context) -> tuple[CulpritDraft, list[Claim]] | None:
    """When no signature explains the attempt, the subject that informational rows name as
    the one that failed (torchrun's "Root Cause (first observed failure): rank 3", a kubelet
    that cannot find its own node): the earliest such row, its first named subject. The cause
    stays unknown; only who failed is observed."""
    naming = context.evidence.filter(
        (pl.col("role") == "context")
        & (pl.col("rule").str.starts_with("capture:") | (pl.col("rule") == "pod"))
    ).sort("ts", "row_id", nulls_last=True)
    for row in naming.iter_rows(named=True):
        named = _subjects_of(context, row)
        if not named:
            continue
        row_id = int(row["row_id"])
        subject = named[0]
        if subject.host is not None:
            proof = _alias_rows(context.host_map, subject.host, subject.name)
            draft = CulpritDraft(
                "host",
                f"host {subject.host}",
                subject.host,
                [row_id, *proof],
                None,
                (subject.kind, subject.name),
                message("subject.host", host=subject.host),
            )
        else:
            draft = named_subject(context, row, named, [row_id])
        claim = Claim(
            f"No signature explains the failure, but {row['signature']} ({row['title']}) names "
            f"{subject.kind} {subject.name!r} as the one that failed.",
            "observed",
            None,
            [row_id],
            message(
                "claim.unexplained_names",
                signature=str(row["signature"]),
                title_en=str(row["title"]),
                kind=kind_message(subject.kind),
                name=repr(subject.name),
            ),
        )
        return draft, [claim]
    return None
