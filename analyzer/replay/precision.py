"""How precise each signature is on the real-log corpus: where it fires on lines a healthy run
also writes (INFO and DEBUG lines), and on excerpts whose failure is of another class.

Read from the cases an accuracy run left behind (``culprit accuracy --work DIR``): every
excerpt's matches joined to its rows' severity and to its expected class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import polars as pl

from analyzer.case.layout import MATCHES_FILE, ROWS_DIR
from analyzer.replay.corpus import Excerpt
from analyzer.signatures.catalog import Catalogue

#: Severities of lines a healthy run writes too.
QUIET: Final = ("DEBUG", "INFO", "NOTICE")


@dataclass(frozen=True)
class Precision:
    """One signature's matches over the corpus."""

    code: str
    role: str
    failure_class: str
    #: Rows matched, and excerpts with at least one.
    rows: int
    excerpts: int
    #: Rows whose own level is INFO/DEBUG/NOTICE.
    quiet_rows: int
    #: Excerpts whose expected class is neither the signature's nor "unknown".
    other_class: int
    #: Excerpts whose expected class is "unknown" (the log shows no cause).
    unknown: int

    @property
    def false_positives(self) -> int:
        """Quiet rows plus other-class excerpts: what a precise root signature keeps at 0."""
        return self.quiet_rows + self.other_class


def _matched(case: Path) -> pl.DataFrame:
    matches = case / MATCHES_FILE
    if not matches.is_file() or not any((case / ROWS_DIR).glob("*.parquet")):
        return pl.DataFrame(schema={"signature": pl.String, "severity": pl.String})
    found = pl.read_parquet(matches).select("row_id", "signature")
    rows = (
        pl.scan_parquet(str(case / ROWS_DIR / "*.parquet"))
        .select("row_id", pl.col("severity").cast(pl.String))
        .filter(pl.col("row_id").is_in(found["row_id"].implode()))
        .collect()
    )
    return found.join(rows, on="row_id", how="left").select("signature", "severity")


def precision(
    excerpts: Sequence[Excerpt], work: Path, catalogue: Catalogue, classes: dict[str, str]
) -> list[Precision]:
    """Per signature of ``catalogue`` that matched anything: its precision over the cases in
    ``work/<excerpt>/case`` (an accuracy run's). ``classes`` maps a knowledge page to its class.
    Roots first, the least precise first."""
    frames = []
    for excerpt in excerpts:
        matched = _matched(work / excerpt.name / "case")
        if matched.height:
            frames.append(
                matched.with_columns(
                    pl.lit(excerpt.name).alias("excerpt"),
                    pl.lit(excerpt.expected.failure_class).alias("expected"),
                )
            )
    if not frames:
        return []
    table = pl.concat(frames)
    signatures = {s.code: s for s in catalogue.signatures}
    result = []
    for (code,), group in table.group_by("signature", maintain_order=True):
        signature = signatures.get(str(code))
        if signature is None:
            continue
        own = classes.get(signature.knowledge, "unknown")
        per_excerpt = group.unique("excerpt")
        result.append(
            Precision(
                code=signature.code,
                role=signature.role,
                failure_class=own,
                rows=group.height,
                excerpts=per_excerpt.height,
                quiet_rows=group.filter(pl.col("severity").is_in(QUIET)).height,
                other_class=per_excerpt.filter(
                    (pl.col("expected") != own) & (pl.col("expected") != "unknown")
                ).height,
                unknown=per_excerpt.filter(pl.col("expected") == "unknown").height,
            )
        )
    order = {"root": 0, "secondary": 1, "context": 2, "noise": 3}
    return sorted(result, key=lambda p: (order.get(p.role, 4), -p.false_positives, p.code))
