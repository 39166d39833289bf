"""``timeline.svg``: written by ``analyze`` and ``report`` beside report.md (which links
it), the heat strip's rows and markers as plain SVG, small at 4,096 hosts, shown by Chromium."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.report import heat, timeline
from tests.conftest import EXAMPLE

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> api.AnalyzeResult:
    return api.analyze([EXAMPLE], tmp_path_factory.mktemp("svg") / "out", api.AnalyzeSettings())


def test_analyze_and_report_write_the_linked_picture(
    analyzed: api.AnalyzeResult, tmp_path: Path
) -> None:
    out = analyzed.report_path.parent
    picture = (out / "timeline.svg").read_text(encoding="utf-8")
    assert "](timeline.svg)" in analyzed.report_path.read_text(encoding="utf-8")
    root = ElementTree.fromstring(picture)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert analyzed.findings.verdict.summary[:40] in root.findtext(f"{SVG}title", "")
    culprit = analyzed.findings.verdict.culprit.host
    assert culprit is not None
    labels = [g.findtext(f"{SVG}title") for g in root.iter(f"{SVG}g")]
    assert labels[0] == culprit, "the culprit is the first row"
    markers = [p for p in root.iter(f"{SVG}path") if "first error" in p.findtext(f"{SVG}title", "")]
    assert len(markers) == sum(v.first_error is not None for v in analyzed.findings.attempts)
    for template in ("default", "modelarts-zh"):
        result = CliRunner().invoke(
            app,
            ["report", str(analyzed.case), "--template", template, "-o", str(tmp_path / template)],
        )
        assert result.exit_code == 0, result.output
        assert (tmp_path / template / "timeline.svg").read_text(encoding="utf-8") == picture
        assert "](timeline.svg)" in (tmp_path / template / "report.md").read_text("utf-8")


def _strip_of(hosts: int, seed: int = 7) -> dict[str, Any]:
    """Heat-strip data for ``hosts`` hosts that all look different (the worst case for the
    grouping), through heat.py's own row ordering and grouping."""
    rng = random.Random(seed)
    names = [f"gke-tpu-v5p-train-tpu-pool-{i // 64}-{i:08x}-w{i % 64:02d}" for i in range(hosts)]
    cells = pl.DataFrame(
        {
            "host": [n for n in names for _ in range(heat.BUCKETS)],
            "bucket": [b for _ in names for b in range(heat.BUCKETS)],
            "code": [rng.choice((0, 1, 1, 1, 2, 3, 4)) for _ in range(hosts * heat.BUCKETS)],
        },
        schema={"host": pl.String, "bucket": pl.Int32, "code": pl.Int8},
    ).filter(pl.col("code") > 0)
    rows, members = heat._rows(cells, names)
    start = 1_764_439_200_000_000_000
    width = 37_000_000_000
    return {
        "buckets": heat.BUCKETS,
        "rows": rows,
        "ticks": heat.ticks(start, width),
        "markers": [
            {"kind": "attempt", "attempt": 1, "bucket": 0},
            {"kind": "attempt", "attempt": 2, "bucket": 50},
            {
                "kind": "first-error",
                "attempt": 2,
                "bucket": 61,
                "row": 0,
                "path": "a/b.log",
                "line": 12,
                "host": names[0],
                "signature": "TPU-HW-001",
                "ts": heat.stamp(start + 61 * width),
            },
        ],
        "members": members,
    }


def test_4096_hosts_stay_under_a_megabyte(tmp_path: Path) -> None:
    strip = _strip_of(4096)
    assert sum(row["hosts"] for row in strip["rows"]) == 4096
    picture = timeline.render(strip, "culprit: a verdict <with> & marks")
    size = len(picture.encode())
    assert size < 1 << 20, f"{size:,} bytes"
    root = ElementTree.fromstring(picture)
    assert len(list(root.iter(f"{SVG}g"))) == len(strip["rows"]) < 4096
    (tmp_path / "timeline.svg").write_text(picture, encoding="utf-8")


def test_axis_ticks_are_round_and_labelled_once() -> None:
    start = 1_764_439_213_400_000_000  # 18:00:13.4 UTC
    ticks = heat.ticks(start, 10_000_000_000)  # 96 buckets of 10 s: 16 minutes
    labels = [t["label"] for t in ticks]
    assert labels == sorted(set(labels)), "no label repeats"
    assert all(len(label) == len("18:02") for label in labels), "one format, no seconds"
    at = [start + round(t["x"] * 10_000_000_000) for t in ticks]
    assert all(ns % 60_000_000_000 == 0 for ns in at), "ticks at whole minutes"
    assert len({b - a for a, b in itertools.pairwise(at)}) == 1
    assert 4 <= len(labels) <= heat.MAX_TICKS
    assert 0 <= ticks[0]["x"] < ticks[1]["x"] <= heat.BUCKETS


def test_the_picture_opens_in_chromium(analyzed: api.AnalyzeResult, offline_page: Any) -> None:
    opened = offline_page()
    errors: list[str] = []
    opened.page.on("pageerror", lambda error: errors.append(str(error)))
    opened.page.goto((analyzed.report_path.parent / "timeline.svg").as_uri())
    box = opened.page.locator("svg").bounding_box()
    assert box is not None and box["width"] > 500 and box["height"] > 80
    assert opened.page.locator("svg > g").count() >= 1
    assert errors == [] and opened.blocked == []


@pytest.mark.parametrize(
    "text",
    ["", "plain", "a < b > c & d", "&amp; already", "<x>&&<</x>", "quotes \" ' stay", "中文 ◆"],
)
def test_text_is_escaped_as_saxutils_escapes_it(text: str) -> None:
    from xml.sax.saxutils import escape

    assert timeline._escape(text) == escape(text)
