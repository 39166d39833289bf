"""Recording results: ``benchmarks/results/*.json`` and the sections of ``RESULTS.md``.

Every recorded run is written to ``benchmarks/results/<YYYY-MM-DD>-<hostname>.json`` (``-2``,
``-3`` … when a run of that day and host is already recorded). A results file's ``kind`` says
which benchmark wrote it: ``ingest`` (``python -m benchmarks.ingest``; files recorded before
``kind`` existed have none and are ingest runs) or ``generate``
(``python -m benchmarks.generate``). The section of that benchmark in
``benchmarks/RESULTS.md`` is then rebuilt from all recorded runs of its kind:

* ingest, between :data:`BEGIN` and :data:`END`: per input, its latest result, with the date
  and commit of the run it came from, so a run of some inputs keeps the others' rows;
* generate, between :data:`GENERATE_BEGIN` and :data:`GENERATE_END`: per scenario, host
  count, minutes and rate, the latest result, likewise.
"""

from __future__ import annotations

import json
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
INGEST: Final = "ingest"
GENERATE: Final = "generate"
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


def markdown_section(entries: list[Entry]) -> str:
    """The text between the markers: the latest result of every input, and the runs."""
    files = list(dict.fromkeys(file for _, _, file in entries))
    runs = {file: report for report, _, file in entries}
    lines = [
        BEGIN,
        "Each row is the latest recorded measurement of its input; the *measured* column "
        "gives that run's date and commit (`+`: with uncommitted changes to `analyzer/`) and "
        "the run it came from (below). MiB/s = input size / median wall time.",
        "",
        table(
            [result for _, result, _ in entries],
            [
                f"{report['date']}, {_commit(report)} ({_letter(files.index(file))})"
                for report, _, file in entries
            ],
        ).rstrip("\n"),
        "",
    ]
    for index, file in enumerate(files):
        report = runs[file]
        m = report["machine"]
        v = m["versions"]
        names = ", ".join(r["input"] for r in report["results"])
        lines.append(
            f"* ({_letter(index)}) `benchmarks/results/{file}`: measured {report['date']} "
            f"on `{m['hostname']}`: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, "
            f"{m['os']}; Python {m['python']}, culprit {v['culprit']}, polars {v['polars']}, "
            f"pyarrow {v['pyarrow']}, duckdb {v['duckdb']}, numpy {v['numpy']}; commit "
            f"`{_short(m['git_commit'])}`"
            + (
                " with uncommitted changes to `analyzer/`"
                if m["analyzer_modified_vs_commit"]
                else ""
            )
            + f" (sha256 of the `analyzer/` sources `{report['analyzer_sha256'][:12]}`)"
            + f". Command (from the repository root): `{report['command']}` ({names}; "
            f"{report['runs']} run(s) per input, each `culprit ingest FILE -o CASE --force "
            "--quiet` in a fresh child process)." + change_note(report)
        )
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
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


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
    files = list(dict.fromkeys(file for _, _, file in entries))
    runs = {file: report for report, _, file in entries}
    lines = [
        GENERATE_BEGIN,
        "Each row is the latest recorded measurement of its scenario, host count, minutes and "
        "rate; the *commit* column gives that run's commit (`+`: with uncommitted changes to "
        "`fixtures/`) and the run it came from (below). *MiB written* counts the files of "
        "`OUT/bundle/`; wall s is the median over the run's repetitions; MiB/s = MiB written "
        "/ wall s.",
        "",
        generate_table(
            [result for _, result, _ in entries],
            [
                f"{_commit(report, 'fixtures')} ({_letter(files.index(file))})"
                for report, _, file in entries
            ],
        ).rstrip("\n"),
        "",
    ]
    for index, file in enumerate(files):
        report = runs[file]
        m = report["machine"]
        v = m["versions"]
        lines.append(
            f"* ({_letter(index)}) `benchmarks/results/{file}`: measured {report['date']} on "
            f"`{m['hostname']}`: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, "
            f"{m['os']}; Python {m['python']}, polars {v['polars']}, numpy {v['numpy']}; "
            f"commit `{_short(m['git_commit'])}`"
            + (
                " with uncommitted changes to `fixtures/`"
                if m.get("fixtures_modified_vs_commit")
                else ""
            )
            + f" (sha256 of the `fixtures/` sources `{report['fixtures_sha256'][:12]}`)"
            + f". Command (from the repository root): `{report['command']}` ({report['runs']} "
            "run(s) per host count, each `python -m fixtures generate SCENARIO -o OUT --hosts N "
            "--seed S --minutes M --rate R --force` in a fresh child process)."
            + change_note(report, "fixtures")
        )
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


def _results_path(date: str, hostname: str) -> Path:
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
    out = _results_path(report["date"], report["machine"]["hostname"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    if kind(report) == GENERATE:
        section = generate_section(latest_generate_results(out.parent))
        update_results_md(section, GENERATE_BEGIN, GENERATE_END)
    else:
        update_results_md(markdown_section(latest_results(out.parent)))
    return out
