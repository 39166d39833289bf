"""Cross-run diff: what a failed run logged that a healthy run of the same job did not (rule
``cross-run-diff``, inferred; the *cross-job* pattern of L4, Jiang et al., FSE 2025).

Both runs are reduced to their log templates (:mod:`analyzer.signatures.templates`) and
compared by template text:

* **new**: templates of the failed run the baseline never logged, ranked by first appearance
  (the failure comes before its cascade);
* **changed**: templates both logged whose rate (rows per host-minute) changed by more than
  the baseline's own variation, most changed first.

The noise floor is measured on the baseline itself, split in two halves at its median row
time: a template
the second half logs and the first did not shows how many rows a template can "appear from
nowhere" with in a healthy run (a new template needs more rows than that), and the largest
rate change between the halves is the least change that counts (never below
:data:`MIN_FOLD`, and beyond three standard deviations of a Poisson count). Two healthy runs
of the same job list nothing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import polars as pl

from analyzer.case.store import Case
from analyzer.diagnose.patterns import Patterns, load_patterns
from analyzer.errors import UsageError
from analyzer.flows.cases import load_case

RULE: Final = "cross-run-diff"
#: A changed rate counts only from this factor on (either way).
MIN_FOLD: Final = 4.0
#: Templates changed by fewer rows than this in the failed run are not listed as changed.
MIN_ROWS: Final = 5


@dataclass(frozen=True)
class DiffEntry:
    """One template the failed run logged differently."""

    kind: Literal["new", "changed"]
    template: str
    rows: int
    #: Rows the baseline's rate predicts for the failed run (0 for a new template).
    expected: float
    hosts: int
    first_ts: dt.datetime | None
    first_host: str | None
    #: Where the failed run first logged it: ``path:line`` and the row id.
    path: str
    line: int
    row_id: int
    error: bool


@dataclass(frozen=True)
class DiffResult:
    baseline: Path
    failed: Path
    #: Rows a template new in the baseline's second half had at most (the floor of "new").
    new_floor: int
    #: The largest rate change between the baseline's halves (the floor of "changed").
    fold_floor: float
    entries: list[DiffEntry] = field(default_factory=list)
    rule: str = RULE


def _case_dir(path: Path) -> Path:
    """A case directory, or an analysis output directory holding one in ``case/``."""
    from analyzer.flows.analysis import CASE_SUBDIR, is_case

    if is_case(path):
        return path
    if is_case(path / CASE_SUBDIR):
        return path / CASE_SUBDIR
    raise UsageError(f"{path} is not a case (nor an analysis output with case/)", path=str(path))


def _open(path: Path, work: Path | None, name: str) -> Case:
    """A case as given, or the case of a bundle ingested into ``work/name``."""
    from analyzer.flows.analysis import is_case
    from analyzer.flows.cases import ingest

    if not path.exists():
        raise UsageError("no such file or directory", path=str(path))
    if is_case(path) or is_case(path / "case"):
        return load_case(_case_dir(path))
    if work is None:
        raise UsageError(f"{path} is a bundle: give -o DIR to ingest it into", path=str(path))
    target = work / name
    ingest([path], target)
    return load_case(target)


def _minutes(case: Case) -> float:
    first, last = case.meta.first_ts, case.meta.last_ts
    if first is None or last is None:
        return 1.0
    return max((last - first).total_seconds() / 60.0, 1.0)


def _per_template(patterns: Patterns) -> pl.DataFrame:
    """template, rows, hosts, first_ts, first_row, first_host, error (one row per text)."""
    cells = patterns.cells.join(
        patterns.templates.select("template_id", "template", "error"), on="template_id"
    )
    return (
        cells.sort("first_ts", "first_row", nulls_last=True)
        .group_by("template", maintain_order=True)
        .agg(
            pl.col("rows").sum(),
            pl.col("host").drop_nulls().n_unique().alias("hosts"),
            pl.col("first_ts").first(),
            pl.col("first_row").first(),
            pl.col("host").first().alias("first_host"),
            pl.col("error").any(),
        )
    )


def _halves(patterns: Patterns) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows per template before and after the run's median row time (half the rows each: a
    node journal that starts long before the workload does not empty the first half)."""
    middle = patterns.rows.select(pl.col("ts").drop_nulls().median()).collect().item()
    cells = patterns.cells.filter(pl.col("bucket").is_not_null()).join(
        patterns.templates.select("template_id", "template"), on="template_id"
    )
    if cells.height == 0 or middle is None:
        empty = pl.DataFrame(schema={"template": pl.String, "rows": pl.Int64})
        return empty, empty
    early = pl.col("last_ts") < middle
    first = cells.filter(early).group_by("template").agg(pl.col("rows").sum())
    second = cells.filter(~early).group_by("template").agg(pl.col("rows").sum())
    return first, second


def noise_floor(patterns: Patterns) -> tuple[int, float]:
    """(rows a template new in the second half had at most, largest fold between halves)."""
    first, second = _halves(patterns)
    late = second.join(first, on="template", how="anti")
    new_floor = int(late.select(pl.col("rows").max()).item() or 0)
    both = first.join(second, on="template", suffix="_2").filter(
        (pl.col("rows") >= MIN_ROWS) & (pl.col("rows_2") >= MIN_ROWS)
    )
    fold = 1.0
    if both.height:
        ratios = (both["rows_2"] / both["rows"]).to_list()
        fold = max(max(r, 1 / r) for r in ratios)
    return new_floor, fold


def diff_cases(baseline: Case, failed: Case) -> DiffResult:
    """The templates ``failed`` logged differently from ``baseline`` (module docstring)."""
    base_patterns = load_patterns(baseline)
    failed_patterns = load_patterns(failed)
    new_floor, fold_floor = noise_floor(base_patterns)
    fold_needed = max(MIN_FOLD, fold_floor)
    base = _per_template(base_patterns)
    now = _per_template(failed_patterns)
    base_hosts = max(1, int(base_patterns.cells["host"].drop_nulls().n_unique()))
    now_hosts = max(1, int(failed_patterns.cells["host"].drop_nulls().n_unique()))
    # Rows the baseline's rate predicts for the failed run's length and host count.
    scale = (_minutes(failed) * now_hosts) / (_minutes(baseline) * base_hosts)
    joined = now.join(
        base.select("template", pl.col("rows").alias("base_rows")), on="template", how="left"
    ).with_columns((pl.col("base_rows").fill_null(0) * scale).alias("expected"))
    new = joined.filter(pl.col("base_rows").is_null() & (pl.col("rows") > new_floor)).sort(
        "first_ts", "first_row", nulls_last=True
    )
    changed = joined.filter(pl.col("base_rows").is_not_null() & (pl.col("rows") >= MIN_ROWS))
    changed = changed.with_columns(
        (pl.col("rows") / pl.col("expected").clip(lower_bound=1e-9)).alias("fold")
    ).filter(
        ((pl.col("fold") >= fold_needed) | (pl.col("fold") <= 1 / fold_needed))
        & ((pl.col("rows") - pl.col("expected")).abs() > 3 * pl.col("expected").sqrt())
    )
    changed = changed.with_columns(pl.col("fold").log().abs().alias("change")).sort(
        "change", "first_row", descending=[True, False]
    )
    located = _locate(failed, pl.concat([new["first_row"], changed["first_row"]]).to_list())
    entries = [_entry("new", row, located) for row in new.iter_rows(named=True)] + [
        _entry("changed", row, located) for row in changed.iter_rows(named=True)
    ]
    return DiffResult(
        baseline=baseline.path,
        failed=failed.path,
        new_floor=new_floor,
        fold_floor=round(fold_floor, 3),
        entries=entries,
    )


def _entry(
    kind: Literal["new", "changed"], row: dict[str, object], located: dict[int, tuple[str, int]]
) -> DiffEntry:
    row_id = int(str(row["first_row"]))
    path, line = located.get(row_id, ("", 0))
    expected = row["expected"]
    first_ts = row["first_ts"]
    return DiffEntry(
        kind=kind,
        template=str(row["template"]),
        rows=int(str(row["rows"])),
        expected=round(float(expected), 2) if isinstance(expected, int | float) else 0.0,
        hosts=int(str(row["hosts"])),
        first_ts=first_ts if isinstance(first_ts, dt.datetime) else None,
        first_host=None if row["first_host"] is None else str(row["first_host"]),
        path=path,
        line=line,
        row_id=row_id,
        error=bool(row["error"]),
    )


def _locate(case: Case, ids: list[int]) -> dict[int, tuple[str, int]]:
    """path and line of each row id of ``case``."""
    if not ids or not case.has_rows():
        return {}
    files = pl.read_parquet(case.path / "files.parquet").select("file_id", "path")
    rows = (
        pl.scan_parquet(case.rows_glob)
        .select("row_id", "file_id", "line")
        .filter(pl.col("row_id").is_in(ids))
        .collect()
        .join(files, on="file_id", how="left")
    )
    return {int(r): (str(p), int(n)) for r, p, n in rows.select("row_id", "path", "line").rows()}


def diff(baseline: str | Path, failed: str | Path, out: str | Path | None = None) -> DiffResult:
    """Diff two runs of the same job: cases, analysis outputs or bundles (a bundle is
    ingested into ``out/baseline`` or ``out/failed``).

    Raises:
        UsageError: a bundle without ``out``.
        BundleError, CaseError: an input cannot be read.
    """
    work = None if out is None else Path(out)
    return diff_cases(_open(Path(baseline), work, "baseline"), _open(Path(failed), work, "failed"))


def fold_text(entry: DiffEntry) -> str:
    """How a changed template's rate moved, in words (``12x`` or ``1/8``)."""
    if entry.kind == "new":
        return "new"
    if entry.expected <= 0:
        return "new"
    fold = entry.rows / entry.expected
    return f"{fold:.3g}x" if fold >= 1 else f"1/{1 / fold:.3g}"


#: Shown when a diff lists nothing.
NOTHING: Final = "nothing above the baseline's noise floor"
