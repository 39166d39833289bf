"""Every performance figure in one command: ``python -m benchmarks run [--quick] [--no-record]
[--only ingest,match,analyze,startup] [--rebuild-table]`` (RESULTS.md, "Targets").

Each step of :func:`plan` is a benchmark run as ``python -m benchmarks.<module>`` in a child
process (a fresh interpreter, its own results file and section, as when run by hand; its
report handed back through ``--report-json``). A results file of kind ``run`` then lists the
steps and their files, and the targets section is rebuilt (:mod:`benchmarks.targets`). A failed
step is recorded as such and the run goes on; the exit status is then 1. ``--quick`` checks
the machinery in about two minutes on small sizes and says what it leaves out; its children
record nothing (they would replace the full-size rows), and it is never judged.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import REPO_DIR, report, say
from benchmarks.measure import Start, run_stamp
from benchmarks.report import load_results
from benchmarks.targets import RUN, evaluate, place_section, section, table
from fixtures.sized import SIZED_LOGS

#: Runs of every measurement: each figure is the median of these, with min and max.
RUNS: Final = 3
GROUPS: Final = ("ingest", "match", "analyze", "startup")
#: The full run's inputs: every sized log but the bundle.
INGEST_INPUTS: Final = tuple(name for name in SIZED_LOGS if name != "bundle")
FULL_SIZE_MB: Final = 1024
QUICK_SIZE_MB: Final = 32
#: The 4,096-host incident's length: 4,096 hosts × 2 h × ~2,520 rows per host and hour
#: (``benchmarks/.cache/match/calibration-*.json``) ≈ 20.6 M rows, past the target's 20 M.
E2E_4096_MINUTES: Final = 120
#: --quick's Python-loop sample: 100,000 lines take ~13 s a run, 10,000 about 1.5 s.
QUICK_SAMPLE: Final = 10_000
#: The inputs --quick ingests: those the targets judge (3 runs of all seven at 32 MiB take
#: about 100 s on a loaded 2-core machine, more than its whole budget).
QUICK_INPUTS: Final = ("cloud_logging", "cloud_logging_gz", "text", "kubelet")
#: What --quick leaves out, and why (said in its output and kept in its run file): the step
#: (or the ``--only`` group it belongs to) and the reason.
QUICK_LEFT_OUT: Final = (
    (
        "ingest",
        "ingest of cloud_logging_array, kubelet_zst and modelarts",
        "3 runs of them take about 50 s more (figures without a target)",
    ),
    (
        "analyze",
        "analyze at 1,024 hosts",
        "3 runs of bundle → report at 1,024 hosts take about 9 minutes",
    ),
    (
        "analyze",
        "analyze at 4,096 hosts",
        "its bundle is ~21 GB and 3 runs of bundle → report take far longer than 2 minutes",
    ),
)


@dataclass(frozen=True)
class Step:
    """One benchmark invocation: ``python -m benchmarks.GROUP ARGS``, named ``GROUP`` or
    ``GROUP-N`` (its ``--only`` group is the benchmark)."""

    name: str
    args: tuple[str, ...]

    @property
    def group(self) -> str:
        return self.name.partition("-")[0]

    def shown(self) -> str:
        """The command as recorded (from the repository root)."""
        return shlex.join(["python", "-m", f"benchmarks.{self.group}", *self.args])


def plan(*, quick: bool) -> list[Step]:
    """The steps of a full or a quick run, in order."""
    runs = ("--runs", str(RUNS))
    if quick:
        inputs = ("--inputs", ",".join(QUICK_INPUTS))
        return [
            Step("ingest", ("--size-mb", str(QUICK_SIZE_MB), *runs, *inputs)),
            Step(
                "match",
                ("--rows", "1M", "--backends", "polars", "--sample", str(QUICK_SAMPLE), *runs),
            ),
            Step("analyze-64", ("--hosts", "64", "--minutes", "10", *runs)),
            Step("startup", runs),
        ]
    inputs = ("--inputs", ",".join(INGEST_INPUTS))
    return [
        Step("ingest", ("--size-mb", str(FULL_SIZE_MB), *runs, *inputs)),
        Step("match", ("--rows", "10M", *runs)),
        Step("match-1024", ("--hosts", "1024", *runs)),
        Step("analyze-64", ("--hosts", "64", *runs)),
        Step("analyze-1024", ("--hosts", "1024", *runs)),
        Step("analyze-4096", ("--hosts", "4096", "--minutes", str(E2E_4096_MINUTES), *runs)),
        Step("startup", runs),
    ]


def find_results_file(made: dict[str, Any], directory: Path) -> str | None:
    """The name of the results file in ``directory`` that recorded the report ``made`` (same
    kind, recording time and command), or None."""
    fields = ("kind", "recorded_at", "command")
    found = load_results(directory)
    matching = [
        name for name, data in found.items() if all(data.get(f) == made.get(f) for f in fields)
    ]
    return max(matching, default=None)


def run_step(step: Step, workdir: Path, *, record: bool) -> tuple[dict[str, Any], Any]:
    """Run ``step`` in a child process (its output goes to this terminal); what the ``run``
    file says of it, and the report it handed back (None when it failed)."""
    handed = workdir / f"{step.name}.json"
    module = f"benchmarks.{step.group}"
    command = [sys.executable, "-m", module, *step.args, "--report-json", str(handed)]
    if not record:
        command.append("--no-record")
    say(f"== {step.name}: {step.shown()}" + ("" if record else " --no-record"))
    started = time.perf_counter()
    code = subprocess.run(command, cwd=REPO_DIR, check=False).returncode
    wall = time.perf_counter() - started
    made = json.loads(handed.read_text()) if code == 0 and handed.is_file() else None
    results_file = find_results_file(made, report.RESULTS_DIR) if made and record else None
    status = "ok" if made is not None else "failed"
    say(
        f"== {step.name}: {status} in {wall:,.0f} s"
        + (f" ({results_file})" if results_file else "")
    )
    return {
        "name": step.name,
        "command": step.shown() + ("" if record else " --no-record"),
        "exit_code": code,
        "status": status,
        "wall_s": wall,
        "results_file": results_file,
    }, made


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = report.parser_for("benchmarks run", __doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (checks, never judged)")
    parser.add_argument("--no-record", action="store_true", help="write no results or RESULTS.md")
    parser.add_argument("--only", default=",".join(GROUPS), help=f"some of {','.join(GROUPS)}")
    help_ = "only rebuild the targets table of RESULTS.md from the results files"
    parser.add_argument("--rebuild-table", action="store_true", help=help_)
    args = parser.parse_args(argv)
    args.groups = [name.strip() for name in args.only.split(",") if name.strip()]
    if not args.groups or not set(args.groups) <= set(GROUPS):
        parser.error(f"--only: a comma-separated subset of {','.join(GROUPS)}")
    return args


def _shown(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it."""
    return str(path.relative_to(REPO_DIR)) if path.is_relative_to(REPO_DIR) else str(path)


def rebuild_table(*, write: bool) -> str:
    """The targets section from every results file; written into RESULTS.md when ``write``."""
    text = section(load_results(report.RESULTS_DIR))
    if write:
        current = report.RESULTS_MD.read_text() if report.RESULTS_MD.is_file() else ""
        report.RESULTS_MD.write_text(place_section(current or "# Benchmark results\n", text))
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    if args.rebuild_table:
        text = rebuild_table(write=not args.no_record)
        print(text, end="")
        if not args.no_record:
            say(f"rebuilt the targets section of {_shown(report.RESULTS_MD)}")
        return 0
    command = report.recorded_command(
        "benchmarks", ["run", *(sys.argv[2:] if argv is None else argv)]
    )
    steps = [step for step in plan(quick=args.quick) if step.group in args.groups]
    left_out = [
        {"name": name, "why": why}
        for group, name, why in QUICK_LEFT_OUT
        if args.quick and group in args.groups
    ]
    for item in left_out:
        say(f"--quick leaves out {item['name']}: {item['why']}")
    record = not args.quick and not args.no_record
    start = Start.now()
    started = time.perf_counter()
    done: list[dict[str, Any]] = []
    reports: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="culprit-run-") as workdir:
        for step in steps:
            entry, made = run_step(step, Path(workdir), record=record)
            done.append(entry)
            if made is not None:
                reports[entry["results_file"] or step.name] = made
    wall = time.perf_counter() - started
    rows = evaluate(reports, list(reports), quick=args.quick)
    made_run: dict[str, Any] = {
        **run_stamp(RUN, command, RUNS),
        "quick": args.quick,
        "only": args.groups,
        "wall_s": wall,
        "steps": done,
        "left_out": left_out,
        "results_files": [s["results_file"] for s in done if s["results_file"]],
        "method": (
            "each step is python -m benchmarks.<module> in a child process (its own results "
            "file and RESULTS.md section when recorded); figures: median (min-max) of "
            f"{RUNS} runs; targets: benchmarks/targets.py over the results files"
            + ("; quick: children not recorded, their reports kept here" if args.quick else "")
        ),
        **start.provenance(),
        "targets": [row.as_dict() for row in rows],
    }
    if args.quick:
        made_run["reports"] = reports
    say("this run's figures" + (" (quick: never judged)" if args.quick else "") + ":")
    print(table(rows), end="")
    over = " (over --quick's 2 minutes)" if args.quick and wall > 120 else ""
    say(f"run finished in {wall:,.0f} s{over}")
    if made_run["analyzer_changed_during_run"]:
        say("warning:" + report.change_note(made_run).removeprefix(" Warning:"))
    if not args.no_record:
        out = report.results_path(made_run["date"], start.host["hostname"])
        report.write_report(out, made_run)
        rebuild_table(write=True)
        say(f"wrote {_shown(out)} and the targets section of {_shown(report.RESULTS_MD)}")
    return 0 if all(step["status"] == "ok" for step in done) else 1
