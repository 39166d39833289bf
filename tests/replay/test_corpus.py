"""The real-log corpus format and its scoring: what counts as the right first error, class,
culprit, an invented host, an honest unknown, and the naive baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import UsageError
from analyzer.replay.corpus import (
    Expected,
    Floor,
    Said,
    baseline,
    below_floor,
    culprit_matches,
    find_excerpts,
    invented,
    read_excerpt,
    score,
    tally,
)

LOG = """\
2024-05-21 11:57:50 INFO loading shards
2024-05-21 11:57:53 WARNING retrying the download
Traceback (most recent call last):
RuntimeError: HCCL error in: ProcessGroupHCCL.cpp:64
EJ0001: Failed to initialize the HCCP process. Reason: Maybe the last training process is running.
"""
SOURCE = 'url = "https://example.org/t/1"\ntitle = "t"\ndate_read = "2026-12-06"\n'


def _excerpt(root: Path, name: str = "x-1", expected: str | None = None, log: str = LOG) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "excerpt.log").write_text(log, encoding="utf-8")
    (folder / "source.toml").write_text(SOURCE, encoding="utf-8")
    (folder / "expected.toml").write_text(
        expected
        or (
            'platform = "ascend"\nformat = "text"\nclass = "accelerator-init"\n'
            'first_error = "excerpt.log:5"\nalternatives = ["excerpt.log:4"]\n'
            'culprit_kind = "rank"\nculprit = "3"\nbasis = "b"\n'
        ),
        encoding="utf-8",
    )
    return folder


def _said(
    first: str | None,
    failure_class: str = "accelerator-init",
    subjects: tuple[tuple[str, str], ...] = (),
    names: tuple[str, ...] = (),
    confidence: str = "HIGH",
) -> Said:
    return Said(first, failure_class, confidence, subjects, names)


def test_an_excerpt_is_scored_on_line_class_and_culprit(tmp_path: Path) -> None:
    excerpt = read_excerpt(_excerpt(tmp_path))
    right = score(excerpt, _said("excerpt.log:4", subjects=(("rank", "3"),)))
    assert (right.first_error, right.failure_class_ok, right.culprit) == (True, True, True)
    wrong = score(excerpt, _said("excerpt.log:3", "python-exception", (("rank", "2"),)))
    assert (wrong.first_error, wrong.failure_class_ok, wrong.culprit) == (False, False, False)
    assert right.honest_unknown is None
    # The baseline takes line 3, the first with an error word ("Traceback"): wrong here.
    assert right.baseline is False


def test_an_unknown_excerpt_wants_no_first_error_and_low_confidence(tmp_path: Path) -> None:
    folder = _excerpt(
        tmp_path,
        expected='platform = "gpu"\nformat = "text"\nclass = "unknown"\nfirst_error = "none"\n'
        'basis = "b"\n',
        log="step 1\nstep 2\nstep 3\nstep 4\nstep 5\n",
    )
    excerpt = read_excerpt(folder)
    honest = score(excerpt, _said(None, "unknown", confidence="LOW"))
    assert (honest.first_error, honest.failure_class_ok, honest.honest_unknown) == (
        True,
        True,
        True,
    )
    assert honest.baseline is True  # no line has an error word
    bold = score(excerpt, _said("excerpt.log:2", "crashloop"))
    assert (bold.first_error, bold.honest_unknown) == (False, False)
    unsure = score(excerpt, _said(None, "unknown", confidence="MEDIUM"))
    assert unsure.honest_unknown is False


def test_the_baseline_is_the_first_line_with_an_error_word(tmp_path: Path) -> None:
    excerpt = read_excerpt(_excerpt(tmp_path))
    assert baseline(excerpt) == "excerpt.log:3"
    quiet = read_excerpt(
        _excerpt(
            tmp_path,
            "x-2",
            'platform = "cpu"\nformat = "text"\nclass = "unknown"\nfirst_error = "none"\n'
            'basis = "b"\n',
            "a\nb\nerrorless words only\nc\nd\n",
        )
    )
    assert baseline(quiet) is None
    glog = read_excerpt(
        _excerpt(
            tmp_path,
            "x-3",
            log="I0101 00:00:00.000000 1 a.cc:1] fine\nE0101 00:00:01.000000 1 a.cc:2] bad\n"
            "x\ny\nz\n",
        )
    )
    assert baseline(glog) == "excerpt.log:2"


@pytest.mark.parametrize(
    ("kind", "want", "subjects", "matches"),
    [
        ("task", "37", (("task", "/job:jax_worker/replica:0/task:37"),), True),
        ("task", "37", (("rank", "37"),), True),
        ("rank", "3", (("rank", "13"),), False),
        ("rank", "3", (("host", "node-3"),), False),
        ("pod", "ns/web-1", (("pod", "web-1"),), True),
        ("pod", "web-1", (("pod", "ns/web-1"),), True),
        ("ip", "10.0.0.5", (("ip", "10.0.0.5:8471"),), True),
        ("node", "localhost.localdomain", (("host", "localhost"),), True),
        ("host", "Gke-Node-1", (("host", "gke-node-1"),), True),
        ("node", "node-1", (("host", "node-10"),), False),
    ],
)
def test_culprits_match_by_index_or_by_name(
    kind: str, want: str, subjects: tuple[tuple[str, str], ...], matches: bool
) -> None:
    expected = Expected.model_validate(
        {
            "platform": "tpu",
            "format": "text",
            "class": "coordination",
            "first_error": "excerpt.log:1",
            "culprit_kind": kind,
            "culprit": want,
            "basis": "b",
        }
    )
    assert culprit_matches(expected, _said("excerpt.log:1", subjects=subjects)) is matches


def test_a_name_the_excerpt_never_writes_is_invented() -> None:
    said = _said("excerpt.log:1", names=("node-7", "gke-pool-1"))
    assert invented(said, "an error on NODE-7 and more") == ("gke-pool-1",)


def test_excerpts_are_checked_when_read(tmp_path: Path) -> None:
    folder = _excerpt(tmp_path)
    (folder / "expected.toml").write_text(
        'platform = "ascend"\nformat = "text"\nclass = "unknown"\n'
        'first_error = "excerpt.log:9"\nbasis = "b"\n',
        encoding="utf-8",
    )
    with pytest.raises(UsageError, match="not a line of the excerpt"):
        read_excerpt(folder)
    (folder / "expected.toml").write_text(
        'platform = "ascend"\nformat = "text"\nclass = "unknown"\n'
        'first_error = "excerpt.log:2"\nbasis = "b"\n',
        encoding="utf-8",
    )
    with pytest.raises(UsageError, match='class "unknown" goes with first_error "none"'):
        read_excerpt(folder)
    (folder / "source.toml").unlink()
    with pytest.raises(UsageError, match="no source.toml"):
        read_excerpt(folder)
    with pytest.raises(UsageError, match="no corpus excerpt"):
        find_excerpts(tmp_path / "x-1")


def test_a_total_below_the_floor_says_which_score(tmp_path: Path) -> None:
    excerpt = read_excerpt(_excerpt(tmp_path))
    scores = [
        score(excerpt, _said("excerpt.log:5", subjects=(("rank", "3"),))),
        score(excerpt, _said("excerpt.log:1", names=("ghost-node",))),
    ]
    total = tally("all", scores)
    assert (total.first_error, total.culprit, total.named, total.invented) == (1, 1, 2, 1)
    floor = Floor(first_error=0.9, failure_class=0.5, culprit=0.5, honest_unknown=1.0)
    problems = below_floor(total, floor)
    assert problems == [
        "first_error: 50.0% is below the floor of 90.0%",
        "invented hosts: 1 excerpt(s), the floor allows 0",
    ]


def test_the_published_corpus_reads(tmp_path: Path) -> None:
    corpus = Path(__file__).parents[2] / "fixtures" / "real"
    excerpts = find_excerpts(corpus)
    assert len(excerpts) >= 150
    assert len({e.source.url for e in excerpts}) >= 140
    for excerpt in excerpts:
        assert all(p.stat().st_size < 200_000 for p in excerpt.logs), excerpt.name
