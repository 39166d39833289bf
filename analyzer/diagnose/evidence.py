"""The diagnosis' inputs, read once from a matched case: evidence rows, the host map and the
per-host activity every rule looks at.

Evidence is every match that is not noise, joined to its row (time, host, pod, workload,
worker, restart label, message, file path and line) and to its signature's role, scope,
culprit rule and precedence. Rows whose time the case could not place (``ts_quality =
out_of_range``: 9999-12-31, a clock reset, a stamp days away from the rest of its file) are
not evidence: a verdict orders rows in time, and such a row has no trustworthy place in it
(it still matched; the report counts it). It is small (the cascade of a 4,096-host incident is a few
thousand rows per signature); the rows themselves are only scanned for a few columns.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import polars as pl

from analyzer.case.layout import FILES_FILE, HOSTS_FILE, MATCHES_FILE
from analyzer.case.store import Case
from analyzer.hosts import HOSTS_SCHEMA, HostMap
from analyzer.schema import empty_rows
from analyzer.signatures.catalog import Catalogue

#: Row columns the diagnosis reads for every row of the case (no message).
ACTIVITY_COLUMNS = ("row_id", "ts", "host", "pod", "workload", "attempt", "source", "severity")
_ROW_COLUMNS = (
    "row_id",
    "file_id",
    "line",
    "ts",
    "host",
    "source",
    "pod",
    "workload",
    "worker",
    "slice",
    "attempt",
    "message",
    "extra",
    "ts_quality",
)


@dataclass(frozen=True)
class CaseData:
    """What the rules read: evidence, every row's activity columns, hosts, files."""

    case: Case
    evidence: pl.DataFrame
    host_map: HostMap
    files: pl.DataFrame

    def rows(self) -> pl.LazyFrame:
        """The case's rows (lazy; select only what you need); none at all for a case whose
        every input line was quarantined."""
        if not self.case.has_rows():
            frame = pl.from_arrow(empty_rows())
            assert isinstance(frame, pl.DataFrame)
            return frame.lazy()
        return pl.scan_parquet(self.case.rows_glob)

    def activity(self) -> pl.LazyFrame:
        """Every row's time, host, pod, workload, label and source (no message). The names
        stay categorical (cheap to scan and to compare with a string)."""
        return self.activity_table.lazy()

    @functools.cached_property
    def activity_table(self) -> pl.DataFrame:
        """:meth:`activity`, read from the row files once: half a dozen rules and the
        timeline each scanned them again (at 4,096 hosts, 20 M rows: 0.5 s a column read,
        four seconds a scan), where reading them once costs one scan and ~40 bytes a row.
        The streaming engine reads the row files side by side: the in-memory engine read
        them one after another (at 4,096 hosts, 235 files: 2.5 s against 1.4 s)."""
        return self.rows().select(ACTIVITY_COLUMNS).collect(engine="streaming")

    @functools.cached_property
    def host_names(self) -> frozenset[str]:
        """Every distinct ``rows.host`` of the case, from the activity already in memory."""
        names = self.activity_table.get_column("host").drop_nulls().unique().cast(pl.String)
        return frozenset(names.to_list())


def signature_table(catalogue: Catalogue) -> pl.DataFrame:
    """code, title, knowledge, family, scope, culprit rule, precedence, severity, status."""
    return pl.DataFrame(
        [
            {
                "signature": s.code,
                "title": s.title,
                "knowledge": s.knowledge,
                "family": s.family,
                "scope": s.scope,
                "rule": s.culprit,
                "precedence": s.precedence,
                "sig_severity": s.severity,
            }
            for s in catalogue.signatures
        ],
        schema={
            "signature": pl.String,
            "title": pl.String,
            "knowledge": pl.String,
            "family": pl.String,
            "scope": pl.String,
            "rule": pl.String,
            "precedence": pl.Int32,
            "sig_severity": pl.String,
        },
    )


def _files(case: Case) -> pl.DataFrame:
    files = pl.read_parquet(case.path / FILES_FILE)
    if "out_of_range" not in files.columns:  # a case written before the count existed
        files = files.with_columns(pl.lit(0, dtype=pl.Int64).alias("out_of_range"))
    return files.select("file_id", "path", "sha256", "rows", "quarantined", "out_of_range")


def load(case: Case, catalogue: Catalogue) -> CaseData:
    """Read the evidence of a matched case (``matches.parquet`` must exist)."""
    files = _files(case)
    hosts_path = case.path / HOSTS_FILE
    host_table = (
        pl.read_parquet(hosts_path) if hosts_path.exists() else pl.DataFrame(schema=HOSTS_SCHEMA)
    )
    matches = pl.read_parquet(case.path / MATCHES_FILE).filter(pl.col("role") != "noise")
    evidence = _join(case, matches, catalogue, files)
    return CaseData(case=case, evidence=evidence, host_map=HostMap(host_table), files=files)


def _join(
    case: Case, matches: pl.DataFrame, catalogue: Catalogue, files: pl.DataFrame
) -> pl.DataFrame:
    ids = matches["row_id"].unique()
    if case.has_rows() and ids.len():
        rows = (
            pl.scan_parquet(case.rows_glob)
            .select(_ROW_COLUMNS)
            .filter(
                pl.col("row_id").is_in(ids.implode())
                & (pl.col("ts_quality").cast(pl.String) != "out_of_range")
            )
            .with_columns(pl.col(c).cast(pl.String) for c in ("host", "source", "pod", "workload"))
            # The rank a reader found in the line (torch_npu RankID, HCCL rank[N]) when the
            # worker column holds something else (a ModelArts task index).
            .with_columns(
                pl.col("extra")
                .str.json_path_match("$.rank")
                .cast(pl.Int32, strict=False)
                .alias("rank")
            )
            .drop("extra", "ts_quality")
            .collect()
        )
    else:
        rows = pl.DataFrame(
            schema={
                "row_id": pl.Int64,
                "file_id": pl.Int32,
                "line": pl.Int32,
                "ts": pl.Datetime("ns", "UTC"),
                "host": pl.String,
                "source": pl.String,
                "pod": pl.String,
                "workload": pl.String,
                "worker": pl.Int32,
                "slice": pl.Int32,
                "attempt": pl.Int32,
                "message": pl.String,
                "rank": pl.Int32,
            }
        )
    return (
        matches.join(rows, on="row_id")
        .join(signature_table(catalogue), on="signature")
        .join(files.select("file_id", "path"), on="file_id", how="left")
        .sort("ts", "row_id", "signature", nulls_last=True)
    )
