"""The end-to-end analysis benchmark on a tiny bundle (8 hosts, 2 minutes, one run of each
measurement, ``--no-record``, a temporary cache): the result's structure, the verdict checked
against the generator's truth, and the analyze section of RESULTS.md built from the result.
Nothing is asserted about the times; ``benchmarks/results`` and ``benchmarks/RESULTS.md``
are never written (the report module's paths point into the test's directory)."""

from __future__ import annotations

import argparse
import copy
from pathlib import Path
from typing import Any

import pytest

from benchmarks import analyze, bundles, report
from benchmarks.families import ANALYZE
from fixtures.truth import BUNDLE_DIR, TRUTH_FILE, read_truth

TINY = ["--hosts", "8", "--minutes", "2", "--runs", "1", "--no-record"]
NAMES = [analyze.BUNDLE_TO_REPORT, analyze.REMATCH, analyze.DIAGNOSE]


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "results"
    monkeypatch.setattr(report, "RESULTS_DIR", directory)
    monkeypatch.setattr(report, "RESULTS_MD", tmp_path / "RESULTS.md")
    return directory


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    """``python -m benchmarks.analyze`` on 8 hosts x 2 minutes: the report it would record,
    its cache directory and what it printed on stdout."""
    tmp = tmp_path_factory.mktemp("analyze")
    cache = tmp / "cache"
    reports: list[dict[str, Any]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report, "RESULTS_DIR", tmp / "results")
        patch.setattr(report, "RESULTS_MD", tmp / "RESULTS.md")
        finish = report.finish

        def kept(made: dict[str, Any], family: report.Family, args: argparse.Namespace) -> None:
            assert family is ANALYZE and args.no_record
            reports.append(made)
            finish(made, family, args)

        patch.setattr(analyze, "finish", kept)
        printed: list[str] = []
        # The table goes to stdout with print: caught in the module (capsys is per test).
        patch.setattr(report, "print", lambda *a, **k: printed.append(str(a[0])), raising=False)
        assert analyze.main([*TINY, "--cache", str(cache)]) == 0
        assert not (tmp / "results").exists() and not (tmp / "RESULTS.md").exists()
    assert len(reports) == 1
    return reports[0], cache, "".join(printed)


def test_result_structure(tiny_run: tuple[dict[str, Any], Path, str]) -> None:
    made, _, printed = tiny_run
    assert made["kind"] == ANALYZE.kind == "analyze"
    assert (made["scenario"], made["hosts"], made["minutes"], made["rate"], made["seed"]) == (
        "host-crash-heartbeat",
        8,
        2.0,
        60.0,
        0,
    )
    assert made["command"].startswith("python -m benchmarks.analyze --hosts 8")
    assert made["runs"] == 1
    assert [r["name"] for r in made["results"]] == NAMES
    rows = made["case"]["rows"]
    assert rows > 0 and made["case"]["matches"] > 0
    for result in made["results"]:
        assert result["hosts"] == 8 and result["rows"] == rows
        assert result["bytes"] == made["bundle"]["bytes"] > 0
        assert result["median_s"] > 0 and result["peak_rss_mib"] > 0
        assert result["min_s"] <= result["median_s"] <= result["max_s"]
        assert len(result["runs"]) == 1 and result["verdicts_agree"]
    cold, rematch, diagnose = made["results"]
    assert "mib_per_s" in cold and "mib_per_s" not in diagnose
    assert rematch["matched"] and diagnose["matches_reused"]
    assert made["machine"]["versions"]["culprit"] == made["bundle"]["culprit_version"]
    assert made["analyzer_sha256"] and "analyzer_changed_during_run" in made
    for label in ("bundle → report", "re-match + diagnose", "diagnose only"):
        assert f"| {label} | 8 | {rows:,} |" in printed


def test_the_verdict_matches_the_truth(tiny_run: tuple[dict[str, Any], Path, str]) -> None:
    made, cache, _ = tiny_run
    assert made["verdict_matches_truth"] is True
    check = made["verdict"]
    assert check["first_error_matches"] and check["culprit_matches"]
    truth = read_truth(cache / made["bundle"]["name"])
    expected = truth.attempts[-1]
    first = check["found"]["first_error"]
    assert (first["path"], first["line"]) == (expected.first_error.path, expected.first_error.line)
    assert check["found"]["culprit"] == {"kind": "host", "host": expected.culprit.host}


def test_check_truth_says_no_when_the_verdict_is_wrong(
    tiny_run: tuple[dict[str, Any], Path, str],
) -> None:
    made, cache, _ = tiny_run
    truth = read_truth(cache / made["bundle"]["name"])
    found = made["verdict"]["found"]
    assert analyze.check_truth(found, truth)["matches"]
    wrong_host = copy.deepcopy(found)
    wrong_host["culprit"]["host"] = "someone-else"
    checked = analyze.check_truth(wrong_host, truth)
    assert checked["first_error_matches"] and not checked["culprit_matches"]
    assert not checked["matches"]
    wrong_line = copy.deepcopy(found)
    wrong_line["first_error"]["line"] += 1
    assert not analyze.check_truth(wrong_line, truth)["matches"]
    assert not analyze.check_truth({**found, "first_error": None}, truth)["matches"]


def test_the_bundle_is_cached(tiny_run: tuple[dict[str, Any], Path, str]) -> None:
    made, cache, _ = tiny_run
    name = made["bundle"]["name"]
    assert name.startswith("host-crash-heartbeat-8h-2m-r60-seed0-fx")
    assert name.endswith(f"-culprit{made['bundle']['culprit_version']}")
    assert [p.name for p in cache.iterdir()] == [name]  # the work directory is gone
    root = cache / name
    assert (root / TRUTH_FILE).is_file() and (root / BUNDLE_DIR).is_dir()
    facts = root / bundles.FACTS_FILE
    stamp = facts.stat().st_mtime_ns
    plan = bundles.Plan("host-crash-heartbeat", hosts=8, minutes=2.0, rate=60.0, seed=0)
    again = bundles.prepare(cache, plan)
    assert again.root == root and facts.stat().st_mtime_ns == stamp
    assert again.facts == {k: v for k, v in made["bundle"].items() if k != "name"}


def test_recording_rebuilds_the_section_in_place(
    tiny_run: tuple[dict[str, Any], Path, str], results_dir: Path
) -> None:
    made, _, _ = tiny_run
    begin, end = report.markers("analyze")
    before = (
        f"# Benchmark results\n\n## End to end\n\nProse.\n\n{begin}\nold\n{end}\n\n"
        "<!-- bgl:begin -->\n## BlueGene/L\nbgl\n<!-- bgl:end -->\n"
    )
    report.RESULTS_MD.write_text(before)
    first = report.record(made, ANALYZE)
    assert first.parent == results_dir and first.is_file()
    text = report.RESULTS_MD.read_text()
    head, _, rest = text.partition(begin)
    section, _, tail = rest.partition(end)
    assert head == before.partition(begin)[0] and tail == before.partition(end)[2]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| measurement | measured | hosts | rows | bundle MiB |")
    assert [row.split(" | ")[0] for row in rows[1:]] == [
        "| bundle → report",
        "| re-match + diagnose",
        "| diagnose only",
    ]
    assert all(" (A) | 8 | " in row for row in rows[1:])
    assert f"* (A) `benchmarks/results/{first.name}`: measured" in section
    assert "**verdict matches truth: yes**" in section
    assert "`culprit analyze OUT/case -o OUT2 --quiet`" in section

    # A second run replaces the section's text, rows per measurement stay one.
    second = report.record({**made, "recorded_at": "9999-12-31T00:00:00+00:00"}, ANALYZE)
    text = report.RESULTS_MD.read_text()
    assert text.count(begin) == 1
    section = text.partition(begin)[2].partition(end)[0]
    assert len([line for line in section.splitlines() if line.startswith("| ")]) == 1 + 3
    assert f"* (A) `benchmarks/results/{second.name}`" in section
    assert first.name not in section


def test_a_missing_section_is_appended(
    tiny_run: tuple[dict[str, Any], Path, str], results_dir: Path
) -> None:
    made, _, _ = tiny_run
    begin, end = report.markers("analyze")
    report.RESULTS_MD.write_text("# Benchmark results\n\nIngest.\n")
    report.record(made, ANALYZE)
    text = report.RESULTS_MD.read_text()
    assert text.startswith("# Benchmark results\n\nIngest.\n\n" + begin)
    assert text.endswith(end + "\n")
    assert ANALYZE.render([]).startswith(begin + "\nNo end-to-end")
