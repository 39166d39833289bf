"""Clock offsets between hosts, measured where the logs allow it.

Some lines are written by every host at the same real moment: when the JAX coordination
service records an error, every task polls it at once and logs ``Polled an error from
coordination service`` within a fraction of a second. The spread of those stamps across hosts
is their clocks' disagreement. A host's offset is its stamp minus the median stamp; first
errors are then compared on times corrected by it. Hosts that wrote no such line (often the
culprit itself: it was dead before the error was broadcast) keep their raw times, and the
skew tolerance still applies to every comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import polars as pl

#: Signatures whose rows all hosts write at one real moment (a broadcast they all receive).
BROADCAST_SIGNATURES: Final = ("COORD-FATE-001",)
#: Fewer reporting hosts than this give no estimate (a median of two is no reference).
MIN_HOSTS: Final = 3


@dataclass(frozen=True)
class Offsets:
    """host, offset_ns (stamp minus the fleet's median stamp of the broadcast)."""

    table: pl.DataFrame
    signature: str | None
    #: The row of each host the estimate rests on.
    row_ids: list[int]

    @property
    def hosts(self) -> int:
        return self.table.height

    @property
    def largest_ns(self) -> int:
        if self.table.height == 0:
            return 0
        return int(self.table["offset_ns"].abs().max())  # type: ignore[arg-type]


NONE: Final = Offsets(pl.DataFrame(schema={"host": pl.String, "offset_ns": pl.Int64}), None, [])


def estimate(evidence: pl.DataFrame) -> Offsets:
    """Per-host offsets from one attempt's evidence (no estimate: empty table)."""
    for signature in BROADCAST_SIGNATURES:
        firsts = (
            evidence.filter(
                (pl.col("signature") == signature)
                & pl.col("host").is_not_null()
                & pl.col("ts").is_not_null()
            )
            .sort("ts", "row_id")
            .group_by("host", maintain_order=True)
            .agg(pl.col("ts").first().dt.epoch("ns").alias("t"), pl.col("row_id").first())
        )
        if firsts.height < MIN_HOSTS:
            continue
        median = int(firsts["t"].median())  # type: ignore[arg-type]
        table = firsts.select("host", (pl.col("t") - median).alias("offset_ns")).sort("host")
        return Offsets(table, signature, firsts["row_id"].to_list())
    return NONE


def corrected(evidence: pl.DataFrame, offsets: Offsets) -> pl.DataFrame:
    """``evidence`` plus ``rank_ts``: the row's time minus its host's offset (if measured)."""
    if offsets.hosts == 0:
        return evidence.with_columns(pl.col("ts").alias("rank_ts"))
    return (
        evidence.join(offsets.table, on="host", how="left")
        .with_columns(
            (pl.col("ts") - pl.duration(nanoseconds=pl.col("offset_ns").fill_null(0))).alias(
                "rank_ts"
            )
        )
        .drop("offset_ns")
    )
