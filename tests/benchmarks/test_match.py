"""The matching benchmark's logic: the case plan, the baselines' patterns files, ratios and
targets, and the match section of RESULTS.md. Nothing is timed. (What the regex dialect
writes for grep and ripgrep is tested in ``tests/signatures/test_dialect_baselines.py``.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report
from benchmarks.bundles import FACTS_FILE, MARGIN, case_plan, export_messages, parse_rows
from benchmarks.families import MATCH
from benchmarks.match import _parse_args, add_ratios, baseline_patterns, step_vs_rg, targets
from benchmarks.match_cases import find_rg, link_case, prepare_hosts_case
from fixtures.options import MAX_HOSTS, MIN_HOSTS

GREP = shutil.which("grep")
RG = find_rg()


def test_parse_rows() -> None:
    assert parse_rows("10M") == 10_000_000
    assert parse_rows("1m") == 1_000_000
    assert parse_rows("500k") == 500_000
    assert parse_rows("2.5M") == 2_500_000
    assert parse_rows("1,000") == 1_000
    for bad in ("", "M", "ten", "0", "-5"):
        with pytest.raises(ValueError, match="row count"):
            parse_rows(bad)


def test_plan_reaches_the_rows() -> None:
    per_host_hour = 2520.8
    chosen = case_plan(10_000_000, per_host_hour)
    assert chosen.hosts % 4 == 0 and chosen.minutes == 60
    assert chosen.hosts * per_host_hour >= 10_000_000 * (1 + MARGIN)
    assert (chosen.hosts - 4) * per_host_hour < 10_000_000 * (1 + MARGIN)
    # Past the largest cluster: more minutes; below the smallest: fewer.
    big = case_plan(20_000_000, per_host_hour)
    assert big.hosts == MAX_HOSTS and big.minutes > 60
    assert big.hosts * per_host_hour * big.minutes / 60 >= 20_000_000
    small = case_plan(1_000, per_host_hour)
    assert small.hosts == MIN_HOSTS and 2 <= small.minutes < 60
    name = chosen.name("abc", "0.1.0")
    assert name == f"host-crash-heartbeat-{chosen.hosts}h-60m-r60-seed0-fxabc-culprit0.1.0"


def test_export_folds_newlines_and_counts_bytes(tmp_path: Path) -> None:
    import polars as pl

    rows = tmp_path / "rows"
    rows.mkdir()
    pl.DataFrame({"message": ["one", "two\nlines", None]}).write_parquet(rows / "part-0.parquet")
    pl.DataFrame({"message": ["héllo"]}).write_parquet(rows / "part-1.parquet")
    out = tmp_path / "messages.txt"
    counts = export_messages(rows, out)
    assert out.read_text(encoding="utf-8") == "one\ntwo lines\n\nhéllo\n"
    assert counts == {
        "rows": 4,
        "message_bytes": 3 + 9 + 6,
        "multiline_messages": 1,
        "null_messages": 1,
    }


def test_working_copy_links_the_row_files(tmp_path: Path) -> None:
    cached = tmp_path / "cached"
    (cached / "rows").mkdir(parents=True)
    (cached / "case.json").write_text("{}")
    (cached / "rows" / "part-0.parquet").write_bytes(b"rows")
    link_case(cached, tmp_path / "copy")
    copied = tmp_path / "copy"
    assert (copied / "rows" / "part-0.parquet").stat().st_ino == (
        cached / "rows" / "part-0.parquet"
    ).stat().st_ino
    assert (copied / "case.json").stat().st_ino != (cached / "case.json").stat().st_ino
    # A file renamed into place (as culprit match writes) leaves the cache alone.
    (copied / ".matches.partial").write_text("m")
    (copied / ".matches.partial").replace(copied / "matches.parquet")
    assert not (cached / "matches.parquet").exists()


# -- ratios, targets and the RESULTS.md section ------------------------------------------------

RUN: dict[str, Any] = {
    "seconds": 2.0,
    "peak_rss_mib": 100.0,
    "user_s": 1.5,
    "system_s": 0.5,
    "load_before": 1.0,
    "load_after": 1.1,
}


def result(name: str, kind: str, rows_per_s: float, rows: int = 10_000_000) -> dict[str, Any]:
    seconds = rows / rows_per_s
    return {
        "name": name,
        "label": f"{name} label",
        "kind": kind,
        "order": 0,
        "command": f"{name} command",
        "rows": rows,
        "patterns": 265,
        "median_s": seconds,
        "min_s": seconds,
        "max_s": seconds,
        "mib_per_s": 700 / seconds,
        "peak_rss_mib": 1000.0,
        "runs": [RUN],
        "rows_per_s": rows_per_s,
    }


def sample_results(polars_rate: float = 2e6) -> list[dict[str, Any]]:
    loop = {**result("python-loop", "baseline", 10_000), "extrapolated_from": 100_000}
    rg = {"name": "rg", "label": "rg label", "kind": "baseline", "order": 1}
    rg |= {"status": "not installed", "program": "rg", "rows": 10_000_000}
    results = [
        result("polars", "backend", polars_rate),
        {**result("duckdb", "backend", 5e5), "order": 1},
        result("grep", "baseline", 1e6),
        rg,
        {**loop, "order": 2},
    ]
    add_ratios(results)
    return results


def test_ratios_and_targets() -> None:
    results = sample_results()
    assert results[0]["vs_python_loop"] == pytest.approx(200)
    assert results[0]["vs_grep"] == pytest.approx(2)
    assert results[1]["vs_grep"] == pytest.approx(0.5)
    assert results[3].get("vs_grep") is None
    met = targets(results, 10_000_000)
    assert met is not None and met["all_met"]
    slow = targets(sample_results(polars_rate=4e5), 10_000_000)
    assert slow is not None
    assert [check["met"] for check in slow["checks"]] == [False, False, True]
    small = targets(sample_results(), 1_000_000)
    assert small is not None and not small["checks"][2]["met"]
    assert targets(results[1:], 10_000_000) is None


def test_the_ripgrep_target() -> None:
    for polars_rate, met in ((3e6, True), (1e6, False)):
        results = [result("polars", "backend", polars_rate), result("rg", "baseline", 2e6)]
        add_ratios(results)
        checks = (targets(results, 10_000_000) or {})["checks"]
        assert checks[0]["text"].startswith("polars at least 1.5× ripgrep's rows/s")
        assert checks[0]["met"] is met


def test_the_matching_step_against_ripgrep() -> None:
    polars = {**result("polars", "backend", 2e6), "matching_s": [1.0, None, 2.0, 3.0]}
    results = [polars, result("rg", "baseline", 2.5e6)]
    steps = step_vs_rg(results)
    assert steps is not None and list(steps) == ["polars"]
    assert steps["polars"] == pytest.approx(4.0 / 2.0)
    assert step_vs_rg(results[:1]) is None
    assert step_vs_rg([result("polars", "backend", 2e6), results[1]]) is None


def test_rg_beside_the_interpreter_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = tmp_path / "python"
    monkeypatch.setattr("sys.executable", str(python))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert find_rg() is None
    (tmp_path / "rg").write_text("")
    assert find_rg() == str(tmp_path / "rg")


def test_the_hosts_case_option() -> None:
    args, rows, _ = _parse_args(["--hosts", "1024", "--no-record"])
    assert args.hosts == 1024 and rows == 10_000_000
    with pytest.raises(SystemExit):
        _parse_args(["--hosts", "1024", "--rows", "1M"])
    with pytest.raises(SystemExit):
        _parse_args(["--hosts", "0"])


def test_a_built_hosts_case_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import benchmarks.match_cases as match

    monkeypatch.setattr(match, "generator_digest", lambda: "f" * 12)
    monkeypatch.setattr(match, "culprit_version", lambda: "9.9")
    root = tmp_path / "host-crash-heartbeat-8h-60m-r60-seed0-fxffffffffffff-culprit9.9"
    root.mkdir()
    (root / FACTS_FILE).write_text(json.dumps({"rows": 12}))
    cached = prepare_hosts_case(tmp_path, 8)
    assert cached.root == root and cached.rows == 12


def match_report(when: str, rows: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "match",
        "date": when[:10],
        "recorded_at": when,
        "command": "python -m benchmarks.match",
        "runs": 1,
        "rows_requested": rows,
        "case": {
            "scenario": "host-crash-heartbeat",
            "hosts": 4008,
            "minutes": 60.0,
            "rate": 60.0,
            "seed": 0,
            "fixtures_sha256": "f" * 12,
            "culprit_version": "0.1.0",
            "rows": rows,
            "message_bytes": 700 << 20,
            "multiline_messages": 0,
        },
        "catalogue": {
            "signatures": 265,
            "digest": "c" * 64,
            "patterns_ere": [],
            "left_out": [["X-1", "back-reference"]],
        },
        "grep_version": "grep (GNU grep) 3.8",
        "machine": {
            "hostname": "box",
            "cpu": "CPU",
            "cores": 2,
            "ram_gib": 8.0,
            "os": "Linux",
            "python": "3.11.7",
            "versions": {"culprit": "0.1.0", "polars": "2.1.0", "pyarrow": "26", "duckdb": "2"},
            "git_commit": "0123456789abcdef",
            "analyzer_modified_vs_commit": True,
        },
        "analyzer_sha256": "a" * 64,
        "analyzer_changed_during_run": False,
        "analyzer_sha256_after": "a" * 64,
        "git_commit_after": "0123456789abcdef",
        "targets": targets(results, rows),
        "results": results,
    }


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "results"
    directory.mkdir()
    monkeypatch.setattr(report, "RESULTS_DIR", directory)
    monkeypatch.setattr(report, "RESULTS_MD", tmp_path / "RESULTS.md")
    return directory


def test_match_section_rows_and_runs(results_dir: Path) -> None:
    older = match_report("2026-11-01T10:00:00+00:00", 10_000_000, sample_results())
    newer_polars = [result("polars", "backend", 3e6)]
    add_ratios(newer_polars)  # no baselines in this run: no ratios
    newer = match_report("2026-11-02T10:00:00+00:00", 10_000_000, newer_polars)
    (results_dir / "b.json").write_text(json.dumps(older))
    (results_dir / "a.json").write_text(json.dumps(newer))

    entries = MATCH.latest(results_dir)
    section = MATCH.render(entries)
    begin, end = report.markers("match")

    assert [(r["name"], file) for _, r, file in entries] == [
        ("polars", "a.json"),
        ("duckdb", "b.json"),
        ("grep", "b.json"),
        ("rg", "b.json"),
        ("python-loop", "b.json"),
    ]
    assert section.startswith(begin) and section.endswith(end + "\n")
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    assert rows[0] == (
        "| polars label | 2026-11-02, `0123456789ab`+ (A) | 10,000,000 | 265 | 3.3 (3.3–3.3) "
        "| 3,000,000 | 210.0 | 1,000 | – | – | – |"
    )
    assert rows[1].endswith("| 50.0× | 0.50× | – |")
    assert "| rg label | 2026-11-01, `0123456789ab`+ (B) | – | – | not installed |" in rows[3]
    assert "1,000, extrapolated (1,000–1,000)" in rows[4] and "| – | 1.00× | 0.01× |" in rows[4]
    assert "* (A) `benchmarks/results/a.json`" in section
    assert "* (B) `benchmarks/results/b.json`" in section
    assert "left out: `X-1` (back-reference)" in section
    assert "polars at least 50× the Python loop: 200.0× — met." in section
    assert "* rg label: not installed" in section


def test_recording_a_match_run_keeps_the_other_sections(results_dir: Path) -> None:
    begin, end = report.markers("match")
    before = (
        "# Benchmark results\n\n<!-- ingest:begin -->\ningest\n<!-- ingest:end -->\n\n"
        f"## Matching\n\nProse.\n\n{begin}\nold\n{end}\n\n"
        "## Generation\n\n<!-- generate:begin -->\ngen\n<!-- generate:end -->\n"
    )
    report.RESULTS_MD.write_text(before)
    report.record(match_report("2026-11-02T10:00:00+00:00", 10_000_000, sample_results()), MATCH)
    after = report.RESULTS_MD.read_text()
    head, _, rest = after.partition(begin)
    _, _, tail = rest.partition(end)
    assert head == before.partition(begin)[0]
    assert tail == before.partition(end)[2]
    assert "| polars label |" in rest and "old" not in rest


@pytest.mark.parametrize(
    ("tool", "program"),
    [pytest.param("grep", GREP, id="grep"), pytest.param("rg", RG, id="rg")],
)
def test_baseline_patterns_leave_out_what_the_tool_refuses(tool: str, program: str | None) -> None:
    if program is None:
        pytest.skip(f"{tool} is not installed")
    regexes = [("OK-1", r"a\d+"), ("BAD-1", "a(?=b)"), ("BAD-2", "a(")]
    kept, left_out = baseline_patterns(tool, regexes, program)
    assert [code for code, _ in kept] == ["OK-1"]
    assert [code for code, _ in left_out] == ["BAD-1", "BAD-2"]
    # Without the program, only what the dialect cannot write is left out.
    kept, left_out = baseline_patterns(tool, regexes, None)
    assert [code for code, _ in left_out] == ["BAD-1"] + (["BAD-2"] if tool == "grep" else [])
