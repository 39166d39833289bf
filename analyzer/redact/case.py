"""The redaction of one case's outputs: everything redacted but the case's own host names
(``rows.host``: a node name, or the IP a ModelArts node is named by), which are the verdict
and stand in structured fields (culprit, host column, host map) anyway."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from analyzer.case.layout import HOSTS_FILE
from analyzer.case.store import Case
from analyzer.redact.engine import VERBATIM, Redactor


def host_names(case: Case) -> set[str]:
    """The canonical host names of ``case`` (every distinct ``rows.host``)."""
    if not case.has_rows():
        return set()
    hosts = (
        pl.scan_parquet(case.rows_glob)
        # Distinct first, strings after: a few thousand names, not one per row.
        .select(pl.col("host").drop_nulls().unique().cast(pl.String))
        .collect()
    )
    return set(hosts["host"].to_list())


def host_map_names(case: Case) -> set[str]:
    """Every name of the host map (hosts and their aliases: pods, IPs, tasks…): a capture
    that is one of them resolves a culprit, and the host map travels with it."""
    path = case.path / HOSTS_FILE
    if not path.exists():
        return set()
    table = pl.read_parquet(path, columns=["host", "alias"])
    return set(table["host"].drop_nulls().to_list()) | set(table["alias"].drop_nulls().to_list())


def for_case(case: Case, *, enabled: bool = True, hosts: Iterable[str] | None = None) -> Redactor:
    """The redaction of ``case``'s outputs (none with ``enabled`` false: ``--no-redact``).
    ``hosts``: the case's host names when the caller has them already (a scan of every row
    file otherwise)."""
    if not enabled:
        return VERBATIM
    return Redactor(host_names(case) if hosts is None else hosts)
