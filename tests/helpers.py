"""Helpers shared by tests (plain functions; fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def read_table(case: Path, name: str) -> pl.DataFrame:
    """One of the case's Parquet tables (``rows`` reads every part)."""
    if name == "rows":
        parts = sorted((case / "rows").glob("*.parquet"))
        if not parts:
            return pl.DataFrame()
        return pl.concat([pl.read_parquet(p) for p in parts])
    return pl.read_parquet(case / f"{name}.parquet")
