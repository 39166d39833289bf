"""The catalogue over generated incidents (64 hosts): every row a scenario's truth cites is
matched, a first error by a root signature unless the scenario says the first error is a
consequence line (a silent host leaves only the others' timeouts)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from analyzer import api
from fixtures.scenarios import SCENARIOS
from tests.conftest import Generated

#: Scenarios whose first error is, by construction, a secondary line (nothing else exists).
SECONDARY_FIRST_ERROR = {"silent-host"}
#: Evidence that is routine on purpose: the silent host's last line before it went quiet is
#: an ordinary progress line; it proves when the host stopped, not what happened.
ROUTINE_EVIDENCE = {("silent-host", "Prefetched batch for step")}


def _matched(made: Generated) -> pl.DataFrame:
    """Matches joined to the cited coordinates (path, line) of their rows."""
    api.match(made.case)
    table = api.query(
        made.case,
        "SELECT f.path, r.line, m.signature, m.role FROM matches m "
        "JOIN rows r USING (row_id) JOIN files f USING (file_id)",
    )
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_every_cited_row_is_matched(generated: Callable[[str, int], Generated], name: str) -> None:
    made = generated(name, 64)
    matched = _matched(made)
    for attempt in made.truth.attempts:
        cited = [("first error", attempt.first_error)] + [("evidence", e) for e in attempt.evidence]
        for kind, row in cited:
            if any(name == n and row.text.find(t) >= 0 for n, t in ROUTINE_EVIDENCE):
                continue
            hits = matched.filter((pl.col("path") == row.path) & (pl.col("line") == row.line))
            assert hits.height, f"attempt {attempt.index} {kind} not matched: {row.text[:160]}"
            if kind == "first error":
                wanted = "secondary" if name in SECONDARY_FIRST_ERROR else "root"
                roles = set(hits["role"].to_list())
                assert wanted in roles, (
                    f"attempt {attempt.index}: the first error matches {sorted(roles)} only: "
                    f"{row.text[:160]}"
                )
