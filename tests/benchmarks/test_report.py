"""The benchmark bookkeeping: results files of both kinds, the RESULTS.md sections the one
table-driven writer rebuilds from them, directory inputs and the size plan of the ``bundle``
input. Nothing is timed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import MIB, report
from benchmarks.bundles import Plan, generate_command
from benchmarks.families import GENERATE, INGEST, INPUT_NAMES
from benchmarks.ingest import DEFAULT_INPUTS
from benchmarks.measure import tree_bytes, tree_files
from fixtures.options import MAX_HOSTS, MIN_HOSTS
from fixtures.sized.bundle import CALIBRATION_HOSTS, MINUTES, plan

MACHINE: dict[str, Any] = {
    "hostname": "box",
    "cpu": "CPU",
    "cores": 2,
    "ram_gib": 8.0,
    "os": "Linux",
    "python": "3.11.7",
    "versions": {
        "culprit": "0.1.0",
        "polars": "2.1.0",
        "pyarrow": "26.0.1",
        "duckdb": "2.0.1",
        "numpy": "2.4.6",
    },
    "git_commit": "0123456789abcdef",
}
RUN: dict[str, Any] = {
    "seconds": 2.0,
    "peak_rss_mib": 100.0,
    "user_s": 1.5,
    "system_s": 0.5,
    "load_before": 1.0,
    "load_after": 1.1,
}


def ingest_result(name: str, seconds: float) -> dict[str, Any]:
    counts = {"records": 10, "rows": 9, "folded": 1, "quarantined": 0, "duplicates": 0}
    return {
        "input": name,
        "readers": [name],
        "input_mib": 1.0,
        "records": 10,
        "rows": 9,
        "counts": counts,
        "case_mib": 0.5,
        "median_s": seconds,
        "min_s": seconds,
        "max_s": seconds,
        "mib_per_s": 1.0 / seconds,
        "peak_rss_mib": 100.0,
        "runs": [RUN],
    }


def ingest_report(when: str, *results: dict[str, Any]) -> dict[str, Any]:
    """An ingest report as recorded before reports had a ``kind``."""
    return {
        "date": when[:10],
        "recorded_at": when,
        "command": "python -m benchmarks.ingest",
        "runs": 1,
        "machine": {**MACHINE, "analyzer_modified_vs_commit": False},
        "analyzer_sha256": "a" * 64,
        "analyzer_changed_during_run": False,
        "results": list(results),
    }


def generate_result(hosts: int, seconds: float) -> dict[str, Any]:
    return {
        "scenario": "host-crash-heartbeat",
        "hosts": hosts,
        "minutes": 60.0,
        "rate": 60.0,
        "seed": 0,
        "files": hosts + 4,
        "bytes": hosts * MIB,
        "written_mib": float(hosts),
        "median_s": seconds,
        "min_s": seconds,
        "max_s": seconds,
        "mib_per_s": hosts / seconds,
        "peak_rss_mib": 300.0,
        "runs": [{**RUN, "seconds": seconds}],
    }


def generate_report(when: str, *results: dict[str, Any], dirty: bool = False) -> dict[str, Any]:
    return {
        "kind": "generate",
        "date": when[:10],
        "recorded_at": when,
        "command": "python -m benchmarks.generate",
        "runs": 1,
        "machine": {**MACHINE, "fixtures_modified_vs_commit": dirty},
        "fixtures_sha256": "f" * 64,
        "fixtures_changed_during_run": False,
        "fixtures_sha256_after": "f" * 64,
        "git_commit_after": MACHINE["git_commit"],
        "results": list(results),
    }


def write(directory: Path, name: str, data: dict[str, Any]) -> None:
    (directory / name).write_text(json.dumps(data))


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty results directory and RESULTS.md in ``tmp_path``, used by :func:`report.record`."""
    directory = tmp_path / "results"
    directory.mkdir()
    monkeypatch.setattr(report, "RESULTS_DIR", directory)
    monkeypatch.setattr(report, "RESULTS_MD", tmp_path / "RESULTS.md")
    return directory


def test_each_section_reads_only_its_kind(results_dir: Path) -> None:
    write(results_dir, "2026-11-01-box.json", ingest_report("2026-11-01", ingest_result("text", 2)))
    write(results_dir, "2026-11-02-box.json", generate_report("2026-11-02", generate_result(64, 4)))
    (results_dir / "broken.json").write_text("{")

    ingest = INGEST.latest(results_dir)
    generated = GENERATE.latest(results_dir)

    assert [result["input"] for _, result, _ in ingest] == ["text"]
    assert [result["hosts"] for _, result, _ in generated] == [64]
    assert report.kind_of(json.loads((results_dir / "2026-11-01-box.json").read_text())) == "ingest"


def test_latest_generate_result_per_scenario_hosts_minutes_and_rate(results_dir: Path) -> None:
    older = generate_report("2026-11-01T10:00:00+00:00", generate_result(1024, 50))
    newer = generate_report("2026-11-02T10:00:00+00:00", generate_result(1024, 40))
    other = generate_report("2026-11-01T09:00:00+00:00", generate_result(64, 4), dirty=True)
    # File names sort the other way round from the recording times.
    write(results_dir, "c.json", older)
    write(results_dir, "b.json", newer)
    write(results_dir, "a.json", other)

    entries = GENERATE.latest(results_dir)
    section = GENERATE.render(entries)
    begin, end = report.markers("generate")

    assert [(r["hosts"], r["median_s"], file) for _, r, file in entries] == [
        (64, 4, "a.json"),
        (1024, 40, "b.json"),
    ]
    assert section.startswith(begin) and section.endswith(end + "\n")
    rows = [line for line in section.splitlines() if line.startswith("| host-crash-heartbeat")]
    assert rows == [
        "| host-crash-heartbeat | 64 | 60 | 60 | 68 | 64.0 | 4.0 | 16.0 | 300 | `0123456789ab`+ (A) |",
        "| host-crash-heartbeat | 1,024 | 60 | 60 | 1,028 | 1,024.0 | 40.0 | 25.6 | 300 | `0123456789ab` (B) |",
    ]
    assert "* (A) `benchmarks/results/a.json`" in section
    assert "with uncommitted changes to `fixtures/`" in section
    assert "* (B) `benchmarks/results/b.json`" in section
    assert "c.json" not in section


def test_recording_a_generate_run_keeps_the_ingest_section(results_dir: Path) -> None:
    write(results_dir, "2026-11-01-box.json", ingest_report("2026-11-01", ingest_result("text", 2)))
    ingest = INGEST.section(results_dir)
    begin, end = report.markers("generate")
    prose_above = "# Benchmark results\n\nSome prose.\n\n"
    report.RESULTS_MD.write_text(prose_above + ingest + "\nTrailing prose.\n")

    made = generate_report("2026-11-02T10:00:00+00:00", generate_result(64, 4))
    first = report.record(made, GENERATE)
    text = report.RESULTS_MD.read_text()
    assert first.name == "2026-11-02-box.json"
    assert text.startswith(prose_above + ingest + "\nTrailing prose.\n\n" + begin)
    assert text.count(begin) == 1

    made = generate_report("2026-11-02T11:00:00+00:00", generate_result(1024, 40))
    second = report.record(made, GENERATE)
    text = report.RESULTS_MD.read_text()
    assert second.name == "2026-11-02-box-2.json"
    assert text.startswith(prose_above + ingest + "\nTrailing prose.\n\n" + begin)
    assert text.count(begin) == text.count(end) == 1
    assert "| 1,024 |" in text and "| 64 |" in text

    # An ingest run rebuilds its own section only.
    made = {
        **ingest_report("2026-11-03T10:00:00+00:00", ingest_result("kubelet", 3)),
        "kind": "ingest",
    }
    report.record(made, INGEST)
    after = report.RESULTS_MD.read_text()
    assert "| kubelet |" in after
    assert after.partition(begin)[2] == text.partition(begin)[2]


def test_a_table_puts_the_measured_column_where_its_family_says() -> None:
    result = generate_result(64, 4)
    plain = GENERATE.table([result]).splitlines()
    assert plain[0].endswith("| peak RSS MiB |") and plain[1].count("|") == 10
    marked = GENERATE.table([result], ["`abc` (A)"]).splitlines()
    assert marked[0].endswith("| peak RSS MiB | commit |") and marked[2].endswith(
        "| 300 | `abc` (A) |"
    )
    ingest = INGEST.table([ingest_result("text", 2)], ["today"]).splitlines()
    assert ingest[0].startswith("| input | reader | measured | input MiB |")


def test_bundle_plan_reaches_the_target() -> None:
    per_host = 2.5e6  # bytes one host writes in MINUTES minutes
    hosts, minutes = plan(1 << 30, per_host)
    assert hosts % 4 == 0 and minutes == pytest.approx(MINUTES, rel=0.01)
    assert hosts * per_host * minutes / MINUTES == pytest.approx(1 << 30, rel=0.001)
    # Below the smallest cluster: fewer minutes; above the largest: more, up to a day.
    assert plan(10 * MIB, per_host) == (MIN_HOSTS, round(MINUTES * 10 * MIB / (8 * per_host), 2))
    assert plan(1, per_host) == (MIN_HOSTS, 2.0)
    assert plan(1 << 50, per_host) == (MAX_HOSTS, 1440.0)
    assert CALIBRATION_HOSTS >= MIN_HOSTS


def test_ingest_defaults_stay_the_four_single_file_inputs() -> None:
    assert DEFAULT_INPUTS == ("cloud_logging", "text", "kubelet", "modelarts")
    assert set(DEFAULT_INPUTS) < set(INPUT_NAMES) and "bundle" in INPUT_NAMES


def test_directory_inputs_count_their_files(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.log").write_bytes(b"x" * 10)
    (tmp_path / "two.json").write_bytes(b"y" * 5)
    (tmp_path / "link").symlink_to(tmp_path / "two.json")

    assert tree_bytes(tmp_path) == 15
    assert tree_bytes(tmp_path / "two.json") == 5
    assert sorted(p.name for p in tree_files(tmp_path)) == ["one.log", "two.json"]


def test_generate_command_and_bundle_name() -> None:
    plan = Plan("host-crash-heartbeat", hosts=64, minutes=10.0, rate=60.0, seed=3)
    command = generate_command(plan, Path("/out"))
    assert command[1:] == [
        "-m",
        "fixtures",
        "generate",
        "host-crash-heartbeat",
        "-o",
        "/out",
        "--hosts",
        "64",
        "--seed",
        "3",
        "--minutes",
        "10",
        "--rate",
        "60",
        "--force",
    ]
    assert plan.stem == "host-crash-heartbeat-64h-10m-r60-seed3"
