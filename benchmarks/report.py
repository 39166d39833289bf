"""Recording results: ``benchmarks/results/*.json`` and the section of ``RESULTS.md``.

Every recorded run is written to ``benchmarks/results/<YYYY-MM-DD>-<hostname>.json`` (``-2``,
``-3`` … when a run of that day and host is already recorded). The section between the
:data:`BEGIN` and :data:`END` markers of ``benchmarks/RESULTS.md`` is then rebuilt from all
recorded runs: per input, its latest result, with the date and commit of the run it came
from, so a run of some inputs keeps the others' rows.
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
#: One recorded input: the report (results file) it comes from, its result, the file name.
Entry = tuple[dict[str, Any], dict[str, Any], str]


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


def _commit(report: dict[str, Any]) -> str:
    """The run's commit, short, with ``+`` when ``analyzer/`` had uncommitted changes."""
    m = report["machine"]
    text = f"`{_short(m['git_commit'])}`"
    return text + ("+" if m["analyzer_modified_vs_commit"] else "")


def latest_results(directory: Path) -> list[Entry]:
    """Per input, the latest recorded result: ``(report, result, file name)``.

    Reports are ordered by ``recorded_at`` (older reports only have ``date``, which sorts
    before any time of the same day), then by file name. Inputs come in
    :data:`~benchmarks.inputs.INPUT_NAMES` order, unknown ones after them.
    """
    latest: dict[str, tuple[tuple[str, str], Entry]] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        key = (str(report.get("recorded_at") or report.get("date", "")), path.name)
        for result in report.get("results", []):
            name = result["input"]
            if name not in latest or key >= latest[name][0]:
                latest[name] = (key, (report, result, path.name))
    order = {name: index for index, name in enumerate(INPUT_NAMES)}
    names = sorted(latest, key=lambda name: (order.get(name, len(order)), name))
    return [latest[name][1] for name in names]


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
                f"{report['date']}, {_commit(report)} ({chr(ord('A') + files.index(file))})"
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
            f"* ({chr(ord('A') + index)}) `benchmarks/results/{file}`: measured {report['date']} "
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


def update_results_md(section: str) -> None:
    """Put ``section`` between the markers of RESULTS.md (at its end when they are missing)."""
    text = RESULTS_MD.read_text() if RESULTS_MD.is_file() else "# Benchmark results\n\n"
    if BEGIN in text and END in text:
        before, _, rest = text.partition(BEGIN)
        _, _, after = rest.partition(END)
        text = before + section.rstrip("\n") + after
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS_MD.write_text(text)


def change_note(report: dict[str, Any]) -> str:
    """What changed in the repository while the run was going on, if anything."""
    if not report["analyzer_changed_during_run"]:
        return ""
    after = report.get("analyzer_sha256_after")
    if after is None:  # recorded before the end state was kept
        return " Warning: `analyzer/` sources or the checked-out commit changed during this run."
    if after != report["analyzer_sha256"]:
        return (
            " Warning: `analyzer/` sources changed during this run (sha256 "
            f"`{after[:12]}` at its end)."
        )
    return (
        f" The checked-out commit moved to `{_short(report.get('git_commit_after'))}` "
        "during this run; the `analyzer/` sources were the same at its start and end."
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
    """Write ``report`` to a new results file and rebuild the RESULTS.md section; the file."""
    out = _results_path(report["date"], report["machine"]["hostname"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    update_results_md(markdown_section(latest_results(out.parent)))
    return out
