"""The start-up benchmark's bookkeeping: its 10 lines, the bytecode share it records and its
RESULTS.md section. Nothing is timed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from benchmarks.families import STARTUP
from benchmarks.startup import TEN_LINES, compiled_share


def test_the_file_has_ten_lines_ending_in_the_failure() -> None:
    lines = TEN_LINES.splitlines()
    assert len(lines) == 10 and TEN_LINES.endswith("\n")
    assert any("XlaRuntimeError" in line for line in lines[-4:])


def test_the_bytecode_share_counts_compiled_modules(tmp_path: Path) -> None:
    for name in ("a", "b", "c", "d"):
        (tmp_path / f"{name}.py").write_text("")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / f"a.{sys.implementation.cache_tag}.pyc").write_bytes(b"")
    (tmp_path / "__pycache__" / "b.other-99.pyc").write_bytes(b"")  # another interpreter's
    assert compiled_share(tmp_path) == 0.25
    assert compiled_share(tmp_path / "empty") == 0.0


def test_the_section_shows_the_median_its_range_and_the_floors() -> None:
    figures: dict[str, Any] = {
        "wall_s": [1.2, 0.9, 1.0],
        "wall_median_s": 1.0,
        "cpu_s": [1.1, 0.8, 0.9],
        "cpu_median_s": 0.9,
        "peak_rss_mib": 170.4,
    }
    report: dict[str, Any] = {
        "date": "2026-12-07",
        "runs": 3,
        "command": "python -m benchmarks.startup --runs 3",
        "machine": {"git_commit": "0123456789abcdef"},
        "results": [
            {
                "command_timed": "culprit analyze FILE -o OUT --quiet",
                "lines": 10,
                "bytecode_compiled_share": 1.0,
                **figures,
                "floors": {"python -c pass": {**figures, "wall_median_s": 0.05}},
            }
        ],
    }
    section = STARTUP.render(report, "benchmarks/results/x.json")
    assert section.startswith("<!-- startup:begin -->") and section.endswith(
        "<!-- startup:end -->\n"
    )
    assert "| `culprit analyze FILE -o OUT --quiet`, 10 lines | 1.00 (0.90–1.20) | 0.90" in section
    assert "| floor: `python -c pass` | 0.05 (0.90–1.20)" in section
    assert "100% of the analyzer's modules" in section


def test_the_import_floor_runs_in_the_environment_culprit_sets() -> None:
    # A floor culprit's own run could go under would be none: culprit keeps OpenBLAS to one
    # thread before numpy is imported, so the floor imports polars and pyarrow the same way.
    from analyzer.cli.application import ENVIRONMENT
    from benchmarks.startup import FLOORS

    code = FLOORS["import polars, pyarrow"]
    assert code.endswith("import polars, pyarrow")
    assert all(repr(name) in code and repr(value) in code for name, value in ENVIRONMENT.items())
