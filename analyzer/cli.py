"""The ``culprit`` command: a thin typer client of :mod:`analyzer.api`.

Each command parses its arguments, makes one API call and renders the result. Errors raised on
purpose by the library (:class:`analyzer.errors.AnalyzerError`) become one line on stderr and
exit code 2; anything else is a bug and says so (``--debug`` shows the traceback). Heavy
libraries are imported inside the commands so ``culprit --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, NoReturn

import typer

if TYPE_CHECKING:
    import pyarrow as pa
    from rich.console import Console

    from analyzer.case.info import CaseInfo

#: A check found differences (replay): not an error of culprit or of its input.
EXIT_FAILED: Final = 1
EXIT_ERROR: Final = 2
EXIT_BUG: Final = 3

app = typer.Typer(
    name="culprit",
    help="Offline log forensics for large ML training incidents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
case_app = typer.Typer(help="Look at a case.", no_args_is_help=True)
app.add_typer(case_app, name="case")

_state: dict[str, bool] = {"debug": False}


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    sys.stderr.write(f"culprit: error: {message}\n")
    raise typer.Exit(code)


def _run(action: Any) -> Any:
    """Call ``action`` and turn library errors into one line and an exit code."""
    from analyzer.errors import AnalyzerError

    try:
        return action()
    except AnalyzerError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        sys.stderr.write("culprit: interrupted\n")
        raise typer.Exit(130) from None
    except (typer.Exit, typer.Abort):
        raise
    except Exception as exc:
        if _state["debug"]:
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (a bug in culprit; rerun with --debug "
            "for the traceback)",
            EXIT_BUG,
        )


@app.callback()
def _main(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks of internal errors.")
    ] = False,
) -> None:
    _state["debug"] = debug


@app.command()
def version() -> None:
    """Print culprit's version."""
    from analyzer import __version__

    typer.echo(__version__)


@app.command()
def ingest(
    bundle: Annotated[
        list[str],
        typer.Argument(
            help="Directories, archives (.tar, .tar.gz, .tar.zst, .zip) or log files; local "
            "paths or URLs (gs://, s3://, file://)."
        ),
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Case directory to write.")],
    year: Annotated[
        int | None, typer.Option(help="Year of timestamps that carry none (klog/absl MMDD).")
    ] = None,
    tz: Annotated[
        str | None,
        typer.Option(help="Zone of local timestamps without an offset (IANA name or +HH:MM)."),
    ] = None,
    reader: Annotated[
        str | None, typer.Option(help="Use this reader for every file instead of detecting.")
    ] = None,
    max_expansion: Annotated[
        float, typer.Option(help="Refuse a compressed stream expanding more than this ratio.")
    ] = 200.0,
    max_bytes: Annotated[
        int | None,
        typer.Option(help="Stop when the bundle decodes to more bytes than this in total."),
    ] = None,
    max_line_bytes: Annotated[
        int, typer.Option(help="Keep at most this many bytes of one line.")
    ] = 1 << 20,
    force: Annotated[bool, typer.Option(help="Ingest even if the case is up to date.")] = False,
    jobs: Annotated[
        int | None,
        typer.Option(help="Worker processes reading files (default: one per core)."),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Read only shard k/N (k from 0) of the bundle's files into the part directory "
            "OUT; `culprit merge` of all N parts makes the case.",
            metavar="k/N",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Ingest a bundle into a case directory.

    Example: culprit ingest incident.tar.zst -o /tmp/case
    """
    from analyzer import api

    options = api.ReadOptions(year=year, tz=tz, max_line_bytes=max_line_bytes)
    limits = api.BundleLimits(max_ratio=max_expansion, max_total_bytes=max_bytes)
    started = time.perf_counter()
    if shard is not None:
        if force:
            _fail("--force does not apply to --shard (a part is always written anew)")
        with _ProgressBar(enabled=not quiet) as progress:
            part = _run(
                lambda: api.ingest_shard(
                    bundle,
                    out,
                    shard,
                    options=options,
                    limits=limits,
                    reader=reader,
                    progress=progress,
                    jobs=jobs,
                )
            )
        _console().print(
            f"{out}: shard {part.shard} read in {time.perf_counter() - started:.1f} s; "
            "merge every shard with `culprit merge PARTS... -o CASE`"
        )
        return
    with _ProgressBar(enabled=not quiet) as progress:
        result = _run(
            lambda: api.ingest(
                bundle,
                out,
                options=options,
                limits=limits,
                reader=reader,
                force=force,
                progress=progress,
                jobs=jobs,
            )
        )
    elapsed = time.perf_counter() - started
    console = _console()
    counts = result.meta.counts
    if result.reused:
        console.print(
            f"{out}: up to date ({counts.rows:,} rows); nothing to do (--force re-ingests)"
        )
        return
    console.print(
        f"{out}: {counts.files:,} files, {counts.records:,} records -> {counts.rows:,} rows "
        f"({counts.folded:,} folded, {counts.blank:,} blank, {counts.quarantined:,} quarantined, "
        f"{counts.duplicates:,} duplicates) in {elapsed:.1f} s"
    )
    problems = counts.files_refused + counts.files_partial + counts.files_unrecognized
    if problems or counts.quarantined or counts.repaired:
        console.print(
            f"warning: {counts.files_refused} refused, {counts.files_partial} partly read, "
            f"{counts.files_unrecognized} unrecognized files; {counts.quarantined:,} records "
            f"quarantined, {counts.repaired:,} repaired; see `culprit case info {out}`",
            style="yellow",
        )


@case_app.command("info")
def case_info(
    case: Annotated[Path, typer.Argument(help="A case directory.")],
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    hosts: Annotated[int, typer.Option(help="How many hosts to list.")] = 20,
) -> None:
    """Counts per source, reader, severity and host; quarantine; files not fully read.

    Example: culprit case info /tmp/case
    """
    from analyzer import api

    if output not in ("table", "json"):
        _fail("--format must be table or json")
    info: CaseInfo = _run(lambda: api.case_info(case, top_hosts=hosts))
    if output == "json":
        typer.echo(info.model_dump_json(indent=2))
        return
    _render_info(info)


@case_app.command("hosts")
def case_hosts(
    case: Annotated[Path, typer.Argument(help="A case directory.")],
    output: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Every host of the case with all its aliases and the row that proves each one.

    Example: culprit case hosts /tmp/case
    """
    from analyzer import api

    if output not in ("table", "csv", "json"):
        _fail("--format must be table, csv or json")
    table = _run(lambda: api.case_hosts(case))
    if output != "table":
        _write_table(table, output, None, table.num_rows)
        return
    from rich.table import Table

    console = _console()
    rows = table.to_pylist()
    hosts = sorted({r["host"] for r in rows if not r["conflict"]})
    grid = Table(title=f"{len(hosts):,} hosts", title_justify="left")
    for column in ("host", "kind", "alias", "evidence", "rows"):
        grid.add_column(column, overflow="fold")
    previous = None
    for row in rows:
        if row["conflict"]:
            continue
        shown = row["host"] if row["host"] != previous else ""
        previous = row["host"]
        grid.add_row(shown, row["kind"], row["alias"], row["evidence"], _cell(row["rows"]))
    console.print(grid)
    conflicts = [r for r in rows if r["conflict"]]
    if conflicts:
        console.print(
            "Conflicts (aliases that rows tie to more than one host; not used):", style="yellow"
        )
        for row in conflicts:
            console.print(f"  {row['kind']} {row['alias']} -> {row['host']} ({row['evidence']})")


def _render_info(info: CaseInfo) -> None:
    from rich.table import Table

    console = _console()
    meta = info.meta
    counts = meta.counts
    console.print(f"[bold]{info.path}[/bold]  culprit {meta.tool_version}")
    console.print(
        f"files {counts.files:,} (read {counts.files_read:,}, unrecognized "
        f"{counts.files_unrecognized:,}, refused {counts.files_refused:,}, partial "
        f"{counts.files_partial:,})  records {counts.records:,} -> rows {counts.rows:,}  "
        f"folded {counts.folded:,}  blank {counts.blank:,}  quarantined {counts.quarantined:,}  "
        f"repaired {counts.repaired:,}  duplicates {counts.duplicates:,}"
    )
    console.print(
        f"time range {meta.first_ts or '-'} .. {meta.last_ts or '-'}  hosts {info.hosts:,}"
    )
    _print_table(console, Table, "Rows by source and reader", info.by_source)
    _print_table(console, Table, "Rows by severity", info.by_severity)
    _print_table(console, Table, f"Rows by host ({info.hosts:,} hosts)", info.by_host)
    if info.quarantine:
        _print_table(console, Table, "Quarantine", info.quarantine)
    if info.files_needing_attention:
        _print_table(console, Table, "Files not fully read", info.files_needing_attention)
    if info.unbalanced_files:
        _print_table(console, Table, "Files whose counts do not balance", info.unbalanced_files)


def _print_table(console: Console, table_type: Any, title: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    table = table_type(title=title, title_justify="left")
    for column in rows[0]:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*[_cell(value) for value in row.values()])
    console.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


@app.command()
def query(
    case: Annotated[Path, typer.Argument(help="A case directory.")],
    sql: Annotated[
        str,
        typer.Argument(
            help="SQL over the views rows, files, quarantine, duplicates, hosts and (after "
            "`culprit match`) matches."
        ),
    ],
    output: Annotated[str, typer.Option("--format", help="table, csv, json or parquet.")] = "table",
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Write here instead of stdout.")
    ] = None,
    max_rows: Annotated[int, typer.Option(help="Rows to show in a table.")] = 100,
) -> None:
    """Run SQL (DuckDB) over a case.

    Example: culprit query /tmp/case "SELECT host, count(*) FROM rows GROUP BY host"
    """
    from analyzer import api

    if output not in ("table", "csv", "json", "parquet"):
        _fail("--format must be table, csv, json or parquet")
    if output == "parquet" and out is None:
        _fail("--format parquet needs -o FILE")
    table = _run(lambda: api.query(case, sql))
    _write_table(table, output, out, max_rows)


@app.command("match")
def match_(
    case: Annotated[Path, typer.Argument(help="A case directory.")],
    backend: Annotated[
        str, typer.Option(help="Matching engine: polars (default), duckdb or python (slow).")
    ] = "polars",
    signatures: Annotated[
        list[Path] | None,
        typer.Option(
            "--signatures", help="An extra signature folder (<family>/<name>.toml); repeatable."
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Match only shard k/N (k from 0) of the case's row files into a part "
            "directory; `culprit merge` of all N parts writes the case's matches.",
            metavar="k/N",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--out", help="The part directory of --shard (default CASE/parts/match-k-of-N)."
        ),
    ] = None,
) -> None:
    """Match the signature catalogue over every row of a case (writes CASE/matches.parquet;
    then `culprit query CASE "SELECT * FROM matches"` shows each match with its row).

    Example: culprit match /tmp/case
    """
    from analyzer import api

    if shard is not None:
        part = _run(
            lambda: api.match_shard(case, shard, out, backend=backend, signatures=signatures or [])
        )
        _console().print(
            f"{case}: shard {part.shard}: {part.matches:,} matches in {part.rows_scanned:,} rows "
            f"of {len(part.row_files)} row files; merge every shard with `culprit merge`"
        )
        return
    if out is not None:
        _fail("-o/--out goes with --shard (without it the matches go into the case)")
    result = _run(lambda: api.match(case, backend=backend, signatures=signatures or []))
    rate = result.rows_scanned / result.seconds if result.seconds > 0 else 0.0
    _console().print(
        f"{case}: {result.matches:,} matches of {result.matched_signatures:,} signatures in "
        f"{result.rows_scanned:,} rows ({result.signatures:,} signatures, catalogue "
        f"{result.catalogue_digest[:12]}; {result.backend} {result.seconds:.1f} s, "
        f"{rate:,.0f} rows/s)"
    )


@app.command()
def merge(
    parts: Annotated[
        list[Path],
        typer.Argument(help="The directories every shard wrote (all N of one run)."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Ingest parts: the case to write. Match parts: the case they matched.",
        ),
    ],
) -> None:
    """Merge the outputs of `ingest --shard` into a case, or of `match --shard` into the
    case's matches. The parts are left as they were.

    Example: culprit merge parts/ingest-* -o /tmp/case
    """
    from analyzer import api

    started = time.perf_counter()
    result = _run(lambda: api.merge(parts, out))
    elapsed = time.perf_counter() - started
    if result.kind == "ingest":
        counts = result.meta.counts
        what = f"{counts.files:,} files, {counts.rows:,} rows ({counts.duplicates:,} duplicates)"
    else:
        what = f"{result.matches:,} matches"
    _console().print(f"{out}: {result.parts} {result.kind} parts merged: {what} in {elapsed:.1f} s")


@app.command()
def analyze(
    bundle: Annotated[
        list[str],
        typer.Argument(
            help="A case directory, or a bundle (directories, archives, files; paths or URLs)."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Output directory: the case in OUT/case, report.md and findings.json in OUT "
            "(a case's reports default to the case directory).",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print findings.json to stdout instead of the verdict.")
    ] = False,
    template: Annotated[
        str, typer.Option(help="Report layout: default, or modelarts-zh (ModelArts 诊断 layout).")
    ] = "default",
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Quote messages without redacting secrets.")
    ] = False,
    skew: Annotated[
        float, typer.Option(help="Clock-skew tolerance between hosts, in seconds.")
    ] = 2.0,
    silence: Annotated[
        float, typer.Option(help="A global silence this long (seconds) separates attempts.")
    ] = 600.0,
    backend: Annotated[str, typer.Option(help="Matching engine: polars, duckdb or python.")] = (
        "polars"
    ),
    signatures: Annotated[
        list[Path] | None,
        typer.Option(
            "--signatures", help="An extra signature folder (<family>/<name>.toml); repeatable."
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(help="Worker processes reading files (default: one per core)."),
    ] = None,
    engine: Annotated[
        str,
        typer.Option(
            help="Where ingest and matching run: local (default), or ray (shards as Ray tasks; "
            "pip install 'culprit[ray]'). Same findings either way."
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(help="Ray cluster to join (default: start a local Ray instance)."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="CPUs of the local Ray instance (default: all).")
    ] = None,
    shards: Annotated[
        int | None,
        typer.Option(help="Pieces the work is cut into under Ray (default: one per CPU)."),
    ] = None,
    html: Annotated[
        bool,
        typer.Option(
            "--html", help="Also write report.html (self-contained: opens with no network)."
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Ingest (or reuse) a case, match, diagnose; write report.md and findings.json and print
    the verdict.

    Example: culprit analyze incident.tar.zst -o /tmp/incident
    """
    from analyzer import api

    with _ProgressBar(enabled=not quiet and not json_out) as progress:
        result = _run(
            lambda: api.analyze(
                bundle,
                out,
                signatures=signatures or [],
                backend=backend,
                redact=not no_redact,
                template=template,
                skew_s=skew,
                silence_s=silence,
                progress=progress,
                jobs=jobs,
                engine=engine,
                address=address,
                workers=workers,
                shards=shards,
                html=html,
            )
        )
    if json_out:
        sys.stdout.write(result.findings.model_dump_json(indent=2) + "\n")
        return
    from analyzer.report.markdown import verdict_lines

    console = _console()
    verdict = result.findings.verdict
    for line in verdict_lines(verdict):
        console.print(line.replace("**", ""), markup=False)
    if verdict.first_error is not None:
        cited = verdict.first_error.citation
        console.print(f"First error: {cited.path}:{cited.line}", markup=False)
    attempts = len(result.findings.attempts)
    console.print(
        f"{attempts} attempt(s); report: {result.report_path}; findings: {result.findings_path}",
        markup=False,
    )
    if html:
        console.print(f"HTML report: {result.report_path.with_name('report.html')}", markup=False)


@app.command("report")
def report_(
    case: Annotated[Path, typer.Argument(help="A matched case directory.")],
    format_: Annotated[
        str,
        typer.Option("--format", help="md (report.md), html (report.html) or json (findings)."),
    ] = "md",
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Directory to write into (default: the case)."),
    ] = None,
    template: Annotated[
        str, typer.Option(help="Markdown layout: default, or modelarts-zh.")
    ] = "default",
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Quote messages without redacting secrets.")
    ] = False,
    signatures: Annotated[
        list[Path] | None,
        typer.Option(
            "--signatures", help="An extra signature folder (<family>/<name>.toml); repeatable."
        ),
    ] = None,
) -> None:
    """Write one report of a matched case without re-running anything else.

    Example: culprit report /tmp/incident/case --format html -o /tmp/incident
    """
    from analyzer import api

    written = _run(
        lambda: api.report(
            case,
            format=format_,
            out=out,
            signatures=signatures or [],
            redact=not no_redact,
            template=template,
        )
    )
    _console().print(f"wrote {written}", markup=False)


@app.command("replay")
def replay_(
    specs: Annotated[
        list[Path], typer.Argument(help="Replay spec directories, or folders holding them.")
    ],
    accept: Annotated[
        bool,
        typer.Option(help="Freeze the current verdicts into expected.toml (after the diff)."),
    ] = False,
    junit: Annotated[
        Path | None, typer.Option(help="Also write the outcomes as JUnit XML to this file.")
    ] = None,
    signatures: Annotated[
        list[Path] | None,
        typer.Option("--signatures", help="An extra signature folder for every spec; repeatable."),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option(help="Parallel analyses (default: one per core).")
    ] = None,
    work: Annotated[
        Path | None, typer.Option(help="Keep each run's case and reports in this directory.")
    ] = None,
) -> None:
    """Re-analyze past incidents and compare each with its expected.toml; exit 1 on any
    difference (or with --accept, write the new verdicts).

    Example: culprit replay fixtures/replay --junit replay.xml
    """
    from rich.table import Table

    from analyzer import api
    from analyzer.replay.junit import write_junit

    outcomes = _run(
        lambda: api.replay(specs, work=work, signatures=signatures or [], jobs=jobs, accept=accept)
    )
    console = _console()
    table = Table(title="culprit replay")
    for column in ("spec", "expected", "got", "result", "s"):
        table.add_column(column, justify="right" if column == "s" else "left")
    for outcome in outcomes:
        expected = outcome.spec.expected.attempts[-1] if outcome.spec.expected.attempts else None
        got = outcome.got[-1] if outcome.got else None
        result = "error" if outcome.error else ("pass" if outcome.passed else "FAIL")
        if accept and outcome.got is not None and not outcome.passed:
            result = "accepted"
        table.add_row(
            outcome.spec.name,
            _brief(expected),
            _brief(got),
            result,
            f"{outcome.seconds:.1f}",
        )
    console.print(table)
    for outcome in outcomes:
        if outcome.error:
            console.print(f"{outcome.spec.path}: error: {outcome.error}", markup=False)
        for difference in outcome.differences:
            console.print(f"{outcome.spec.path}: {difference}", markup=False)
    if junit is not None:
        write_junit(outcomes, junit)
    failed = [o for o in outcomes if not o.passed]
    console.print(
        f"{len(outcomes) - len(failed)} of {len(outcomes)} specs pass"
        + (" (new verdicts written to expected.toml)" if accept and failed else ""),
        markup=False,
    )
    if failed and not accept:
        raise typer.Exit(EXIT_FAILED)


@app.command("accuracy")
def accuracy_(
    corpus: Annotated[
        Path, typer.Argument(help="A real-log corpus: folders of excerpt + source + expected.")
    ] = Path("fixtures/real"),
    floor: Annotated[
        Path | None,
        typer.Option(help="Exit 1 when a score is below this floor (default: CORPUS/floor.toml)."),
    ] = None,
    misses: Annotated[
        bool, typer.Option("--misses", help="List every excerpt and score that missed.")
    ] = False,
    markdown: Annotated[
        Path | None, typer.Option(help="Also write the tables as Markdown to this file.")
    ] = None,
    jobs: Annotated[
        int | None, typer.Option(help="Parallel analyses (default: one per core).")
    ] = None,
    work: Annotated[
        Path | None, typer.Option(help="Keep each excerpt's case and reports in this directory.")
    ] = None,
    bundled: Annotated[
        bool,
        typer.Option(
            "--bundled", help="Analyze each excerpt as a bundle folder instead of as files."
        ),
    ] = False,
) -> None:
    """Score the verdicts on published incident logs (fixtures/real) by platform and failure
    class, beside the naive baseline (the first line with an error keyword).

    Example: culprit accuracy fixtures/real --misses
    """
    from rich.table import Table

    from analyzer import api
    from analyzer.replay import accuracy
    from analyzer.replay import corpus as corpus_mod

    floor_file = floor if floor is not None else corpus / "floor.toml"
    limits = _run(lambda: corpus_mod.read_floor(floor_file)) if floor_file.is_file() else None
    scores = _run(lambda: api.accuracy(corpus, work=work, jobs=jobs, bundled=bundled))
    console = _console()
    for key, rows in accuracy.tables(scores).items():
        table = Table(title=f"culprit accuracy by {key}" if key != "total" else "all excerpts")
        table.add_column(key)
        for name, _ in accuracy.COLUMNS:
            table.add_column(name, justify="right")
        for row in rows:
            table.add_row(row.group, *accuracy.cells(row))
        console.print(table)
    if misses:
        for line in accuracy.misses(scores):
            console.print(line, markup=False)
    if markdown is not None:
        markdown.write_text(accuracy.markdown(scores), encoding="utf-8")
    if limits is not None:
        problems = corpus_mod.below_floor(corpus_mod.tally("all", scores), limits)
        for problem in problems:
            console.print(f"below the floor ({floor_file}): {problem}", markup=False)
        if problems:
            raise typer.Exit(EXIT_FAILED)


def _brief(attempt: Any) -> str:
    if attempt is None:
        return "–"
    who = attempt.culprit_host or attempt.culprit_kind
    return f"{attempt.failure_mode}: {who}"


@app.command("handoff")
def handoff_(
    target: Annotated[
        list[str],
        typer.Argument(
            help="A case or bundle to pack; or `verify FILE` to check a handoff archive.",
            metavar="CASE_OR_BUNDLE... | verify FILE",
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="The handoff archive to write (.tar.zst).")
    ] = None,
    case_id: Annotated[
        str | None, typer.Option(help="An id for the case (default: the bundle id's start).")
    ] = None,
    context: Annotated[
        int, typer.Option(help="Rows of context per host on each side of the first error.")
    ] = 5,
    signatures: Annotated[
        list[Path] | None,
        typer.Option("--signatures", help="An extra signature folder (packed too); repeatable."),
    ] = None,
) -> None:
    """Pack a case's verdict and the rows behind it for another (air-gapped) machine, redacted,
    with a manifest of sha256s; `culprit analyze FILE -o DIR` re-diagnoses it there.

    Example: culprit handoff /tmp/case -o incident.handoff.tar.zst
    """
    from analyzer import api

    console = _console()
    if target[0] == "verify":
        if len(target) != 2:
            _fail("usage: culprit handoff verify FILE")
        manifest = _run(lambda: api.verify_handoff(target[1]))
        console.print(
            f"{target[1]}: verified {len(manifest['members'])} members against MANIFEST.json "
            f"(case {manifest['case_id']}, culprit {manifest['tool_version']})",
            markup=False,
        )
        return
    if out is None:
        _fail("handoff needs -o FILE.tar.zst")
    result = _run(
        lambda: api.handoff(
            target, out, case_id=case_id, context=context, signatures=signatures or []
        )
    )
    console.print(
        f"{result.path}: case {result.case_id}, {result.members} members, {result.rows:,} rows, "
        f"{result.bytes / 2**20:,.1f} MiB",
        markup=False,
    )
    if not result.reproduces:
        console.print(
            "warning: re-diagnosing the packed evidence does not give the same verdict; the "
            "packed findings.json and report.md are the case's own",
            style="yellow",
            markup=False,
        )


schema_app = typer.Typer(help="JSON Schemas of culprit's outputs.", no_args_is_help=True)
app.add_typer(schema_app, name="schema")


@schema_app.command("findings")
def schema_findings() -> None:
    """Print the JSON Schema of findings.json."""
    from analyzer import api

    sys.stdout.write(json.dumps(api.findings_schema(), indent=2, sort_keys=True) + "\n")


def _text_times(table: pa.Table) -> pa.Table:
    """Timestamps as ISO 8601 text with all nine fractional digits (Python datetimes would
    drop the nanoseconds citations rely on)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for index, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            utc = table.column(index).cast(pa.timestamp(field.type.unit, tz="UTC"))
            text = pc.strftime(utc, format="%Y-%m-%dT%H:%M:%SZ")
            table = table.set_column(index, field.name, text)
    return table


def _write_table(table: pa.Table, output: str, out: Path | None, max_rows: int) -> None:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if output == "parquet":
        assert out is not None
        pq.write_table(table, out)
        return
    table = _text_times(table)
    if output == "csv":
        if out is not None:
            pacsv.write_csv(table, out)
        else:
            import io

            buffer = io.BytesIO()
            pacsv.write_csv(table, buffer)
            sys.stdout.write(buffer.getvalue().decode())
        return
    if output == "json":
        text = "\n".join(json.dumps(row, default=str) for row in table.to_pylist())
        if out is not None:
            out.write_text(text + "\n")
        else:
            typer.echo(text)
        return
    from rich.table import Table

    console = _console()
    shown = table.slice(0, max_rows)
    grid = Table(show_lines=False)
    for name in table.column_names:
        grid.add_column(name, overflow="fold")
    for row in shown.to_pylist():
        grid.add_row(*[_cell(value) for value in row.values()])
    console.print(grid)
    if table.num_rows > max_rows:
        console.print(f"... {table.num_rows - max_rows:,} more rows (--max-rows, or --format csv)")


class _ProgressBar:
    """Rich progress for the ingest pipeline (implements its Progress protocol)."""

    def __init__(self, *, enabled: bool) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        console = _console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}", style="cyan"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not enabled or not console.is_terminal,
        )
        self._task: Any = None

    def __enter__(self) -> _ProgressBar:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def start(self, total: int | None) -> None:
        self._task = self._progress.add_task("ingest", total=total)

    def file(self, path: str) -> None:
        if self._task is not None:
            shown = path if len(path) <= 48 else "…" + path[-47:]
            self._progress.update(self._task, description=shown)

    def advance(self, stored_bytes: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, stored_bytes)


# -- culprit signatures ------------------------------------------------------------------------

signatures_app = typer.Typer(
    help="List, show, lint and test the signature catalogue.", no_args_is_help=True
)
app.add_typer(signatures_app, name="signatures")

_ExtraFolders = Annotated[
    list[Path] | None,
    typer.Option(
        "--signatures", help="An extra signature folder (<family>/<name>.toml); repeatable."
    ),
]


@signatures_app.command("list")
def signatures_list(
    extra: _ExtraFolders = None,
    family: Annotated[str | None, typer.Option(help="Only this family.")] = None,
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
) -> None:
    """One line per signature: code, role, scope, culprit rule, name and title."""
    from analyzer import api

    catalogue = _run(lambda: api.signatures(extra or []))
    chosen = [
        s
        for s in catalogue.signatures
        if (family is None or s.family == family) and (role is None or s.role == role)
    ]
    for s in chosen:
        preview = " (preview)" if s.status == "preview" else ""
        sys.stdout.write(
            f"{s.code:<14} {s.role:<9} {s.scope:<14} {s.culprit:<16} {s.name}: {s.title}{preview}\n"
        )
    sys.stderr.write(f"culprit: {len(chosen)} of {len(catalogue)} signatures\n")


@signatures_app.command("show")
def signatures_show(
    key: Annotated[str, typer.Argument(help="A signature code or name.")],
    extra: _ExtraFolders = None,
) -> None:
    """Print a signature's file and where its knowledge page is."""
    from analyzer import api
    from analyzer.signatures.catalog import KNOWLEDGE_DIR

    entry = _run(lambda: api.signatures(extra or []).find(key))
    sys.stdout.write(f"# {entry.path}\n")
    sys.stdout.write(entry.path.read_text(encoding="utf-8"))
    page = KNOWLEDGE_DIR / f"{entry.signature.knowledge}.md"
    sys.stdout.write(f"\n# knowledge: {page}\n")


@signatures_app.command("lint")
def signatures_lint(extra: _ExtraFolders = None) -> None:
    """Check every signature file and knowledge page; list every problem with file:line.
    Exit 1 when there is any."""
    from analyzer import api

    problems = _run(lambda: api.lint_signatures(extra or []))
    for problem in problems:
        sys.stdout.write(f"{problem}\n")
    count = len(api.signatures(extra or [])) if not problems else None
    if problems:
        sys.stderr.write(f"culprit: {len(problems)} problem(s)\n")
        raise typer.Exit(1)
    sys.stderr.write(f"culprit: {count} signatures, no problems\n")


@signatures_app.command("test")
def signatures_test(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Signature files (default: the catalogue).")
    ] = None,
    line: Annotated[
        str | None, typer.Option("--line", help="Show which signatures match this line.")
    ] = None,
    source: Annotated[
        str | None, typer.Option(help="With --line: only signatures of this source.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            help="Count each signature's matches on INFO lines and on other classes' excerpts "
            "of this real-log corpus (fixtures/real)."
        ),
    ] = None,
    extra: _ExtraFolders = None,
) -> None:
    """Run signature examples through every backend, match one line (--line), or measure
    each signature's precision on a corpus of published logs (--corpus)."""
    from analyzer import api

    if corpus is not None:
        _print_precision(_run(lambda: api.signature_precision(corpus)))
        return

    if line is not None:
        matches = _run(lambda: api.match_line(line, extra or [], source=source))
        for found in matches:
            captures = json.dumps(found.captures, ensure_ascii=False)
            sys.stdout.write(f"{found.code}\t{found.name}\t{found.role}\t{captures}\n")
        if not matches:
            sys.stderr.write("culprit: no signature matches\n")
            raise typer.Exit(1)
        return
    count, problems = _run(lambda: api.check_signatures(files or [], extra or []))
    for problem in problems:
        sys.stdout.write(f"{problem}\n")
    if problems:
        sys.stderr.write(f"culprit: {len(problems)} problem(s) in {count} signature(s)\n")
        raise typer.Exit(1)
    sys.stderr.write(f"culprit: {count} signature(s), every example passes\n")


def _print_precision(rows: list[Any]) -> None:
    from rich.table import Table

    table = Table(title="signature precision on the corpus")
    for column in (
        "signature",
        "role",
        "class",
        "rows",
        "excerpts",
        "INFO rows",
        "other class",
        "unknown",
    ):
        table.add_column(
            column, justify="left" if column in ("signature", "role", "class") else "right"
        )
    for row in rows:
        table.add_row(
            row.code,
            row.role,
            row.failure_class,
            str(row.rows),
            str(row.excerpts),
            str(row.quiet_rows),
            str(row.other_class),
            str(row.unknown),
        )
    _console().print(table)
    roots = [r for r in rows if r.role == "root"]
    _console().print(
        f"{len(rows)} signature(s) matched; root signatures: "
        f"{sum(r.quiet_rows for r in roots)} INFO-line match(es), "
        f"{sum(r.other_class for r in roots)} match(es) in excerpts of another class",
        markup=False,
    )


@app.command()
def serve(
    case: Annotated[
        Path, typer.Argument(help="A case directory, or a folder of case directories.")
    ],
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8080,
    host: Annotated[
        str, typer.Option(help="Address to bind; only loopback without --allow-remote.")
    ] = "127.0.0.1",
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow a non-loopback --host (no authentication: whoever reaches the port "
            "reads every case).",
        ),
    ] = False,
) -> None:
    """Serve a local triage dashboard: the cases and their verdicts, reports, host
    timelines and a read-only SQL box.

    Example: culprit serve ./incidents --port 8080
    """
    import uvicorn

    from analyzer.serve.app import create_app, trusted_hosts, url_of

    if not case.exists():
        _fail(f"{case}: no such file or directory")
    allowed = _run(lambda: trusted_hosts(host, allow_remote))
    web = _run(lambda: create_app(case, allowed_hosts=allowed))
    sys.stdout.write(f"culprit: serving {case} at {url_of(host, port)} (Ctrl+C stops)\n")
    sys.stdout.flush()
    uvicorn.run(web, host=host, port=port, log_level="warning")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
