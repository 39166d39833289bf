"""The engine beyond TPU logs: first alert and culprit node per BlueGene/L alert episode.

The loghub BGL 2k sample (``../shared/data/loghub/BGL``, skipped when absent), its 40 alert
episodes, each window analyzed with its label column stripped, in a fresh case, with the
catalogue plus the test-only signatures of ``tests/data/bgl-signatures``; the protocol, the
modes and the scoring are :mod:`benchmarks.bgl` (``python -m benchmarks.bgl`` prints the same
scores; they are recorded in ``benchmarks/RESULTS.md``).

Measured 2026-11-30: every row gets its time and node from the text reader's ``bgl_ras``
grammar; first row 40/40, node 40/40, no ``-`` line reported (see RESULTS.md). The floors
below leave a little room.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.signatures.lint import lint
from benchmarks import bgl

Results = dict[str, tuple[bgl.Score, list[bgl.Answer]]]

#: Floors (out of 40 episodes) and ceilings the measured scores meet.
MATCH_FIRST_ROW_FLOOR = 38
FIRST_ROW_FLOOR = 38
NODE_FLOOR = 38
MAX_FALSE_ALERTS = 1


@pytest.fixture(scope="module")
def bgl_dir() -> Path:
    """The loghub BGL sample next to the repository, or skip."""
    if not (bgl.BGL_DIR / "BGL_2k.log").is_file():
        pytest.skip(f"loghub BGL sample not found at {bgl.BGL_DIR} (it lives in ../shared)")
    return bgl.BGL_DIR


@pytest.fixture(scope="module")
def results(bgl_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Results:
    """The scored mode, every episode analyzed once per module."""
    work = tmp_path_factory.mktemp("bgl")
    found = {mode: bgl.evaluate(mode, work, bgl_dir) for mode in ("text",)}
    print("\n" + bgl.table([score for score, _ in found.values()]))
    return found


def test_the_bgl_signatures_are_clean() -> None:
    # With the packaged catalogue: codes and names must not clash with it.
    assert [str(problem) for problem in lint([bgl.SIGNATURES_DIR])] == []


@pytest.mark.loghub
def test_episodes_and_windows(bgl_dir: Path, tmp_path: Path) -> None:
    episodes = bgl.episodes(bgl_dir)  # raises when they differ from the dataset's table
    assert len(episodes) == 40
    sample = bgl.read_sample(bgl_dir)
    alert_ids = {line.line_id for line in sample if line.label != "-"}
    assert len(alert_ids) == 143
    for episode in episodes:
        window = set(range(episode.lo, episode.hi + 1))
        # The window holds this episode's alerts and no other episode's.
        assert window & alert_ids == set(episode.alert_ids)
        assert episode.lo <= episode.first_line_id
    # What the analyzer reads carries no label: every line starts with the epoch stamp.
    path = tmp_path / "window.log"
    bgl.write_window(sample[episodes[0].lo - 1 : episodes[0].hi], path)
    lines = path.read_text().splitlines()
    assert len(lines) == episodes[0].hi - episodes[0].lo + 1
    assert all(line.split(" ", 1)[0].isdigit() for line in lines)


@pytest.mark.loghub
def test_first_alert_and_node_per_episode(results: Results) -> None:
    score, answers = results["text"]
    assert score.episodes == 40
    # The text reader gives every BGL row its time and node.
    assert score.rows_with_time == score.rows_with_host == score.rows
    assert score.first_row >= FIRST_ROW_FLOOR, answers
    assert score.node >= NODE_FLOOR, answers
    assert score.false_alerts <= MAX_FALSE_ALERTS, answers
    # The signatures alone find each first alert too (earliest root match in file order).
    assert score.match_first_row >= MATCH_FIRST_ROW_FLOOR, answers
