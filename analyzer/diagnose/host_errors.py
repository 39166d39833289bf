"""Each host's errors as the diagnosis reads them, for pages that show one host at a time.

A host's *error rows* are its rows a signature reads as a root cause or a consequence, after
the same corrections the verdict makes (catch-all roots yielding to a specific reading,
unrelated infrastructure events set aside: :func:`analyzer.diagnose.verdict.candidates`).
A host's *first error* in an attempt is :func:`analyzer.diagnose.first_error.host_firsts`
over those rows (roots; the host's consequences when it logged no root), so the host of an
attempt's first error shows the verdict's very row. Severity plays no part: a root cause
logged at INFO is an error, an ``ERROR`` line no signature reads as one is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import polars as pl

from analyzer.case.store import Case
from analyzer.diagnose import first_error

if TYPE_CHECKING:
    from analyzer.diagnose.run import Settings
    from analyzer.signatures.catalog import Catalogue

#: Roles whose rows count as error rows, in the order a host's first error is looked for.
ERROR_ROLES: Final = ("root", "secondary")

_FIRSTS_SCHEMA: Final = pl.Schema(
    {
        "host": pl.String(),
        "attempt": pl.Int64(),
        "row_id": pl.Int64(),
        "ts": pl.Datetime("ns", "UTC"),
        "signature": pl.String(),
        "role": pl.String(),
    }
)
_ROWS_SCHEMA: Final = pl.Schema({"row_id": pl.Int64(), "host": pl.String(), "attempt": pl.Int64()})


@dataclass(frozen=True)
class HostErrors:
    """``firsts``: per host and attempt, the host's first error (host, attempt, row_id, ts,
    signature, role); ``rows``: every error row (row_id, host, attempt), once."""

    firsts: pl.DataFrame
    rows: pl.DataFrame

    def by_host(self, attempt: int | None) -> pl.DataFrame:
        """One line per host with an error row: ``errors`` (its error rows in every attempt)
        and its first error (``first_row``, ``first_ts``, ``first_signature``,
        ``first_attempt``) in ``attempt`` (the verdict's), else in its earliest attempt."""
        counts = self.rows.group_by("host").agg(pl.col("row_id").n_unique().alias("errors"))
        preferred = (pl.col("attempt") != attempt if attempt is not None else pl.lit(False)).alias(
            "_other"
        )
        firsts = (
            self.firsts.with_columns(preferred)
            .sort("_other", "attempt")
            .group_by("host", maintain_order=True)
            .first()
            .select(
                "host",
                pl.col("row_id").alias("first_row"),
                pl.col("ts").alias("first_ts"),
                pl.col("signature").alias("first_signature"),
                pl.col("attempt").alias("first_attempt"),
            )
        )
        return counts.join(firsts, on="host", how="left").sort("host")


def host_errors(case: Case, catalogue: Catalogue, settings: Settings | None = None) -> HostErrors:
    """The error rows and first errors of every host of a matched case (``matches.parquet``
    made with ``catalogue``), attempt by attempt as the diagnosis splits them."""
    # Imported here: the verdict's modules take a while to import, and the API re-exports
    # HostErrors to every client, most of which never call this.
    from analyzer.diagnose.run import Settings, attempt_contexts
    from analyzer.diagnose.verdict import candidates

    _, _, contexts = attempt_contexts(case, catalogue, settings or Settings())
    firsts: list[pl.DataFrame] = []
    rows: list[pl.DataFrame] = []
    for context in contexts:
        ranked, _, _ = candidates(context)
        errors = ranked.filter(pl.col("role").is_in(ERROR_ROLES) & pl.col("host").is_not_null())
        attempt = pl.lit(context.attempt.index, dtype=pl.Int64).alias("attempt")
        rows.append(errors.select("row_id", "host", attempt).unique("row_id"))
        roots = first_error.host_firsts(errors, "root")
        consequences = first_error.host_firsts(
            errors.filter(~pl.col("host").is_in(roots["host"].implode())), "secondary"
        )
        for found in (roots, consequences):
            firsts.append(found.select("host", "row_id", "ts", "signature", "role", attempt))
    return HostErrors(
        firsts=_frame(firsts, _FIRSTS_SCHEMA),
        rows=_frame(rows, _ROWS_SCHEMA).unique("row_id").sort("row_id"),
    )


def _frame(parts: list[pl.DataFrame], schema: pl.Schema) -> pl.DataFrame:
    columns = list(schema.names())
    typed = [p.select(columns).cast(schema) for p in parts]
    return pl.concat([pl.DataFrame(schema=schema), *typed])
