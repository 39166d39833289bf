"""The performance targets, judged from the recorded results files: the targets table at the
top of ``benchmarks/RESULTS.md`` (what each target reads: :data:`TARGETS`).

A pure function of the results files, so the table can be rebuilt at any time without
measuring (``python -m benchmarks run --rebuild-table``). A target reads its figure from a
results file of the kind that measures it, at the target's size; MB and GB are 10^6 and 10^9
bytes, as the targets are stated. A figure is the median of the run's repetitions with their
min and max (a peak RSS is judged on the highest run; a ratio's range pairs the extremes). A
target is judged only on a figure from a file the latest ``run`` file lists (a ``--quick`` run
lists none); otherwise its row shows the latest figure recorded at its size, with its date.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

from benchmarks.figures import (
    COLD,
    E2E_HOSTS,
    REMATCH,
    SCENARIO,
    Figure,
    Reader,
    Report,
    analysis,
    e2e_rss,
    gzip,
    ingest,
    over,
    startup,
    zstd,
)
from benchmarks.report import kind_of, stamp

RUN: Final = "run"
TARGETS_BEGIN: Final = "<!-- targets:begin -->"
TARGETS_END: Final = "<!-- targets:end -->"


@dataclass(frozen=True)
class Target:
    """A target: what it says, its threshold, the results kind it is read from and how."""

    key: str
    area: str
    text: str
    #: The threshold as shown; ``None`` for a figure listed without a target.
    threshold: str | None
    kind: str
    read: Reader


@dataclass(frozen=True)
class Row:
    """A target judged on the results files: this run's figure, or the latest earlier one."""

    target: Target
    #: ``met``, ``not met``, ``not measured in this run``, ``quick run: not judged``, or ``–``
    #: (a figure without a target).
    status: str
    figure: Figure | None
    #: The figure is not from this run (``status`` says "not measured in this run").
    earlier: bool

    def as_dict(self) -> dict[str, Any]:
        """The row as the ``targets`` list of a ``run`` results file keeps it."""
        said = {k: v for k, v in vars(self.target).items() if k not in ("kind", "read")}
        figure = None if self.figure is None else asdict(self.figure)
        return {**said, "status": self.status, "earlier": self.earlier, "figure": figure}


_AT_4096: Final = f"{SCENARIO} at 4,096 hosts (≥ 20 M rows, ≥ 8 GB bundle): bundle → report"
_OVER: Final = "full catalogue over ≥ 10 M rows (polars backend): rows/s over"
_OR_CEILING: Final = ", or the best library ceiling of the same run when lower"
_GZIP: Final = "≥ 0.9 × min(plain `cloud_logging` ingest, fastest inflate), same run"


def _group(area: str, kind: str, *rows: tuple[str, str, str | None, Reader]) -> list[Target]:
    """Targets of one area read from results files of ``kind``: (key, text, threshold, how)."""
    return [Target(key, area, text, threshold, kind, read) for key, text, threshold, read in rows]


#: Every target, in table order, then the figures listed without a target (threshold None).
TARGETS: Final[tuple[Target, ...]] = (
    *_group(
        "End to end",
        "analyze",
        ("e2e-4096-time", _AT_4096, "≤ 120 s", analysis(COLD, E2E_HOSTS, 120.0, sized=True)),
        ("e2e-4096-rss", f"{_AT_4096}, peak RSS", "≤ 4 GB (3,815 MiB) in every run", e2e_rss),
        (
            "e2e-1024-time",
            f"{SCENARIO} at 1,024 hosts (60 min): bundle → report",
            "≤ 15 s",
            analysis(COLD, 1024, 15.0, minutes=60.0),
        ),
    ),
    *_group(
        "Matching",
        "match",
        ("match-vs-rg", f"{_OVER} ripgrep's, same regexes", "≥ 1.5×", over("rg", 1.5)),
        (
            "match-vs-rg-1024",
            "full catalogue over the 1,024-host case (polars backend): rows/s over ripgrep's, "
            "same regexes",
            "≥ 1.5×",
            over("rg", 1.5, hosts=1024),
        ),
        (
            "match-vs-loop",
            f"{_OVER} the plain Python loop's",
            "≥ 100×",
            over("python-loop", 100.0),
        ),
    ),
    *_group(
        "Re-analysis",
        "analyze",
        (
            "reanalysis-4096",
            "re-match + diagnose + report of the ingested 4,096-host case",
            "≤ 5 s",
            analysis(REMATCH, E2E_HOSTS, 5.0, sized=True),
        ),
    ),
    *_group(
        "Start-up",
        "startup",
        (
            "startup-10-lines",
            "`culprit analyze FILE -o OUT` on a 10-line file (start-up and imports included)",
            "≤ 1 s",
            startup(1.0),
        ),
    ),
    *_group(
        "Ingest",
        "ingest",
        (
            "ingest-cloud_logging",
            "Cloud Logging JSON-lines (`cloud_logging`, 1 GiB)",
            f"≥ 150 MB/s{_OR_CEILING}",
            ingest("cloud_logging", 150.0),
        ),
        (
            "ingest-text",
            "text logs: container stderr (`text`, 1 GiB)",
            f"≥ 300 MB/s{_OR_CEILING}",
            ingest("text", 300.0),
        ),
        (
            "ingest-kubelet",
            "text logs: kubelet journal (`kubelet`, 1 GiB)",
            f"≥ 300 MB/s{_OR_CEILING}",
            ingest("kubelet", 300.0),
        ),
        ("ingest-gzip", "gzip input (`cloud_logging_gz`), MB/s of decoded bytes", _GZIP, gzip),
        # Figures without a target.
        (
            "ingest-cloud_logging_array",
            "gcloud JSON array of the `cloud_logging` entries (`cloud_logging_array`)",
            None,
            ingest("cloud_logging_array", None),
        ),
        (
            "ingest-modelarts",
            "ModelArts worker log (`modelarts`, 1 GiB)",
            None,
            ingest("modelarts", None),
        ),
        ("ingest-zstd", "zstd journal (`kubelet_zst`), MB/s of decoded bytes", None, zstd),
    ),
    *_group(
        "End to end",
        "analyze",
        (
            "e2e-64-time",
            f"{SCENARIO} at 64 hosts (60 min): bundle → report",
            None,
            analysis(COLD, 64, None, minutes=60.0),
        ),
    ),
    *_group(
        "Re-analysis",
        "analyze",
        (
            "reanalysis-1024",
            "re-match + diagnose + report of the ingested 1,024-host case (60 min)",
            None,
            analysis(REMATCH, 1024, None, minutes=60.0),
        ),
    ),
)


# -- judging ------------------------------------------------------------------------------------


def latest_run(files: Mapping[str, Report]) -> tuple[str, Report] | None:
    """The latest results file of kind ``run``: (name, report), or None."""
    runs = [(name, report) for name, report in files.items() if kind_of(report) == RUN]
    return max(runs, key=lambda item: stamp(item[1], item[0]), default=None)


def evaluate(
    files: Mapping[str, Report], this_run: Collection[str] | None = None, *, quick: bool = False
) -> list[Row]:
    """Every target judged on its latest figure from a file of ``this_run`` (by default those
    the latest ``run`` file lists), else shown as "not measured in this run" with the latest
    other figure; ``quick``: the figures are a quick run's, shown but never judged."""
    if this_run is None:
        latest = latest_run(files)
        quick_run = latest is None or bool(latest[1].get("quick"))
        this_run = () if latest is None or quick_run else latest[1].get("results_files", [])
    ordered = sorted(files.items(), key=lambda item: stamp(item[1], item[0]))
    rows = []
    for target in TARGETS:
        found = (
            target.read(report, name, not quick)
            for name, report in ordered
            if kind_of(report) == target.kind
        )
        figures = [figure for figure in found if figure is not None]
        current = [f for f in figures if f.file in this_run]
        if current and quick:
            # A quick figure never counts: it says nothing of met or not.
            status = "–" if target.threshold is None else "quick run: not judged"
            rows.append(Row(target, status, replace(current[-1], met=None), earlier=False))
        elif current:
            met = current[-1].met
            status = "–" if met is None else "met" if met else "not met"
            rows.append(Row(target, status, current[-1], earlier=False))
        else:
            rows.append(
                Row(target, "not measured in this run", figures[-1] if figures else None, True)
            )
    return rows


# -- the RESULTS.md section ---------------------------------------------------------------------


def _cell(text: str) -> str:
    """``text`` safe inside a table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _run_label(name: str, report: Report) -> str:
    machine = report.get("machine") or {}
    commit = (machine.get("git_commit") or "?")[:12]
    dirty = "+" if machine.get("analyzer_modified_vs_commit") else ""
    return f"`benchmarks/results/{name}` ({report.get('date', '?')}, commit `{commit}`{dirty})"


def _measured(row: Row) -> str:
    """The *measured* cell: this run's figure, or the latest earlier one and its date (the
    number of runs is said when under 3: such a figure is not a median of 3)."""
    figure = row.figure
    if figure is None:
        return "not measured in this run; none recorded" if row.earlier else "–"
    runs = f"{figure.runs} run" + ("" if figure.runs == 1 else "s")
    text = f"{figure.text}; {figure.detail}"
    if row.earlier:
        verdict = "" if figure.met is None else f"; {'met' if figure.met else 'not met'} then"
        return f"not measured in this run; latest recorded ({figure.date}, {runs}): {text}{verdict}"
    return text + ("" if figure.runs >= 3 else f" ({runs})")


def table(rows: list[Row]) -> str:
    """The targets table (rows with a threshold) and the list of figures without one."""
    lines = [
        "| area | target | threshold | measured: median (min–max) | results file | status |",
        "|---|---|---|---|---|---|",
    ]
    extra = []
    for row in rows:
        file = f"`{row.figure.file}`" if row.figure else "–"
        if row.target.threshold is None:
            extra.append(f"* {row.target.area}, {row.target.text}: {_measured(row)} ({file}).")
            continue
        status = {"met": "**met**", "not met": "**not met**"}.get(row.status, row.status)
        lines.append(
            f"| {row.target.area} | {_cell(row.target.text)} | {_cell(row.target.threshold)} "
            f"| {_cell(_measured(row))} | {file} | {status} |"
        )
    if extra:
        lines += ["", "Figures without a target, from the same files:", "", *extra]
    return "\n".join(lines) + "\n"


def section(files: Mapping[str, Report]) -> str:
    """The text between the targets markers, from all results files ``files``."""
    latest = latest_run(files)
    if latest is None:
        head = (
            "No `python -m benchmarks run` is recorded yet: no target is judged, each row "
            "shows the latest figure recorded at the target's size."
        )
    elif latest[1].get("quick"):
        head = (
            f"Latest run: {_run_label(*latest)}, a `--quick` run: its figures (far below the "
            "targets' sizes) are not used here, so no target is judged; each row shows the "
            "latest figure recorded at the target's size."
        )
    else:
        name, report = latest
        failed = [s["name"] for s in report.get("steps", []) if s.get("status") != "ok"]
        head = (
            f"Latest run: {_run_label(name, report)}, command `{report.get('command')}`; "
            "a row is judged only on a figure that run produced"
            + (f" (steps that did not finish: {', '.join(failed)})" if failed else "")
            + "."
        )
    return (
        f"{TARGETS_BEGIN}\n{head} MB = 10⁶ bytes, GB = 10⁹ bytes; the results files are in "
        f"`benchmarks/results/`.\n\n{table(evaluate(files))}{TARGETS_END}\n"
    )


def place_section(text: str, new_section: str) -> str:
    """RESULTS.md's ``text`` with ``new_section`` between the targets markers (right after the
    title when they are missing)."""
    if TARGETS_BEGIN in text and TARGETS_END in text:
        before, _, rest = text.partition(TARGETS_BEGIN)
        return before + new_section.rstrip("\n") + rest.partition(TARGETS_END)[2]
    title, _, rest = text.partition("\n")
    if not title.startswith("# "):
        title, rest = "# Benchmark results", text
    return f"{title}\n\n{new_section}\n" + rest.lstrip("\n")
