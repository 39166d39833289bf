"""The catalogue over generated incidents (64 hosts): every row a scenario's truth cites is
matched, a first error by a root signature unless the scenario says the first error is a
consequence line (a silent host leaves only the others' timeouts)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from analyzer import api
from analyzer.signatures.catalog import KNOWLEDGE_DIR, load
from analyzer.signatures.lint import knowledge_pages, page_of_mode
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
        "SELECT path, line, signature, role FROM matches",
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


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_the_first_error_is_matched_by_a_signature_of_its_failure_mode(
    generated: Callable[[str, int], Generated], name: str
) -> None:
    """The truth's failure mode names a knowledge page (its ``modes``), and a signature of that
    page matches the first-error row: generator and catalogue tell the same story."""
    made = generated(name, 64)
    pages, _ = knowledge_pages(KNOWLEDGE_DIR)
    page_by_code = {s.code: s.knowledge for s in load().signatures}
    matched = _matched(made)
    for attempt in made.truth.attempts:
        page = page_of_mode(pages, attempt.failure_mode)
        assert page is not None, f"no knowledge page lists mode {attempt.failure_mode}"
        row = attempt.first_error
        hits = matched.filter((pl.col("path") == row.path) & (pl.col("line") == row.line))
        found = {page_by_code[code] for code in hits["signature"].to_list()}
        assert page in found, f"attempt {attempt.index}: {sorted(found)} has no {page}"
