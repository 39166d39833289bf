"""Spatial outliers: in data-parallel training every host logs the same templates, so the
host whose templates differ from its peers' is the one to look at (rule ``spatial-outlier``,
inferred; after L4, Jiang et al., FSE 2025).

For one attempt, over the hosts that logged anything (at least :data:`MIN_HOSTS`), a host
scores for:

* **rare templates**: templates at most :func:`~analyzer.diagnose.patterns.rare_limit` hosts
  logged (and not routine in the case), each worth
  ``1 / hosts that logged it``, twice as much when it is error-level;
* **missing templates**: templates at least :data:`COMMON_SHARE` of the hosts logged and this
  one did not (the share of those it lacks, counted twice);
* **a different last line**: its last row's template is not the one most hosts ended on;
* **the earliest rare error**: it logged the attempt's earliest rare error-level template;
* **first by a margin**: it logged an error-level template that other hosts logged too, more
  than the clock-skew tolerance before any of them (the failure, then its echo on the peers).

Hosts are ranked by score, then by their earliest rare error. Every reason cites rows: the
host's rare rows, its last row, and for a template it lacks, where its peers logged it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import polars as pl

from analyzer.diagnose.findings import Message
from analyzer.diagnose.patterns import rare_limit

#: Below this many hosts there are no peers to compare with.
MIN_HOSTS: Final = 3
#: A template this share of the hosts logged is common; a host without it lacks it.
COMMON_SHARE: Final = 0.75
#: A template shared by hosts that log it at most this often each is not routine chatter.
FEW_PER_HOST: Final = 3
#: At most this many hosts are ranked in the findings.
TOP: Final = 5

#: The scoring callback: host, points, reason, cited rows.
_Add = Callable[[str, float, str, list[int], Message], None]


@dataclass(frozen=True)
class Outlier:
    """One ranked host: its score, the reasons (sentences) and the rows behind them."""

    host: str
    rank: int
    score: float
    reasons: list[str]
    row_ids: list[int] = field(default_factory=list)
    #: The reasons as catalogue messages (the same order).
    reason_messages: list[Message] = field(default_factory=list)
    #: Time (or, without one, the row id) of the host's earliest rare error-level row.
    first_rare_error: int | None = None


def _message(key: str, **params: str | int | float | Message) -> Message:
    return Message(key=key, params=params)


def _order(ts: str, row: str) -> pl.Expr:
    """A sortable position: time in ns, else the row id (rows without a time keep file order)."""
    return pl.coalesce(pl.col(ts).dt.epoch("ns"), pl.col(row))


def rank_hosts(table: pl.DataFrame, margin_ns: int = 2_000_000_000) -> list[Outlier]:
    """The hosts of one attempt by outlier score (``table``: one row per template × host,
    :meth:`analyzer.diagnose.patterns.Patterns.within`; ``margin_ns``: the clock-skew
    tolerance); hosts that score nothing are left out."""
    hosted = table.filter(pl.col("host").is_not_null())
    hosts = hosted["host"].n_unique()
    if hosts < MIN_HOSTS:
        return []
    hosted = hosted.with_columns(
        pl.col("host").n_unique().over("template_id").alias("spread"),
        _order("first_ts", "first_row").alias("first_at"),
    )
    limit = rare_limit(hosts)
    rare = hosted.filter((pl.col("spread") <= limit) & ~pl.col("routine"))
    scores: dict[str, float] = {}
    reasons: dict[str, list[str]] = {}
    said: dict[str, list[Message]] = {}
    cited: dict[str, list[int]] = {}
    firsts: dict[str, int] = {}

    def add(host: str, points: float, reason: str, rows: list[int], message: Message) -> None:
        scores[host] = scores.get(host, 0.0) + points
        reasons.setdefault(host, []).append(reason)
        said.setdefault(host, []).append(message)
        cited.setdefault(host, []).extend(rows)

    per_host = (
        rare.with_columns(
            (pl.when(pl.col("error")).then(2.0).otherwise(0.5) / pl.col("spread")).alias("points")
        )
        .sort("first_at", "first_row")
        .group_by("host", maintain_order=True)
        .agg(
            pl.col("points").sum(),
            pl.len().alias("templates"),
            pl.col("template").first(),
            pl.col("first_row").head(3),
            pl.col("first_at").filter(pl.col("error")).min().alias("first_error_at"),
        )
    )
    for row in per_host.iter_rows(named=True):
        add(
            row["host"],
            float(row["points"]),
            f"{row['host']} logged {row['templates']} template(s) that at most {limit} of "
            f"{hosts} hosts logged, first {row['template']!r}.",
            list(row["first_row"]),
            _message(
                "outlier.rare",
                host=row["host"],
                count=row["templates"],
                limit=limit,
                hosts=hosts,
                template=repr(row["template"]),
            ),
        )
        if row["first_error_at"] is not None:
            firsts[row["host"]] = int(row["first_error_at"])
    _missing(hosted, hosts, add)
    _last_lines(hosted, hosts, add)
    for host, at in _ahead(hosted, margin_ns, add).items():
        firsts[host] = min(firsts.get(host, at), at)
    if firsts:
        earliest = min(firsts, key=lambda h: (firsts[h], h))
        add(
            earliest,
            1.0,
            f"{earliest} logged the attempt's earliest rare error line.",
            [],
            _message("outlier.earliest", host=earliest),
        )
    ranked = sorted(scores, key=lambda h: (-round(scores[h], 9), firsts.get(h, math.inf), h))
    return [
        Outlier(
            host=host,
            rank=index + 1,
            score=round(scores[host], 3),
            reasons=reasons[host],
            reason_messages=said[host],
            row_ids=list(dict.fromkeys(cited[host])),
            first_rare_error=firsts.get(host),
        )
        for index, host in enumerate(ranked)
    ]


def _missing(hosted: pl.DataFrame, hosts: int, add: _Add) -> None:
    """Score the hosts that lack templates most of their peers log."""
    needed = max(2, math.ceil(COMMON_SHARE * hosts))
    common = hosted.filter(pl.col("spread") >= needed)
    total = common["template_id"].n_unique()
    if total == 0:
        return
    partial = common.filter(pl.col("spread") < hosts)
    if partial.height == 0:
        return
    everyone = hosted.select("host").unique()
    wanted = partial.select("template_id", "template").unique("template_id")
    lacking = everyone.join(wanted, how="cross").join(
        partial.select("template_id", "host"), on=["template_id", "host"], how="anti"
    )
    # Where the peers logged each lacked template (one row of each, for the citation).
    example = (
        partial.sort("first_at", "first_row")
        .group_by("template_id", maintain_order=True)
        .agg(pl.col("first_row").first().alias("peer_row"))
    )
    summary = (
        lacking.join(example, on="template_id")
        .sort("template_id")
        .group_by("host")
        .agg(
            pl.len().alias("lacks"),
            pl.col("template").first(),
            pl.col("peer_row").head(2),
        )
    )
    for row in summary.iter_rows(named=True):
        add(
            row["host"],
            2.0 * row["lacks"] / total,
            f"{row['host']} lacks {row['lacks']} of the {total} template(s) that at least "
            f"{needed} of {hosts} hosts logged, e.g. {row['template']!r} (cited where peers "
            "logged it).",
            list(row["peer_row"]),
            _message(
                "outlier.lacks",
                host=row["host"],
                count=row["lacks"],
                total=total,
                needed=needed,
                hosts=hosts,
                template=repr(row["template"]),
            ),
        )


def first_by_margin(hosted: pl.DataFrame, margin_ns: int) -> pl.DataFrame:
    """template_id, host, first_row, first_at, lead_s: error-level templates of several hosts
    that one host logged more than ``margin_ns`` before every other (``hosted`` has spread
    and first_at columns)."""
    # A failure line is logged a few times per host; routine chatter (a probe that "failed
    # to trigger" every minute) starts on some host first by chance.
    few = pl.col("rows").sum().over("template_id") <= FEW_PER_HOST * pl.col("spread")
    shared = hosted.filter(
        pl.col("error")
        & ~pl.col("routine")
        & (pl.col("spread") >= 2)
        & pl.col("first_ts").is_not_null()
        & few
    )
    if shared.height == 0:
        return shared.select(
            "template_id", "host", "first_row", "first_at", "template"
        ).with_columns(pl.lit(0.0).alias("lead_s"))
    ordered = shared.sort("first_at", "first_row").group_by("template_id", maintain_order=True)
    firsts = ordered.agg(
        pl.col("host").first(),
        pl.col("first_row").first(),
        pl.col("first_at").first(),
        pl.col("template").first(),
        pl.col("first_at").get(1).alias("second_at"),
    )
    return firsts.with_columns(
        ((pl.col("second_at") - pl.col("first_at")) / 1e9).alias("lead_s")
    ).filter(pl.col("second_at") - pl.col("first_at") > margin_ns)


def _ahead(hosted: pl.DataFrame, margin_ns: int, add: _Add) -> dict[str, int]:
    """Score the hosts that logged a shared error template first by more than the margin;
    returns host -> when it did (its earliest such row)."""
    ahead = first_by_margin(hosted, margin_ns).sort("first_at", "first_row")
    summary = ahead.group_by("host", maintain_order=True).agg(
        pl.len().alias("templates"),
        pl.col("template").first(),
        pl.col("lead_s").first(),
        pl.col("first_row").head(3),
        pl.col("first_at").first(),
    )
    found = {}
    for row in summary.iter_rows(named=True):
        add(
            row["host"],
            2.0,
            f"{row['host']} logged {row['templates']} error template(s) that other hosts "
            f"logged later, first {row['template']!r}, {row['lead_s']:.1f} s before any other "
            "host.",
            list(row["first_row"]),
            _message(
                "outlier.ahead",
                host=row["host"],
                count=row["templates"],
                template=repr(row["template"]),
                lead=f"{row['lead_s']:.1f}",
            ),
        )
        found[row["host"]] = int(row["first_at"])
    return found


def _last_lines(hosted: pl.DataFrame, hosts: int, add: _Add) -> None:
    """Score the hosts whose last row's template is not the one most hosts ended on."""
    last = (
        hosted.with_columns(_order("last_ts", "last_row").alias("last_at"))
        .sort("last_at", "last_row")
        .group_by("host", maintain_order=True)
        .agg(pl.col("template_id").last(), pl.col("template").last(), pl.col("last_row").last())
    )
    counts = last.group_by("template_id").agg(pl.len().alias("n"), pl.col("template").first())
    top = counts.sort("n", "template_id", descending=[True, False]).row(0, named=True)
    if top["n"] * 2 < hosts:
        return
    for row in last.filter(pl.col("template_id") != top["template_id"]).iter_rows(named=True):
        add(
            row["host"],
            1.0,
            f"{row['host']}'s last line ({row['template']!r}) is not the one {top['n']} of "
            f"{hosts} hosts ended on ({top['template']!r}).",
            [int(row["last_row"])],
            _message(
                "outlier.last_line",
                host=row["host"],
                template=repr(row["template"]),
                count=top["n"],
                hosts=hosts,
                usual=repr(top["template"]),
            ),
        )
