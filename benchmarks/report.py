"""Recording results: ``benchmarks/results/*.json`` and the sections of ``RESULTS.md``.

Every recorded run is written to ``benchmarks/results/<YYYY-MM-DD>-<hostname>.json`` (``-2``,
``-3`` … when a run of that day and host is already recorded). A results file's ``kind`` says
which benchmark wrote it: ``ingest`` (``python -m benchmarks.ingest``; files recorded before
``kind`` existed have none and are ingest runs), ``generate``
(``python -m benchmarks.generate``) or ``match`` (``python -m benchmarks.match``). The section
of that benchmark in ``benchmarks/RESULTS.md`` is then rebuilt from all recorded runs of its
kind:

* ingest, between :data:`BEGIN` and :data:`END`: per input, its latest result, with the date
  and commit of the run it came from, so a run of some inputs keeps the others' rows;
* generate, between :data:`GENERATE_BEGIN` and :data:`GENERATE_END`: per scenario, host
  count, minutes and rate, the latest result, likewise;
* match, between :data:`MATCH_BEGIN` and :data:`MATCH_END`: per requested case size and
  backend or baseline, the latest result, likewise (its ratios are to the baselines of its
  own run);
* analyze (``python -m benchmarks.analyze``, written by :func:`record_analyze`), between
  :data:`ANALYZE_BEGIN` and :data:`ANALYZE_END` (added in front of the BGL section when
  missing): per bundle (scenario, hosts, minutes, rate, seed) and measurement, the latest
  result, likewise.

A results file of kind ``run`` (``python -m benchmarks run``) lists the files its steps
recorded; the targets section at the top of RESULTS.md is rebuilt from all results files by
:mod:`benchmarks.targets`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from benchmarks import BENCHMARKS_DIR
from benchmarks.inputs import INPUT_NAMES

RESULTS_DIR: Final = BENCHMARKS_DIR / "results"
RESULTS_MD: Final = BENCHMARKS_DIR / "RESULTS.md"
BEGIN: Final = "<!-- ingest:begin -->"
END: Final = "<!-- ingest:end -->"
GENERATE_BEGIN: Final = "<!-- generate:begin -->"
GENERATE_END: Final = "<!-- generate:end -->"
MATCH_BEGIN: Final = "<!-- match:begin -->"
MATCH_END: Final = "<!-- match:end -->"
INGEST: Final = "ingest"
GENERATE: Final = "generate"
MATCH: Final = "match"
#: One recorded result: the report (results file) it comes from, the result, the file name.
Entry = tuple[dict[str, Any], dict[str, Any], str]


def kind(report: dict[str, Any]) -> str:
    """Which benchmark recorded ``report`` (files from before ``kind`` are ingest runs)."""
    return str(report.get("kind", INGEST))


def _reports(directory: Path, wanted: str) -> list[tuple[tuple[str, str], dict[str, Any], str]]:
    """The readable results files of kind ``wanted`` in ``directory``, oldest first:
    ``(sort key, report, file name)``.

    Reports are ordered by ``recorded_at`` (older reports only have ``date``, which sorts
    before any time of the same day), then by file name.
    """
    found = []
    for path in sorted(directory.glob("*.json")):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(report, dict) or kind(report) != wanted:
            continue
        key = (str(report.get("recorded_at") or report.get("date", "")), path.name)
        found.append((key, report, path.name))
    return sorted(found, key=lambda item: item[0])


def _letter(index: int) -> str:
    """The label of the ``index``-th run listed under a section: A, B, …"""
    return chr(ord("A") + index)


def table(results: list[dict[str, Any]], measured: list[str] | None = None) -> str:
    """The results table; ``measured`` adds a column saying when each row was measured."""
    extra = measured is not None
    head = (
        "| input | reader | "
        + ("measured | " if extra else "")
        + "input MiB | lines | rows | median s | min s | max s | MiB/s | peak RSS MiB |\n"
        + "|---|---|"
        + ("---|" if extra else "")
        + "--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    body = "".join(
        f"| {r['input']} | {', '.join(r['readers'])} | "
        + (f"{measured[i]} | " if measured is not None else "")
        + f"{r['input_mib']:,.1f} | {r['records']:,} | {r['rows']:,} | {r['median_s']:.1f} "
        f"| {r['min_s']:.1f} | {r['max_s']:.1f} | {r['mib_per_s']:.1f} "
        f"| {r['peak_rss_mib']:,.0f} |\n"
        for i, r in enumerate(results)
    )
    return head + body


def _short(commit: str | None) -> str:
    """A commit hash as shown in RESULTS.md (``?`` when git was not available)."""
    return (commit or "?")[:12]


def _commit(report: dict[str, Any], package: str = "analyzer") -> str:
    """The run's commit, short, with ``+`` when ``package/`` had uncommitted changes."""
    m = report["machine"]
    text = f"`{_short(m['git_commit'])}`"
    return text + ("+" if m.get(f"{package}_modified_vs_commit") else "")


def _run_line(
    letter: str, file: str, report: dict[str, Any], tools: str, how: str, package: str = "analyzer"
) -> str:
    """The line that says where run ``letter`` was measured: machine, ``tools`` (versions),
    commit and source digest of ``package``, and the command, ``how`` it ran."""
    m = report["machine"]
    modified = m.get(f"{package}_modified_vs_commit")
    return (
        f"* ({letter}) `benchmarks/results/{file}`: measured {report['date']} on "
        f"`{m['hostname']}`: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, "
        f"{m['os']}; Python {m['python']}, {tools}; commit `{_short(m['git_commit'])}`"
        + (f" with uncommitted changes to `{package}/`" if modified else "")
        + f" (sha256 of the `{package}/` sources `{report[f'{package}_sha256'][:12]}`)"
        + f". Command (from the repository root): `{report['command']}` ({how})."
        + change_note(report, package)
    )


def latest_results(directory: Path) -> list[Entry]:
    """Per input, the latest recorded ingest result: ``(report, result, file name)``.

    Reports are ordered by ``recorded_at`` (older reports only have ``date``, which sorts
    before any time of the same day), then by file name. Inputs come in
    :data:`~benchmarks.inputs.INPUT_NAMES` order, unknown ones after them.
    """
    latest: dict[str, Entry] = {}
    for _, report, file in _reports(directory, INGEST):
        for result in report.get("results", []):
            latest[result["input"]] = (report, result, file)
    order = {name: index for index, name in enumerate(INPUT_NAMES)}
    names = sorted(latest, key=lambda name: (order.get(name, len(order)), name))
    return [latest[name] for name in names]


def _head(
    begin: str,
    prose: str,
    entries: list[Entry],
    render: Callable[[list[dict[str, Any]], list[str]], str],
    *,
    dated: bool = True,
    package: str = "analyzer",
) -> tuple[list[str], list[tuple[int, str, dict[str, Any]]]]:
    """A section's opening lines (marker, ``prose``, the table ``render`` makes with a
    *measured* label per row) and its runs in letter order (index, file, report)."""
    files = list(dict.fromkeys(file for _, _, file in entries))
    runs = {file: report for report, _, file in entries}

    def measured(report: dict[str, Any], file: str) -> str:
        label = f"{_commit(report, package)} ({_letter(files.index(file))})"
        return f"{report['date']}, {label}" if dated else label

    table_text = render(
        [result for _, result, _ in entries],
        [measured(report, file) for report, _, file in entries],
    )
    lines = [begin, prose, "", table_text.rstrip("\n"), ""]
    return lines, [(index, file, runs[file]) for index, file in enumerate(files)]


def markdown_section(entries: list[Entry]) -> str:
    """The text between the markers: the latest result of every input, and the runs."""
    lines, runs = _head(
        BEGIN,
        "Each row is the latest recorded measurement of its input; the *measured* column "
        "gives that run's date and commit (`+`: with uncommitted changes to `analyzer/`) and "
        "the run it came from (below). MiB/s = input size / median wall time.",
        entries,
        table,
    )
    for index, file, report in runs:
        m = report["machine"]
        v = m["versions"]
        names = ", ".join(r["input"] for r in report["results"])
        tools = (
            f"culprit {v['culprit']}, polars {v['polars']}, pyarrow {v['pyarrow']}, "
            f"duckdb {v['duckdb']}, numpy {v['numpy']}"
        )
        how = (
            f"{names}; {report['runs']} run(s) per input, each `culprit ingest FILE -o CASE "
            "--force --quiet` in a fresh child process"
        )
        lines.append(_run_line(_letter(index), file, report, tools, how))
    lines.append("")
    for _, r, _ in entries:
        c = r["counts"]
        lines.append(
            f"* {r['input']}: {c['records']:,} lines -> {c['rows']:,} rows, {c['folded']:,} "
            f"folded, {c['quarantined']:,} quarantined, {c['duplicates']:,} duplicates; case "
            f"{r['case_mib']:,.0f} MiB on disk; CPU per run "
            + ", ".join(f"{run['user_s'] + run['system_s']:.1f} s" for run in r["runs"])
            + "; 1-minute load average before -> after each run "
            + ", ".join(f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in r["runs"])
            + "."
            + _compressed_note(r)
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def _compressed_note(result: dict[str, Any]) -> str:
    """For a compressed input: what it decodes to, MiB/s over the decoded bytes (the table's
    MiB/s is over the stored bytes) and the decompression baselines over the same file."""
    if not result.get("compression"):
        return ""
    from benchmarks.inflate import describe

    decoded = result.get("decoded_mib")
    if decoded is None:
        return f" {result['compression']}: decoded size not recorded."
    return (
        f" {result['compression']}-compressed: decodes to {decoded:,.1f} MiB, "
        f"**{result['decoded_mib_per_s']:,.1f} MiB/s of decoded bytes** (the table's "
        f"{result['mib_per_s']:,.1f} MiB/s is over the stored bytes); decoding the same file to "
        f"`/dev/null` alone: {describe(result.get('inflate') or {})}."
    )


def generate_table(results: list[dict[str, Any]], commits: list[str] | None = None) -> str:
    """The generation results table; ``commits`` adds a column with each row's commit."""
    extra = commits is not None
    head = (
        "| scenario | hosts | minutes | rate | files | MiB written | wall s | MiB/s "
        "| peak RSS MiB |" + (" commit |" if extra else "") + "\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|" + ("---|" if extra else "") + "\n"
    )
    body = "".join(
        f"| {r['scenario']} | {r['hosts']:,} | {r['minutes']:g} | {r['rate']:g} "
        f"| {r['files']:,} | {r['written_mib']:,.1f} | {r['median_s']:.1f} "
        f"| {r['mib_per_s']:.1f} | {r['peak_rss_mib']:,.0f} |"
        + (f" {commits[i]} |" if commits is not None else "")
        + "\n"
        for i, r in enumerate(results)
    )
    return head + body


def _generate_key(result: dict[str, Any]) -> tuple[str, int, float, float]:
    """What a generation row stands for: scenario, hosts, minutes and rate."""
    return (
        str(result["scenario"]),
        int(result["hosts"]),
        float(result["minutes"]),
        float(result["rate"]),
    )


def latest_generate_results(directory: Path) -> list[Entry]:
    """Per scenario, host count, minutes and rate, the latest recorded generation result:
    ``(report, result, file name)``, in that order (reports ordered as by
    :func:`latest_results`)."""
    latest: dict[tuple[str, int, float, float], Entry] = {}
    for _, report, file in _reports(directory, GENERATE):
        for result in report.get("results", []):
            latest[_generate_key(result)] = (report, result, file)
    return [latest[key] for key in sorted(latest)]


def generate_section(entries: list[Entry]) -> str:
    """The text between the generate markers: the latest result of every scenario, size and
    rate, the runs they come from and per-run details."""
    if not entries:
        return f"{GENERATE_BEGIN}\nNo generation run recorded yet.\n{GENERATE_END}\n"
    lines, runs = _head(
        GENERATE_BEGIN,
        "Each row is the latest recorded measurement of its scenario, host count, minutes and "
        "rate; the *commit* column gives that run's commit (`+`: with uncommitted changes to "
        "`fixtures/`) and the run it came from (below). *MiB written* counts the files of "
        "`OUT/bundle/`; wall s is the median over the run's repetitions; MiB/s = MiB written "
        "/ wall s.",
        entries,
        generate_table,
        dated=False,
        package="fixtures",
    )
    for index, file, report in runs:
        v = report["machine"]["versions"]
        tools = f"polars {v['polars']}, numpy {v['numpy']}"
        how = (
            f"{report['runs']} run(s) per host count, each `python -m fixtures generate "
            "SCENARIO -o OUT --hosts N --seed S --minutes M --rate R --force` in a fresh child "
            "process"
        )
        lines.append(_run_line(_letter(index), file, report, tools, how, "fixtures"))
    lines.append("")
    for _, r, _ in entries:
        lines.append(
            f"* {r['scenario']}, {r['hosts']:,} hosts, {r['minutes']:g} min, rate {r['rate']:g}, "
            f"seed {r['seed']}: {r['bytes']:,} bytes in {r['files']:,} files; wall per run "
            + ", ".join(f"{run['seconds']:.1f} s" for run in r["runs"])
            + "; CPU per run "
            + ", ".join(f"{run['user_s'] + run['system_s']:.1f} s" for run in r["runs"])
            + "; 1-minute load average before -> after each run "
            + ", ".join(f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in r["runs"])
            + "."
        )
    lines.append(GENERATE_END)
    return "\n".join(lines) + "\n"


def _figure(value: float | None, digits: int = 0, suffix: str = "") -> str:
    """A number for a table cell (``–`` when missing)."""
    return "–" if value is None else f"{value:,.{digits}f}{suffix}"


def _ratio(value: float | None) -> str:
    """A throughput ratio for a table cell: ``12.3×``, ``0.41×``, ``–``."""
    if value is None:
        return "–"
    if value < 0.1:
        return f"{value:.2g}×"
    return f"{value:,.{2 if value < 10 else 1}f}×"


def match_table(results: list[dict[str, Any]], measured: list[str] | None = None) -> str:
    """The matching results table; ``measured`` adds a column saying when each row was
    measured."""
    extra = measured is not None
    head = (
        "| backend / baseline | "
        + ("measured | " if extra else "")
        + "rows | signatures / patterns | wall s, median (min–max) | rows/s | MiB/s "
        "| peak RSS MiB | × Python loop | × grep |\n"
        + "|---|"
        + ("---|" if extra else "")
        + "--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    body = ""
    for i, r in enumerate(results):
        when = f"{measured[i]} | " if measured is not None else ""
        if r.get("status") == "not installed":
            body += f"| {r['label']} | {when}– | – | not installed | – | – | – | – | – |\n"
            continue
        wall = f"{r['median_s']:,.1f} ({r['min_s']:,.1f}–{r['max_s']:,.1f})"
        if r.get("extrapolated_from"):
            wall = f"{r['median_s']:,.0f}, extrapolated ({r['min_s']:,.0f}–{r['max_s']:,.0f})"
        rss = None if r.get("extrapolated_from") else r.get("peak_rss_mib")
        body += (
            f"| {r['label']} | {when}{r['rows']:,} | {r['patterns']:,} | {wall} "
            f"| {r['rows_per_s']:,.0f} | {r['mib_per_s']:,.1f} | {_figure(rss)} "
            f"| {_ratio(r.get('vs_python_loop'))} | {_ratio(r.get('vs_grep'))} |\n"
        )
    return head + body


def _match_key(report: dict[str, Any], result: dict[str, Any]) -> tuple[int, str]:
    """What a matching row stands for: the requested case size and the backend or baseline."""
    return (int(report.get("rows_requested", result.get("rows", 0))), str(result["name"]))


def latest_match_results(directory: Path) -> list[Entry]:
    """Per requested case size and backend or baseline, the latest recorded matching result:
    ``(report, result, file name)``, larger cases first, then backends in their run order and
    the baselines after them (reports ordered as by :func:`latest_results`)."""
    latest: dict[tuple[int, str], Entry] = {}
    for _, report, file in _reports(directory, MATCH):
        for result in report.get("results", []):
            latest[_match_key(report, result)] = (report, result, file)

    def order(key: tuple[int, str]) -> tuple[int, int, int, str]:
        result = latest[key][1]
        baseline = result.get("kind") == "baseline"
        return (-key[0], baseline, int(result.get("order", 0)), key[1])

    return [latest[key] for key in sorted(latest, key=order)]


def _target_lines(report: dict[str, Any]) -> list[str]:
    """The acceptance targets of a run, met or not, as list items."""
    targets = report.get("targets")
    if not targets:
        return []
    lines = []
    for check in targets["checks"]:
        verdict = "met" if check["met"] else "**not met**"
        lines.append(f"  * {check['text']}: {check['value']} — {verdict}.")
    return lines


def _rg_note(catalogue: dict[str, Any]) -> str:
    """How many catalogue regexes ripgrep was given (runs from before ripgrep was fed the
    catalogue's own regexes say nothing)."""
    if "patterns_rg" not in catalogue:
        return ""
    left_out = catalogue.get("left_out_rg") or []
    return (
        f" {len(catalogue['patterns_rg']):,} of the catalogue's own regexes adapted for ripgrep "
        "(named groups made plain, a newline outside a class made a space)"
        + (
            "; left out: " + "; ".join(f"`{code}` ({why})" for code, why in left_out) + "."
            if left_out
            else ", none left out."
        )
    )


def match_section(entries: list[Entry]) -> str:
    """The text between the match markers: the latest result of every backend and baseline
    per case size, the runs they come from and per-row details."""
    if not entries:
        return f"{MATCH_BEGIN}\nNo matching run recorded yet.\n{MATCH_END}\n"
    lines, runs = _head(
        MATCH_BEGIN,
        "Each row is the latest recorded measurement of its backend or baseline on a case of "
        "its size; the *measured* column gives that run's date and commit (`+`: with "
        "uncommitted changes to `analyzer/`) and the run it came from (below). The ratios are "
        "rows/s over the rows/s of the Python loop and of `grep -E` measured in the same run. "
        "MiB/s = message text (UTF-8 bytes of the `message` column) / median wall time.",
        entries,
        match_table,
    )
    for index, file, report in runs:
        m = report["machine"]
        v = m["versions"]
        case = report["case"]
        cat = report["catalogue"]
        left_out = cat["left_out"]
        tools = (
            f"culprit {v['culprit']}, polars {v['polars']}, pyarrow {v['pyarrow']}, "
            f"duckdb {v['duckdb']}; {report['grep_version']}"
        )
        how = f"{report['runs']} run(s) of each"
        lines.append(_run_line(_letter(index), file, report, tools, how))
        lines.append(
            f"  * Case: {case['scenario']}, {case['hosts']:,} hosts × {case['minutes']:g} min, "
            f"rate {case['rate']:g}, seed {case['seed']} (fixtures `{case['fixtures_sha256']}`"
            f"), ingested by culprit {case['culprit_version']}: {case['rows']:,} rows, "
            f"{case['message_bytes']:,} bytes of message text "
            f"({case['message_bytes'] / (1 << 20):,.0f} MiB, {case['multiline_messages']:,} "
            "messages with a newline)."
        )
        lines.append(
            f"  * Catalogue: {cat['signatures']:,} signatures (catalogue sha256 "
            f"`{cat['digest'][:12]}`); {len(cat['patterns_ere']):,} translated to POSIX ERE "
            "for grep"
            + (
                "; left out: " + "; ".join(f"`{code}` ({why})" for code, why in left_out) + "."
                if left_out
                else ", none left out."
            )
            + _rg_note(cat)
        )
        lines.extend(_target_lines(report))
    lines.append("")
    for report, r, _ in entries:
        if r.get("status") == "not installed":
            lines.append(f"* {r['label']}: not installed on the machine (`{r['program']}`).")
            continue
        walls = ", ".join(f"{run['seconds']:,.1f} s" for run in r["runs"])
        cpu = ", ".join(f"{run['user_s'] + run['system_s']:,.1f} s" for run in r["runs"])
        load = ", ".join(
            f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in r["runs"]
        )
        note = f" {r['note']}" if r.get("note") else ""
        lines.append(
            f"* {r['label']}, {report['date']}, {r['rows']:,} rows: `{r['command']}`.{note} "
            f"Wall per run {walls}; CPU per run {cpu}; peak RSS {r['peak_rss_mib']:,.0f} MiB; "
            f"1-minute load average before -> after each run {load}."
        )
    lines.append(MATCH_END)
    return "\n".join(lines) + "\n"


def add_recording_options(parser: argparse.ArgumentParser) -> None:
    """``--no-record`` and ``--report-json FILE``, as every recording benchmark takes them."""
    parser.add_argument(
        "--no-record", action="store_true", help="do not write results JSON or RESULTS.md"
    )
    parser.add_argument(
        "--report-json",
        type=Path,
        help="also write the run's report to this file (recorded or not; for benchmarks.run)",
    )


def recorded_command(module: str, argv: Sequence[str] | None) -> str:
    """The command a results file records for ``python -m MODULE`` run with ``argv`` (this
    process's arguments when ``None``), without ``--report-json``."""
    given = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", "-m", module, *recorded_argv(given)])


def recorded_argv(argv: Sequence[str]) -> list[str]:
    """A benchmark's arguments as its results file records the command: without
    ``--report-json FILE``, which only says where ``python -m benchmarks run`` collects the
    report (a temporary file) and changes nothing that is measured."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--report-json":
            skip = True
        elif not arg.startswith("--report-json="):
            kept.append(arg)
    return kept


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Write ``report`` to ``path`` as a results file is written (``--report-json``: how
    ``python -m benchmarks run`` collects a child's report, recorded or not)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def update_results_md(section: str, begin: str = BEGIN, end: str = END) -> None:
    """Put ``section`` between the markers ``begin`` and ``end`` of RESULTS.md (at its end when
    they are missing)."""
    text = RESULTS_MD.read_text() if RESULTS_MD.is_file() else "# Benchmark results\n\n"
    if begin in text and end in text:
        before, _, rest = text.partition(begin)
        _, _, after = rest.partition(end)
        text = before + section.rstrip("\n") + after
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS_MD.write_text(text)


def change_note(report: dict[str, Any], package: str = "analyzer") -> str:
    """What changed in the repository while the run was going on, if anything: the sources of
    ``package/`` (the code under test) or the checked-out commit."""
    if not report[f"{package}_changed_during_run"]:
        return ""
    after = report.get(f"{package}_sha256_after")
    if after is None:  # recorded before the end state was kept
        return f" Warning: `{package}/` sources or the checked-out commit changed during this run."
    if after != report[f"{package}_sha256"]:
        return (
            f" Warning: `{package}/` sources changed during this run (sha256 "
            f"`{after[:12]}` at its end)."
        )
    return (
        f" The checked-out commit moved to `{_short(report.get('git_commit_after'))}` "
        f"during this run; the `{package}/` sources were the same at its start and end."
    )


def results_path(date: str, hostname: str) -> Path:
    """``results/<date>-<host>.json``, or ``-2``, ``-3`` … when that run is already there."""
    path = RESULTS_DIR / f"{date}-{hostname}.json"
    number = 2
    while path.exists():
        path = RESULTS_DIR / f"{date}-{hostname}-{number}.json"
        number += 1
    return path


def record(report: dict[str, Any]) -> Path:
    """Write ``report`` to a new results file and rebuild the RESULTS.md section of its kind;
    the file."""
    out = results_path(report["date"], report["machine"]["hostname"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    if kind(report) == GENERATE:
        section = generate_section(latest_generate_results(out.parent))
        update_results_md(section, GENERATE_BEGIN, GENERATE_END)
    elif kind(report) == MATCH:
        update_results_md(match_section(latest_match_results(out.parent)), MATCH_BEGIN, MATCH_END)
    else:
        update_results_md(markdown_section(latest_results(out.parent)))
    return out


def conclude(
    report: dict[str, Any], *, changed: bool, keep: bool, package: str = "analyzer"
) -> None:
    """Warn when the sources changed under the run; record the report unless ``keep`` is
    false (``--no-record``)."""
    from benchmarks import REPO_DIR
    from benchmarks.progress import say

    if changed:
        note = change_note(report, package).removeprefix(" Warning:")
        say("warning:" + (note or " see the report"))
    if keep:
        out = record(report)
        say(f"wrote {out.relative_to(REPO_DIR)} and {RESULTS_MD.relative_to(REPO_DIR)}")


# -- the end-to-end analysis benchmark (python -m benchmarks.analyze) ---------------------------

ANALYZE_BEGIN: Final = "<!-- analyze:begin -->"
ANALYZE_END: Final = "<!-- analyze:end -->"
ANALYZE: Final = "analyze"
#: The section that the analyze section goes in front of when RESULTS.md has no analyze
#: markers yet (written by ``python -m benchmarks.bgl --record``).
BGL_BEGIN: Final = "<!-- bgl:begin -->"
#: The heading and prose put in front of the analyze markers when they are first added.
ANALYZE_INTRO: Final = """## End-to-end analysis: bundle to report

`python -m benchmarks.analyze [--hosts 1024] [--scenario host-crash-heartbeat] [--minutes 60]
[--rate 60] [--seed 0] [--runs 3] [--no-record] [--keep]` (from the repository root) times
`culprit analyze` on a whole incident bundle written by the fixtures generator. The bundle is
generated once and cached in `benchmarks/.cache/analyze/` under a name carrying scenario,
hosts, minutes, rate, seed, a digest of the `fixtures/` sources and the culprit version; its
`truth.toml` (the generator's expected verdict) is kept beside it, out of what is ingested.
Every input is read once before the first timed run (page cache), and `sync` runs before
every run, outside the timed region. Each command runs `--runs` times in a fresh child
process, timed as for ingest: wall time around the child (interpreter start-up and imports
included, about a second), peak RSS and CPU the kernel's `rusage` of the `culprit` process.
The verdict of the first bundle → report run (its first error's citation and its culprit) is
checked against `truth.toml`. Raw figures are in `benchmarks/results/<date>-<host>.json`
(kind `analyze`); a recorded run rebuilds the section below from all of them (one row per
measurement, scenario, hosts, minutes, rate and seed: its latest measurement).

"""
#: The measurements of an analyze run, in table order: name -> order.
ANALYZE_ORDER: Final = {"bundle-to-report": 0, "rematch-diagnose": 1, "diagnose-only": 2}


def analyze_table(results: list[dict[str, Any]], measured: list[str] | None = None) -> str:
    """The end-to-end analysis table; ``measured`` adds a column saying when each row was
    measured."""
    extra = measured is not None
    head = (
        "| measurement | "
        + ("measured | " if extra else "")
        + "hosts | rows | bundle MiB | wall s, median (min–max) | peak RSS MiB |\n"
        + "|---|"
        + ("---|" if extra else "")
        + "--:|--:|--:|--:|--:|\n"
    )
    body = "".join(
        f"| {r['label']} | "
        + (f"{measured[i]} | " if measured is not None else "")
        + f"{r['hosts']:,} | {r['rows']:,} | {r['bundle_mib']:,.1f} "
        f"| {r['median_s']:,.1f} ({r['min_s']:,.1f}–{r['max_s']:,.1f}) "
        f"| {r['peak_rss_mib']:,.0f} |\n"
        for i, r in enumerate(results)
    )
    return head + body


#: What an analysis row stands for: scenario, hosts, minutes, rate, seed, measurement.
AnalyzeKey = tuple[str, int, float, float, int, str]


def _analyze_key(report: dict[str, Any], result: dict[str, Any]) -> AnalyzeKey:
    """What an analysis row stands for: scenario, hosts, minutes, rate, seed, measurement."""
    return (
        str(report["scenario"]),
        int(report["hosts"]),
        float(report["minutes"]),
        float(report["rate"]),
        int(report["seed"]),
        str(result["name"]),
    )


def latest_analyze_results(directory: Path) -> list[Entry]:
    """Per scenario, hosts, minutes, rate, seed and measurement, the latest recorded analysis
    result: ``(report, result, file name)``, larger bundles first, then the measurements in
    :data:`ANALYZE_ORDER` (reports ordered as by :func:`latest_results`)."""
    latest: dict[AnalyzeKey, Entry] = {}
    for _, report, file in _reports(directory, ANALYZE):
        for result in report.get("results", []):
            latest[_analyze_key(report, result)] = (report, result, file)

    def order(key: AnalyzeKey) -> tuple[Any, ...]:
        scenario, hosts, minutes, rate, seed, name = key
        rank = ANALYZE_ORDER.get(name, len(ANALYZE_ORDER))
        return (scenario, -hosts, -minutes, -rate, seed, rank, name)

    return [latest[key] for key in sorted(latest, key=order)]


def _yes(value: bool) -> str:
    return "yes" if value else "**no**"


def _verdict_line(report: dict[str, Any]) -> str:
    """The verdict of a run's first bundle → report run against the generator's truth."""
    check = report["verdict"]
    found, expected = check["found"], check["expected"]
    first = found.get("first_error")
    cited = f"`{first['path']}:{first['line']}` ({first['signature']})" if first else "none"
    want = expected["first_error"]
    host, true_host = found["culprit"].get("host") or "–", expected["culprit"].get("host") or "–"
    return (
        f"  * Verdict of the first bundle → report run: attempt {found['attempt']}, "
        f"{found['failure_mode']}; first error {cited}; culprit {found['culprit']['kind']} "
        f"`{host}`. Truth (`truth.toml`, attempt {expected['attempt']}): first error "
        f"`{want['path']}:{want['line']}`, culprit {expected['culprit']['kind']} `{true_host}`. "
        f"First error matches: {_yes(check['first_error_matches'])}; culprit matches: "
        f"{_yes(check['culprit_matches'])}; **verdict matches truth: "
        f"{'yes' if check['matches'] else 'no'}**."
    )


def analyze_section(entries: list[Entry]) -> str:
    """The text between the analyze markers: what each figure times, the latest result of
    every measurement per bundle, the runs they come from and per-row details."""
    if not entries:
        return f"{ANALYZE_BEGIN}\nNo end-to-end analysis run recorded yet.\n{ANALYZE_END}\n"
    lines, runs = _head(
        ANALYZE_BEGIN,
        "What each figure times, from the same generated bundle in the same run: "
        "**bundle → report** is `culprit analyze BUNDLE -o OUT --quiet` with no case yet "
        "(`OUT` deleted before each run, outside the timed region): ingesting the whole bundle "
        "into `OUT/case` with every reader it needs, matching the signature catalogue, "
        "diagnosing, and writing `OUT/report.md` and `OUT/findings.json`. **re-match + "
        "diagnose** is `culprit analyze OUT/case --quiet` on that ingested case with "
        "`OUT/case/matches.parquet` deleted before each run (outside the timed region): "
        "matching, diagnosing and writing the reports (into the case directory), no ingest. "
        "**diagnose only** is `culprit analyze OUT/case -o OUT2 --quiet` on the ingested and "
        "matched case: its matches were made with the same catalogue over the same rows, so "
        "they are reused (checked: the matches file is left untouched) and only diagnosing and "
        "writing the reports is left. All three include start-up and imports (about a second) "
        "and reading the case. Each row is the latest recorded measurement of its kind on its "
        "bundle (scenario, hosts, minutes, rate, seed); the "
        "*measured* column gives that run's date and commit (`+`: with uncommitted changes to "
        "`analyzer/`) and the run it came from (below). Rows = rows of the ingested case; "
        "bundle MiB = the sizes of the bundle's files; peak RSS = the highest of the runs.",
        entries,
        analyze_table,
    )
    for index, file, report in runs:
        v = report["machine"]["versions"]
        tools = (
            f"culprit {v['culprit']}, polars {v['polars']}, pyarrow {v['pyarrow']}, "
            f"duckdb {v['duckdb']}, numpy {v['numpy']}"
        )
        how = f"{report['runs']} run(s) of each measurement, each in a fresh child process"
        lines.append(_run_line(_letter(index), file, report, tools, how))
        b, case = report["bundle"], report["case"]
        lines.append(
            f"  * Bundle: {report['scenario']}, {report['hosts']:,} hosts × "
            f"{report['minutes']:g} min, rate {report['rate']:g}, seed {report['seed']} "
            f"(fixtures `{b['fixtures_sha256']}`): {b['bytes']:,} bytes in {b['files']:,} "
            f"files. Case: {case['counts']['records']:,} records -> {case['rows']:,} rows, "
            f"{case['counts']['folded']:,} folded, {case['counts']['quarantined']:,} "
            f"quarantined; {case['case_mib']:,.0f} MiB on disk; {case['matches']:,} matches."
        )
        lines.append(_verdict_line(report))
    lines.append("")
    for report, r, _ in entries:
        walls = ", ".join(f"{run['seconds']:,.1f} s" for run in r["runs"])
        cpu = ", ".join(f"{run['user_s'] + run['system_s']:,.1f} s" for run in r["runs"])
        load = ", ".join(
            f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in r["runs"]
        )
        agree = "" if r.get("verdicts_agree", True) else " **The runs' verdicts differ.**"
        lines.append(
            f"* {r['label']}, {report['scenario']}, {report['hosts']:,} hosts × "
            f"{report['minutes']:g} min, {report['date']}: `{r['command']}`.{agree} Wall per "
            f"run {walls}; CPU per run {cpu}; peak RSS {r['peak_rss_mib']:,.0f} MiB; "
            f"1-minute load average before -> after each run {load}."
        )
    lines.append(ANALYZE_END)
    return "\n".join(lines) + "\n"


def place_results_md_section(
    section: str, begin: str, end: str, *, before: str, intro: str = ""
) -> None:
    """Put ``section`` between the markers ``begin`` and ``end`` of RESULTS.md; when they are
    missing, add ``intro`` and the section in front of the marker ``before`` (at the end of
    the file when that is missing too)."""
    text = RESULTS_MD.read_text() if RESULTS_MD.is_file() else "# Benchmark results\n\n"
    if begin in text and end in text:
        update_results_md(section, begin, end)
        return
    if before in text:
        head, _, rest = text.partition(before)
        text = head + intro + section.rstrip("\n") + "\n\n" + before + rest
    else:
        text = text.rstrip("\n") + "\n\n" + intro + section
    RESULTS_MD.write_text(text)


def record_analyze(report: dict[str, Any]) -> Path:
    """Write the analyze ``report`` to a new results file and rebuild the analyze section of
    RESULTS.md (added in front of the BGL section when missing); the file."""
    out = results_path(report["date"], report["machine"]["hostname"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    section = analyze_section(latest_analyze_results(out.parent))
    place_results_md_section(
        section, ANALYZE_BEGIN, ANALYZE_END, before=BGL_BEGIN, intro=ANALYZE_INTRO
    )
    return out


def record_with_section(
    report: dict[str, Any],
    render: Callable[[dict[str, Any], str], str],
    markers: tuple[str, str, str],
    *,
    record: bool,
    copy: Path | None,
) -> str:
    """Record ``report`` in a new results file and put its section, ``render(report, name
    of that file)``, between the ``markers`` (begin, end, and the intro written in front of
    the BGL section when they are missing) of RESULTS.md; print the section; also write the
    report to ``copy`` when given. With ``record`` false, only print (and copy)."""
    from benchmarks.progress import say

    name = "(not recorded)"
    if record:
        out = results_path(report["date"], report["machine"]["hostname"])
        write_report(out, report)
        name = str(out.relative_to(RESULTS_DIR.parent.parent))
        say(f"wrote {name}")
    text = render(report, name)
    print(text, end="")
    if record:
        begin, end, intro = markers
        place_results_md_section(text, begin, end, before=BGL_BEGIN, intro=intro)
    if copy is not None:
        write_report(copy, report)
    return text
