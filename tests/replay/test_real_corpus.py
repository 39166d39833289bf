"""The verdicts on fixtures/real, published incident logs nobody on the team wrote, scored
against what a careful reader concludes from each: at or above the floor recorded in
fixtures/real/floor.toml, and the same whether an excerpt is analyzed as files or as a bundle
folder holding them."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.replay.accuracy import misses, run
from analyzer.replay.corpus import Score, below_floor, find_excerpts, read_floor, tally

CORPUS = Path(__file__).parents[2] / "fixtures" / "real"


@pytest.fixture(scope="module")
def as_files(tmp_path_factory: pytest.TempPathFactory) -> list[Score]:
    return run(find_excerpts(CORPUS), tmp_path_factory.mktemp("files"))


def test_the_corpus_scores_at_or_above_its_floor(as_files: list[Score]) -> None:
    problems = below_floor(tally("all", as_files), read_floor(CORPUS / "floor.toml"))
    assert problems == [], "\n".join(problems + misses(as_files))
    assert not [s for s in as_files if s.error], [s.error for s in as_files if s.error]


def test_a_file_alone_and_inside_a_bundle_get_the_same_verdict(
    as_files: list[Score], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """One excerpt of every kind (platform and format) as a bundle folder; `culprit accuracy
    --bundled` runs the whole corpus that way (docs/accuracy.md)."""
    excerpts = find_excerpts(CORPUS)
    kinds: dict[tuple[str, str], int] = {}
    for index, excerpt in enumerate(excerpts):
        kinds.setdefault((excerpt.expected.platform, excerpt.expected.format), index)
    chosen = sorted(kinds.values())
    assert len(chosen) >= 20
    bundled = run([excerpts[i] for i in chosen], tmp_path_factory.mktemp("bundled"), bundled=True)
    differ = [
        f"{as_files[i].excerpt}: {as_files[i].said} != {inside.said}"
        for i, inside in zip(chosen, bundled, strict=True)
        if as_files[i].said != inside.said
    ]
    assert differ == []
