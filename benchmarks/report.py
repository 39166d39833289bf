"""Recording results: ``benchmarks/results/*.json`` and the sections of ``RESULTS.md``.

Every recorded run is a new results file ``benchmarks/results/<date>-<host>[-N].json`` whose
``kind`` says which benchmark wrote it (files from before ``kind`` existed are ingest runs).
That benchmark's section of ``RESULTS.md``, between ``<!-- KIND:begin -->`` and
``<!-- KIND:end -->``, is then rebuilt from every results file of its kind by one writer,
driven by the benchmark's entry in the table of :mod:`benchmarks.families`: a
:class:`RowsFamily` shows per row key the latest result, the run each row comes from and a
detail line per row; a :class:`RunFamily` shows the latest run whole. What the figures mean
is RESULTS.md's own prose, around the markers; a section whose markers are missing is added
at the end.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import BENCHMARKS_DIR, REPO_DIR, say

RESULTS_DIR: Final = BENCHMARKS_DIR / "results"
RESULTS_MD: Final = BENCHMARKS_DIR / "RESULTS.md"
Report = dict[str, Any]
Result = dict[str, Any]
#: One recorded result: the report (results file) it comes from, the result, the file name.
Entry = tuple[Report, Result, str]


def markers(kind: str) -> tuple[str, str]:
    """The begin and end markers of the RESULTS.md section of ``kind``."""
    return f"<!-- {kind}:begin -->", f"<!-- {kind}:end -->"


def kind_of(report: Report) -> str:
    """Which benchmark recorded ``report`` (files from before ``kind`` are ingest runs)."""
    return str(report.get("kind", "ingest"))


def stamp(report: Report, file: str) -> tuple[str, str]:
    """The order of results files: recording time (or the date of older ones), file name."""
    return (str(report.get("recorded_at") or report.get("date", "")), file)


def load_results(directory: Path) -> dict[str, Report]:
    """Every readable results file of ``directory``: name -> report."""
    found: dict[str, Report] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found[path.name] = data
    return found


def reports(directory: Path, kind: str) -> list[tuple[Report, str]]:
    """The results files of ``kind`` in ``directory``, oldest first: (report, file name)."""
    found = [(r, name) for name, r in load_results(directory).items() if kind_of(r) == kind]
    return sorted(found, key=lambda item: stamp(*item))


# -- the writer ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A table column: its header, its alignment row (``---``, ``--:``) and its cell."""

    header: str
    align: str
    cell: Callable[[Result], str]


def short_commit(commit: str | None) -> str:
    """A commit hash as shown in RESULTS.md (``?`` when git was not available)."""
    return (commit or "?")[:12]


def change_note(report: Report, package: str = "analyzer") -> str:
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
        f" The checked-out commit moved to `{short_commit(report.get('git_commit_after'))}` "
        f"during this run; the `{package}/` sources were the same at its start and end."
    )


@dataclass(frozen=True)
class RowsFamily:
    """A section of the latest result per row key, from every run of the kind."""

    kind: str
    columns: tuple[Column, ...]
    #: What a row stands for, and the rows' order (given the key and the row's result).
    key: Callable[[Report, Result], tuple[Any, ...]]
    order: Callable[[tuple[Any, ...], Result], tuple[Any, ...]]
    #: The versions listed for a run, and how its measurements ran.
    tools: Callable[[Report], str]
    how: Callable[[Report], str]
    #: One line per row under the runs.
    detail: Callable[[Report, Result], str]
    #: More lines under a run's line (its case, its bundle, its verdict).
    run_details: Callable[[Report], list[str]] = lambda report: []
    #: The section's text when nothing is recorded (None: an empty table).
    empty: str | None = None
    #: Where the *measured* column goes, its header, and whether it shows the run's date.
    measured_at: int = 1
    measured_header: str = "measured"
    dated: bool = True
    #: The package whose sources are the code under test (``fixtures`` for generation).
    package: str = "analyzer"

    def table(self, results: Sequence[Result], measured: Sequence[str] | None = None) -> str:
        """The results table; ``measured`` adds the column saying where each row comes from."""
        columns = [(c.header, c.align) for c in self.columns]
        if measured is not None:
            columns.insert(self.measured_at, (self.measured_header, "---"))
        lines = ["| " + " | ".join(h for h, _ in columns) + " |"]
        lines.append("|" + "|".join(a for _, a in columns) + "|")
        for index, result in enumerate(results):
            cells = [c.cell(result) for c in self.columns]
            if measured is not None:
                cells.insert(self.measured_at, measured[index])
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def latest(self, directory: Path) -> list[Entry]:
        """Per row key, the latest recorded result: ``(report, result, file name)``."""
        latest: dict[tuple[Any, ...], Entry] = {}
        for report, file in reports(directory, self.kind):
            for result in report.get("results", []):
                latest[self.key(report, result)] = (report, result, file)
        return [latest[k] for k in sorted(latest, key=lambda k: self.order(k, latest[k][1]))]

    def section(self, directory: Path) -> str:
        return self.render(self.latest(directory))

    def render(self, entries: Sequence[Entry]) -> str:
        """The text between the markers: the table, the runs its rows come from (A, B, …)
        and a detail line per row."""
        begin, end = markers(self.kind)
        if not entries and self.empty is not None:
            return f"{begin}\n{self.empty}\n{end}\n"
        files = list(dict.fromkeys(file for _, _, file in entries))
        runs = {file: report for report, _, file in entries}

        def measured(report: Report, file: str) -> str:
            m = report["machine"]
            dirty = "+" if m.get(f"{self.package}_modified_vs_commit") else ""
            label = (
                f"`{short_commit(m['git_commit'])}`{dirty} ({chr(ord('A') + files.index(file))})"
            )
            return f"{report['date']}, {label}" if self.dated else label

        table = self.table([r for _, r, _ in entries], [measured(r, f) for r, _, f in entries])
        lines = [begin, table.rstrip("\n"), ""]
        for index, file in enumerate(files):
            lines.append(self.run_line(chr(ord("A") + index), file, runs[file]))
            lines.extend(self.run_details(runs[file]))
        lines.append("")
        lines.extend(self.detail(report, result) for report, result, _ in entries)
        lines.append(end)
        return "\n".join(lines) + "\n"

    def run_line(self, letter: str, file: str, report: Report) -> str:
        """Where run ``letter`` was measured: machine, versions, commit and source digest of
        the code under test, and the command."""
        m, package = report["machine"], self.package
        return (
            f"* ({letter}) `benchmarks/results/{file}`: measured {report['date']} on "
            f"`{m['hostname']}`: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, "
            f"{m['os']}; Python {m['python']}, {self.tools(report)}; commit "
            f"`{short_commit(m['git_commit'])}`"
            + (
                f" with uncommitted changes to `{package}/`"
                if m.get(f"{package}_modified_vs_commit")
                else ""
            )
            + f" (sha256 of the `{package}/` sources `{report[f'{package}_sha256'][:12]}`)"
            + f". Command (from the repository root): `{report['command']}` ({self.how(report)})."
            + change_note(report, package)
        )

    def printed(self, report: Report, name: str) -> str:
        """What a run prints on stdout: its results table."""
        return self.table(report["results"])


@dataclass(frozen=True)
class RunFamily:
    """A section showing the latest run of the kind, rendered whole."""

    kind: str
    #: ``render(report, name of its results file)``: the section, markers included.
    render: Callable[[Report, str], str]
    package: str = "analyzer"

    def section(self, directory: Path) -> str:
        recorded = reports(directory, self.kind)
        if not recorded:
            begin, end = markers(self.kind)
            return f"{begin}\nNo run recorded yet.\n{end}\n"
        report, file = recorded[-1]
        return self.render(report, f"benchmarks/results/{file}")

    def printed(self, report: Report, name: str) -> str:
        """What a run prints on stdout: its section."""
        return self.render(report, name)


Family = RowsFamily | RunFamily


# -- RESULTS.md and the results files ------------------------------------------------------------


def put_between(section: str, begin: str, end: str) -> None:
    """Put ``section`` between RESULTS.md's markers ``begin`` and ``end`` (appended if missing)."""
    text = RESULTS_MD.read_text() if RESULTS_MD.is_file() else "# Benchmark results\n\n"
    if begin in text and end in text:
        before, _, rest = text.partition(begin)
        text = before + section.rstrip("\n") + rest.partition(end)[2]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS_MD.write_text(text)


def results_path(date: str, hostname: str) -> Path:
    """``results/<date>-<host>.json``, or ``-2``, ``-3`` … when that run is already there."""
    path = RESULTS_DIR / f"{date}-{hostname}.json"
    number = 2
    while path.exists():
        path = RESULTS_DIR / f"{date}-{hostname}-{number}.json"
        number += 1
    return path


def write_report(path: Path, report: Report) -> None:
    """Write ``report`` as a results file (and as ``--report-json`` hands it back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def record(report: Report, family: Family) -> Path:
    """Write ``report`` to a new results file and rebuild its family's section; the file."""
    out = results_path(report["date"], report["machine"]["hostname"])
    write_report(out, report)
    put_between(family.section(out.parent), *markers(family.kind))
    return out


def finish(report: Report, family: Family, args: argparse.Namespace) -> None:
    """How every benchmark ends: a warning if the code under test changed during the run, its
    table on stdout, the record (unless ``--no-record``), ``--report-json``'s copy."""
    if report[f"{family.package}_changed_during_run"]:
        note = change_note(report, family.package).removeprefix(" Warning:")
        say("warning:" + (note or " see the report"))
    name = "(not recorded)"
    if not args.no_record:
        out = record(report, family)
        name = str(out.relative_to(REPO_DIR))
        say(f"wrote {name} and {RESULTS_MD.relative_to(REPO_DIR)}")
    print(family.printed(report, name), end="")
    if args.report_json is not None:
        write_report(args.report_json, report)


# -- the command line -----------------------------------------------------------------------------


def add_recording_options(parser: argparse.ArgumentParser, runs: int = 3) -> None:
    """``--runs``, ``--no-record`` and ``--report-json FILE``, as every benchmark takes them."""
    parser.add_argument("--runs", type=int, default=runs, help="runs of each measurement")
    parser.add_argument(
        "--no-record", action="store_true", help="do not write results JSON or RESULTS.md"
    )
    parser.add_argument(
        "--report-json",
        type=Path,
        help="also write the run's report to this file (recorded or not; for benchmarks.run)",
    )


def checked(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed arguments; ``--runs`` must be positive."""
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    return args


def recorded_command(module: str, argv: Sequence[str] | None) -> str:
    """The command a results file records for ``python -m MODULE`` with ``argv`` (this
    process's when None), without ``--report-json FILE``, which changes nothing measured."""
    given = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", "-m", module, *recorded_argv(given)])


def recorded_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``--report-json FILE`` (see :func:`recorded_command`)."""
    kept = [arg for arg in argv if not arg.startswith("--report-json=")]
    while "--report-json" in kept:
        at = kept.index("--report-json")
        del kept[at : at + 2]
    return kept


def parser_for(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The command-line parser of ``python -m MODULE``: described by the first paragraph of
    its docstring, every option's default shown in ``--help``."""
    description, formatter = (doc or "").split("\n\n")[0], argparse.ArgumentDefaultsHelpFormatter
    return argparse.ArgumentParser(
        f"python -m {module}", None, description, formatter_class=formatter
    )
