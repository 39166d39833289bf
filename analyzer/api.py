"""The library entry point: everything the CLI does is one call here.

>>> from analyzer import api
>>> result = api.ingest(["bundle.tar.gz"], "case/")          # doctest: +SKIP
>>> api.case_info("case/").meta.counts.rows                   # doctest: +SKIP
>>> api.query("case/", "SELECT host, count(*) FROM rows GROUP BY host")  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from analyzer import __version__, defaults
from analyzer.bundle import Bundle, BundleLimits
from analyzer.case.info import CaseInfo, summarize
from analyzer.case.layout import CaseMeta, meta_path
from analyzer.case.store import Case, open_case
from analyzer.diagnose.attempts import DEFAULT_SILENCE_S
from analyzer.diagnose.findings import Findings
from analyzer.diagnose.run import DEFAULT_SKEW_S
from analyzer.engine import Engine, engine_named
from analyzer.engine import shards as shards_mod
from analyzer.engine.merge import MergeResult
from analyzer.engine.remote import identify, is_url
from analyzer.engine.shards import IngestJob, PartMeta, Shard
from analyzer.errors import CaseError, QueryError, UsageError
from analyzer.ingest.base import ReadOptions
from analyzer.ingest.detect import reader_named
from analyzer.ingest.pipeline import NullProgress, Progress
from analyzer.ingest.timestamps import check_tz
from analyzer.ingest.workers import default_jobs
from analyzer.replay.corpus import Score
from analyzer.replay.precision import Precision
from analyzer.replay.run import Outcome
from analyzer.signatures.catalog import Catalogue, Problem
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.compile import CompiledCatalogue
from analyzer.signatures.examples import Matcher
from analyzer.signatures.matching import MatchResult

__all__ = [
    "BundleLimits",
    "CaseInfo",
    "IngestResult",
    "MatchResult",
    "MergeResult",
    "PartMeta",
    "ReadOptions",
    "case_hosts",
    "case_info",
    "ingest",
    "ingest_shard",
    "load_case",
    "match",
    "match_shard",
    "merge",
    "query",
]


@dataclass(frozen=True)
class IngestResult:
    """What :func:`ingest` did.

    ``reused`` is true when the case already held this bundle, ingested with the same options
    by the same culprit version, and nothing was done.
    """

    case: Path
    meta: CaseMeta
    reused: bool


def ingest(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    options: ReadOptions | None = None,
    limits: BundleLimits | None = None,
    reader: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
    engine: str = defaults.ENGINE,
    address: str | None = None,
    workers: int | None = None,
    shards: int | None = None,
) -> IngestResult:
    """Ingest a bundle (directories, archives, files) into the case directory ``out``.

    Args:
        inputs: what the bundle consists of.
        out: the case directory; created, or replaced when the bundle changed.
        options: reader options (year/zone for stamps without them, size caps).
        limits: decompression and nesting limits.
        reader: force this reader for every file instead of sniffing.
        force: ingest even when the case already holds this bundle.
        progress: receives progress reports.
        jobs: worker processes reading plain files (default: one per core; 1 reads in this
            process). The case is the same whatever the number.
        engine: ``local`` (default) or ``ray`` (shards as Ray tasks, then a merge; the case
            is the same); ``address``, ``workers`` and ``shards`` as for :func:`analyze`.

    Raises:
        BundleError: an input is missing or the bundle exceeds its total size cap.
        UsageError: an option has an unusable value.
        CaseError: the case directory cannot be written.
    """
    job, identity = _ingest_job(inputs, options, limits, reader)
    chosen = engine_named(engine, address=address, workers=workers, shards=shards)
    return _ingest_with(chosen, job, identity, Path(out), force=force, progress=progress, jobs=jobs)


def _ingest_with(
    engine: Engine,
    job: IngestJob,
    identity: tuple[Bundle | None, str],
    target: Path,
    *,
    force: bool,
    progress: Progress | None,
    jobs: int | None,
) -> IngestResult:
    if not force:
        reused = _reuse(target, *identity, job.settings)
        if reused is not None:
            # What a killed ingest left beside the case (possibly gigabytes) goes now, not at
            # the next ingest that writes.
            shutil.rmtree(target.parent / f".{target.name}.partial", ignore_errors=True)
            return IngestResult(target, reused, True)
    meta = engine.ingest(
        job,
        target,
        jobs=default_jobs() if jobs is None else max(1, jobs),
        progress=progress or NullProgress(),
    )
    return IngestResult(target, meta, False)


def _ingest_job(
    inputs: Sequence[str | Path],
    options: ReadOptions | None,
    limits: BundleLimits | None,
    reader: str | None,
) -> tuple[IngestJob, tuple[Bundle | None, str]]:
    """Check the options and inputs of an ingest; the job, and the bundle's identity (the
    local bundle, if it is one, and its fingerprint) listed once for the reuse check."""
    options = options or ReadOptions()
    check_tz(options.tz)
    if options.year is not None and not 1678 <= options.year <= 2261:
        # Stamps are nanoseconds since 1970 in 64 bits.
        raise UsageError(f"--year {options.year}: must be between 1678 and 2261")
    if reader is not None:
        reader_named(reader)
    if options.max_line_bytes < 1024:
        raise UsageError("--max-line-bytes must be at least 1024")
    job = IngestJob(tuple(str(p) for p in inputs), options, limits or BundleLimits(), reader)
    # A missing input fails here, before any work starts.
    return job, identify(job.inputs, job.limits)


def ingest_shard(
    inputs: Sequence[str | Path],
    out: str | Path,
    shard: str,
    *,
    options: ReadOptions | None = None,
    limits: BundleLimits | None = None,
    reader: str | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
) -> PartMeta:
    """Read shard ``shard`` (``"k/N"``, k from 0) of the bundle into the part directory
    ``out``; :func:`merge` of all N parts gives the case one :func:`ingest` would.

    Raises:
        UsageError: a bad shard or option.
        BundleError, CaseError: as for :func:`ingest`.
    """
    job, _ = _ingest_job(inputs, options, limits, reader)
    return shards_mod.ingest_shard(
        job,
        Shard.parse(shard),
        Path(out),
        jobs=default_jobs() if jobs is None else max(1, jobs),
        progress=progress,
    )


def match_shard(
    case: str | Path,
    shard: str,
    out: str | Path | None = None,
    *,
    backend: str = defaults.BACKEND,
    signatures: Sequence[str | Path] = (),
) -> PartMeta:
    """Match shard ``shard`` (``"k/N"``) of the case's row files into the part directory
    ``out`` (default ``CASE/parts/match-k-of-N``); :func:`merge` of all N parts writes the
    case's matches as :func:`match` would.

    Raises:
        UsageError, CaseError, SignatureError: as for :func:`match`, or a bad shard.
    """
    from analyzer.signatures.backends import backend_named

    chosen = backend_named(backend)
    spec = Shard.parse(shard)
    opened = load_case(case)
    catalogue = load_catalogue([Path(p) for p in signatures])
    target = (
        Path(out)
        if out is not None
        else opened.path / "parts" / f"match-{spec.index}-of-{spec.count}"
    )
    return shards_mod.match_shard(opened, catalogue, chosen, spec, target)


def merge(parts: Sequence[str | Path], out: str | Path) -> MergeResult:
    """Merge every shard's output of one ingest into the case ``out``, or of one match into
    the matches of the case ``out``.

    Raises:
        UsageError: parts missing, repeated or from different runs.
        CaseError: not parts; match parts of another ingest; the case cannot be written.
    """
    from analyzer.engine.merge import merge as merge_parts

    return merge_parts([Path(p) for p in parts], Path(out))


def _reuse(
    target: Path, bundle: Bundle | None, fingerprint: str, settings: dict[str, Any]
) -> CaseMeta | None:
    """The existing case's metadata if it already holds this bundle, else ``None``."""
    if not meta_path(target).is_file():
        return None
    try:
        case = open_case(target)
    except CaseError:
        return None
    meta = case.meta
    if meta.tool_version != __version__ or meta.options != settings:
        return None
    if meta.bundle.fingerprint == fingerprint:
        return meta
    if bundle is not None and meta.bundle.content_hash == bundle.content_hash():
        updated = meta.model_copy(
            update={"bundle": meta.bundle.model_copy(update={"fingerprint": fingerprint})}
        )
        meta_path(target).write_text(updated.model_dump_json(indent=2) + "\n")
        return updated
    return None


def load_case(case: str | Path) -> Case:
    """Open a case directory (raises :class:`~analyzer.errors.CaseError` if it is not one)."""
    return open_case(Path(case))


def case_info(case: str | Path, *, top_hosts: int = defaults.TOP_HOSTS) -> CaseInfo:
    """Summary of a case: counts per source, reader, severity and host, quarantine reasons,
    files that were not fully read."""
    return summarize(load_case(case), top_hosts=top_hosts)


def case_hosts(case: str | Path) -> pa.Table:
    """The case's host map: every alias of every host, with the file and line of the row that
    proved it (``conflict`` marks aliases rows tie to more than one host)."""
    return query(
        case,
        "SELECT h.host, h.kind, h.alias, f.path || ':' || h.line AS evidence, h.rows, h.conflict "
        "FROM hosts h LEFT JOIN files f USING (file_id) "
        "ORDER BY h.conflict, h.host, h.kind, h.alias",
    )


def query(case: str | Path, sql: str) -> pa.Table:
    """Run SQL over the case's views (``rows``, ``files``, ``quarantine``, ``duplicates``,
    ``hosts``; ``matches`` once :func:`match` ran).

    Raises:
        QueryError: the SQL does not run; the message is DuckDB's.
    """
    opened = load_case(case)
    with opened.connect() as connection:
        try:
            return connection.sql(sql).to_arrow_table()
        except duckdb.Error as exc:
            message = str(exc).strip().splitlines()[0]
            raise QueryError(message) from None
        except AttributeError:
            raise QueryError("the statement returns no rows") from None


def match(
    case: str | Path,
    *,
    backend: str = defaults.BACKEND,
    signatures: Sequence[str | Path] = (),
) -> MatchResult:
    """Match the signature catalogue (plus the folders ``signatures``) over every row of the
    case and write ``CASE/matches.parquet`` (then the ``matches`` query view exists).

    Args:
        case: the case directory.
        backend: ``polars`` (default), ``duckdb`` or ``python`` (slow reference); all give
            the same table.
        signatures: extra signature folders (``<family>/<name>.toml``).

    Raises:
        UsageError: unknown backend.
        CaseError: not a case, or the matches file cannot be written.
        SignatureError: a signature file does not load, or a regex does not compile.
    """
    from analyzer.signatures.backends import backend_named
    from analyzer.signatures.matching import match_case

    chosen = backend_named(backend)
    opened = load_case(case)
    catalogue = load_catalogue([Path(p) for p in signatures])
    return match_case(opened, catalogue, chosen)


# -- the signature catalogue ------------------------------------------------------------------


@dataclass(frozen=True)
class LineMatch:
    """A signature that matches a line, and what it captured."""

    code: str
    name: str
    role: str
    captures: dict[str, str]


def signatures(extra: Sequence[str | Path] = ()) -> Catalogue:
    """The packaged catalogue plus the signature folders ``extra``.

    Raises:
        SignatureError: any signature file does not load (every problem is listed).
    """
    return load_catalogue([Path(p) for p in extra])


def lint_signatures(extra: Sequence[str | Path] = ()) -> list[Problem]:
    """Every problem of the catalogue and ``extra`` folders, each with file and line: schema,
    knowledge pages, regexes in every engine, examples under every backend."""
    from analyzer.signatures.lint import lint

    return lint([Path(p) for p in extra], matchers=_matchers())


def check_signatures(
    files: Sequence[str | Path] = (), extra: Sequence[str | Path] = ()
) -> tuple[int, list[Problem]]:
    """Run the examples of ``files`` (every signature when empty) through every backend;
    returns how many signatures ran and the problems."""
    from analyzer.signatures.catalog import parse_file
    from analyzer.signatures.examples import example_problems

    if files:
        entries, problems = [], []
        for file in files:
            entry, found = parse_file(Path(file))
            problems += found
            if entry is not None:
                entries.append(entry)
    else:
        entries, problems = list(signatures(extra).entries), []
    problems += example_problems(entries, _matchers())
    return len(entries), problems


def match_line(
    line: str, extra: Sequence[str | Path] = (), *, source: str | None = None
) -> list[LineMatch]:
    """The signatures that match ``line`` (as a row's message) and their captures. Without
    ``source`` a signature's source list is not applied."""

    from analyzer.schema import SOURCES
    from analyzer.signatures.backends.python import match
    from analyzer.signatures.compile import compile_catalogue
    from analyzer.signatures.examples import rows_frame

    catalogue = signatures(extra)
    compiled = compile_catalogue(catalogue)
    if source is None:
        # Any source will do: let every signature read the one row.
        anywhere = [dataclasses.replace(s, sources=SOURCES) for s in compiled.signatures]
        compiled = CompiledCatalogue(tuple(anywhere))
    hits = match(compiled, rows_frame([line], source or SOURCES[0]))
    by_code = {s.code: s for s in catalogue.signatures}
    return [
        LineMatch(code, by_code[code].name, role, json.loads(captures))
        for code, role, captures in hits.select("signature", "role", "captures").iter_rows()
    ]


def _matchers() -> list[tuple[str, Matcher]]:
    """Every backend's in-memory matching function, by name."""
    from analyzer.signatures import backends

    registry = getattr(backends, "BACKENDS", None)
    if registry is None:
        from analyzer.signatures.backends.python import match

        return [("python", match)]
    return [(backend.name, backend.match_frame) for backend in registry]


# -- diagnosis and reports --------------------------------------------------------------------

#: Report templates ``analyze`` can render.
TEMPLATES = ("default", "modelarts-zh")
FINDINGS_FILE = "findings.json"
REPORT_FILE = "report.md"
HTML_FILE = "report.html"
#: What ``culprit report --format`` writes.
REPORT_FORMATS = ("md", "html", "json")
CASE_SUBDIR = "case"


@dataclass(frozen=True)
class AnalyzeResult:
    """What :func:`analyze` wrote and concluded."""

    case: Path
    findings_path: Path
    report_path: Path
    findings: Findings
    ingested: bool
    matched: bool


def _is_case(path: Path) -> bool:
    return path.is_dir() and meta_path(path).is_file()


def _needs_matching(case: Case, catalogue: Catalogue) -> bool:
    """True unless the case's matches were made with this very catalogue over these rows."""
    from analyzer.case.layout import MATCHES_FILE
    from analyzer.signatures.matching import catalogue_digest, matches_meta

    path = case.path / MATCHES_FILE
    if not path.exists():
        return True
    meta = matches_meta(path)
    return (
        meta.get("catalogue_digest") != catalogue_digest(catalogue)
        or meta.get("rows_scanned") != case.meta.counts.rows
        or meta.get("tool_version") != __version__
    )


def analyze(
    inputs: Sequence[str | Path],
    out: str | Path | None = None,
    *,
    signatures: Sequence[str | Path] = (),
    backend: str = defaults.BACKEND,
    redact: bool = True,
    template: str = defaults.TEMPLATE,
    skew_s: float = DEFAULT_SKEW_S,
    silence_s: float = DEFAULT_SILENCE_S,
    options: ReadOptions | None = None,
    limits: BundleLimits | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
    engine: str = defaults.ENGINE,
    address: str | None = None,
    workers: int | None = None,
    shards: int | None = None,
    html: bool = False,
) -> AnalyzeResult:
    """Ingest (or reuse) a case, match the catalogue (unless already matched with it),
    diagnose, and write ``findings.json`` and ``report.md``.

    Args:
        inputs: one case directory, or the bundle's inputs (directories, archives, files).
        out: where everything goes: a bundle's case in ``OUT/case``, the reports in ``OUT``.
            Without it, a case's reports go into the case directory, and a bundle needs it.
        signatures: extra signature folders.
        backend: matching engine (as for :func:`match`).
        redact: replace secrets in every quoted message (citations never change).
        template: ``default`` or ``modelarts-zh`` (the ModelArts diagnosis layout).
        skew_s: clock-skew tolerance between hosts, in seconds.
        silence_s: a global silence this long separates two attempts.
        jobs: worker processes for ingest (as for :func:`ingest`).
        engine: ``local`` (default) or ``ray``: ingest and match as shards in Ray tasks,
            merged before the diagnosis; the findings are the same.
        address: the Ray cluster to join (``ray``; default: start a local instance).
        workers: CPUs of that local Ray instance (default: every core).
        shards: pieces the work is cut into under Ray (default: one per CPU of the cluster).
        html: also write the self-contained ``report.html``.

    Raises:
        UsageError: unknown template, backend or engine, or a bundle without ``out``.
        BundleError, CaseError, SignatureError: as for :func:`ingest` and :func:`match`.
    """
    from analyzer.diagnose.run import Settings, diagnose
    from analyzer.report import markdown, modelarts_zh
    from analyzer.report.redact import keep
    from analyzer.report.redact import redact as redactor
    from analyzer.signatures.backends import backend_named

    if template not in TEMPLATES:
        raise UsageError(f"unknown template {template!r}; known: {', '.join(TEMPLATES)}")
    if skew_s < 0 or silence_s <= 0:
        raise UsageError("--skew must be >= 0 and --silence > 0 seconds")
    chosen = backend_named(backend)
    runner = engine_named(engine, address=address, workers=workers, shards=shards)
    # URLs stay text: Path() would fold the "//" of gs://bucket.
    paths = [p if isinstance(p, Path) or is_url(p) else Path(p) for p in inputs]
    from analyzer.handoff import is_handoff

    first = paths[0] if len(paths) == 1 and isinstance(paths[0], Path) else None
    if first is not None and is_handoff(first):
        if out is None:
            raise UsageError("a handoff needs -o DIR (it is unpacked and re-diagnosed there)")
        return _analyze_handoff(first, Path(out), template)
    ingested = False
    catalogue = load_catalogue([Path(p) for p in signatures])
    with runner.session():
        if first is not None and _is_case(first):
            case_dir = first
            report_dir = Path(out) if out is not None else case_dir
        else:
            if out is None:
                raise UsageError(
                    "a bundle needs -o DIR (the case goes to DIR/case, reports to DIR)"
                )
            report_dir = Path(out)
            case_dir = report_dir / CASE_SUBDIR
            job, identity = _ingest_job(paths, options, limits, None)
            result = _ingest_with(
                runner, job, identity, case_dir, force=False, progress=progress, jobs=jobs
            )
            ingested = not result.reused
        opened = load_case(case_dir)
        matched = _needs_matching(opened, catalogue)
        if matched:
            runner.match(opened, catalogue, chosen)
    findings = diagnose(
        opened,
        catalogue,
        Settings(skew_s=skew_s, silence_s=silence_s),
        redact=redactor if redact else keep,
    )
    renderer = modelarts_zh.render if template == "modelarts-zh" else markdown.render
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        findings_path = report_dir / FINDINGS_FILE
        report_path = report_dir / REPORT_FILE
        _write_text(findings_path, findings.model_dump_json(indent=2) + "\n")
        _write_text(report_path, renderer(findings))
        if html:
            from analyzer.report import html as html_report

            page = html_report.render(
                opened, findings, catalogue, redact=redactor if redact else keep
            )
            _write_text(report_dir / HTML_FILE, page)
    except OSError as exc:
        raise CaseError(f"cannot write the reports: {exc}", path=str(report_dir)) from None
    return AnalyzeResult(case_dir, findings_path, report_path, findings, ingested, matched)


def _write_text(path: Path, text: str) -> None:
    """Write atomically (a reader never sees half a report)."""
    temporary = path.with_name(f".{path.name}.partial")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def diagnose_case(
    case: str | Path,
    *,
    signatures: Sequence[str | Path] = (),
    redact: bool = True,
    skew_s: float = DEFAULT_SKEW_S,
    silence_s: float = DEFAULT_SILENCE_S,
) -> Findings:
    """The findings of an already matched case, without writing anything.

    Raises:
        CaseError: not a case, or the case has not been matched with this catalogue.
    """
    return _diagnosed(case, signatures, redact, skew_s, silence_s)[2]


def _diagnosed(
    case: str | Path,
    signatures: Sequence[str | Path],
    redact: bool,
    skew_s: float,
    silence_s: float,
) -> tuple[Case, Catalogue, Findings, Callable[[str], str]]:
    """The opened case, its catalogue, its findings and the redaction they were made with."""
    from analyzer.diagnose.run import Settings, diagnose
    from analyzer.report.redact import keep
    from analyzer.report.redact import redact as redactor

    opened = load_case(case)
    catalogue = load_catalogue([Path(p) for p in signatures])
    if _needs_matching(opened, catalogue):
        raise CaseError(
            "the case is not matched with this catalogue; run `culprit match`", path=str(case)
        )
    quote = redactor if redact else keep
    findings = diagnose(
        opened, catalogue, Settings(skew_s=skew_s, silence_s=silence_s), redact=quote
    )
    return opened, catalogue, findings, quote


def report_html(
    case: str | Path,
    *,
    signatures: Sequence[str | Path] = (),
    redact: bool = True,
    skew_s: float = DEFAULT_SKEW_S,
    silence_s: float = DEFAULT_SILENCE_S,
) -> str:
    """The self-contained HTML report of an already matched case (nothing is written).

    Raises:
        CaseError: not a case, or not matched with this catalogue.
    """
    from analyzer.report import html

    opened, catalogue, findings, quote = _diagnosed(case, signatures, redact, skew_s, silence_s)
    return html.render(opened, findings, catalogue, redact=quote)


def report(
    case: str | Path,
    *,
    format: str = defaults.REPORT_FORMAT,
    out: str | Path | None = None,
    signatures: Sequence[str | Path] = (),
    redact: bool = True,
    template: str = defaults.TEMPLATE,
    skew_s: float = DEFAULT_SKEW_S,
    silence_s: float = DEFAULT_SILENCE_S,
) -> Path:
    """Write one report of an already matched case into ``out`` (default: the case
    directory): ``report.md``, ``report.html`` or ``findings.json``; the file written.

    Raises:
        UsageError: unknown format or template.
        CaseError: not a case, not matched with this catalogue, or the report cannot be
            written.
    """
    from analyzer.report import markdown, modelarts_zh

    if format not in REPORT_FORMATS:
        raise UsageError(f"unknown format {format!r}; known: {', '.join(REPORT_FORMATS)}")
    if template not in TEMPLATES:
        raise UsageError(f"unknown template {template!r}; known: {', '.join(TEMPLATES)}")
    target = Path(out) if out is not None else Path(case)
    if format == "html":
        text = report_html(
            case, signatures=signatures, redact=redact, skew_s=skew_s, silence_s=silence_s
        )
        name = HTML_FILE
    else:
        findings = diagnose_case(
            case, signatures=signatures, redact=redact, skew_s=skew_s, silence_s=silence_s
        )
        if format == "json":
            text, name = findings.model_dump_json(indent=2) + "\n", FINDINGS_FILE
        else:
            renderer = modelarts_zh.render if template == "modelarts-zh" else markdown.render
            text, name = renderer(findings), REPORT_FILE
    try:
        target.mkdir(parents=True, exist_ok=True)
        _write_text(target / name, text)
    except OSError as exc:
        raise CaseError(f"cannot write the report: {exc}", path=str(target)) from None
    return target / name


def findings_schema() -> dict[str, Any]:
    """The JSON Schema of ``findings.json``."""
    return Findings.model_json_schema()


# -- regression replay ------------------------------------------------------------------------


def replay(
    paths: Sequence[str | Path],
    *,
    work: str | Path | None = None,
    signatures: Sequence[str | Path] = (),
    jobs: int | None = None,
    accept: bool = False,
) -> list[Outcome]:
    """Re-analyze every replay spec in ``paths`` (spec directories, or folders holding them)
    and compare with its expected.toml; with ``accept``, freeze each current verdict into
    its expected.toml (the outcomes still show what changed).

    Args:
        work: where each run's case and reports go (a temporary directory, removed
            afterwards, when None).
        signatures: extra signature folders used for every spec ("what would this new
            signature change across our past incidents?").
        jobs: parallel analyses (default: one per core).

    Raises:
        UsageError: a path holds no spec, or a spec is invalid.
        SignatureError: an extra signature folder does not load.
    """
    import tempfile

    from analyzer.replay.run import accepted
    from analyzer.replay.run import replay as run_all
    from analyzer.replay.spec import find_specs, write_expected

    specs = find_specs([Path(p) for p in paths])
    extra = [Path(s) for s in signatures]
    load_catalogue(extra)  # a broken signature folder fails once, not once per spec
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-replay-") as scratch:
            outcomes = run_all(specs, Path(scratch), signatures=extra, jobs=jobs)
    else:
        outcomes = run_all(specs, Path(work), signatures=extra, jobs=jobs)
    if accept:
        for outcome in outcomes:
            if outcome.got is not None:
                write_expected(outcome.spec.path, accepted(outcome))
    return outcomes


def accuracy(
    corpus: str | Path,
    *,
    work: str | Path | None = None,
    jobs: int | None = None,
    bundled: bool = False,
) -> list[Score]:
    """Analyze every excerpt of a real-log corpus (``fixtures/real``) and score each verdict
    against its expected.toml (first-error line, class, culprit, invented hosts, honest
    unknowns) and the naive baseline. With ``bundled``, each excerpt is analyzed as a bundle
    folder holding its files rather than as the files themselves (the verdicts must agree).

    Raises:
        UsageError: the folder holds no excerpt, or an excerpt is invalid.
    """
    import tempfile

    from analyzer.replay.accuracy import run as run_corpus
    from analyzer.replay.corpus import find_excerpts

    excerpts = find_excerpts(Path(corpus))
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-accuracy-") as scratch:
            return run_corpus(excerpts, Path(scratch), jobs=jobs, bundled=bundled)
    return run_corpus(excerpts, Path(work), jobs=jobs, bundled=bundled)


def signature_precision(
    corpus: str | Path, *, work: str | Path | None = None, jobs: int | None = None
) -> list[Precision]:
    """Analyze every excerpt of a real-log corpus and count, per signature, where it fires on
    INFO/DEBUG lines and on excerpts whose failure is of another class."""
    import tempfile

    from analyzer.diagnose.knowledge import pages
    from analyzer.replay.accuracy import run as run_corpus
    from analyzer.replay.corpus import find_excerpts
    from analyzer.replay.precision import precision

    excerpts = find_excerpts(Path(corpus))
    classes = {page.id: page.failure_class for page in pages().values()}
    catalogue = load_catalogue()
    if work is None:
        with tempfile.TemporaryDirectory(prefix="culprit-precision-") as scratch:
            run_corpus(excerpts, Path(scratch), jobs=jobs)
            return precision(excerpts, Path(scratch), catalogue, classes)
    run_corpus(excerpts, Path(work), jobs=jobs)
    return precision(excerpts, Path(work), catalogue, classes)


# -- handoff bundles --------------------------------------------------------------------------


@dataclass(frozen=True)
class HandoffResult:
    """What :func:`handoff` wrote."""

    path: Path
    case_id: str
    members: int
    bytes: int
    rows: int
    findings: Findings
    #: Whether re-diagnosing the packed evidence gave the same verdicts (checked on creation).
    reproduces: bool


def verdict_key(findings: Findings) -> list[tuple[object, ...]]:
    """What two analyses must agree on to have the same verdict, attempt by attempt."""
    return [
        (
            v.attempt,
            v.failure_mode,
            None
            if v.first_error is None
            else (v.first_error.citation.path, v.first_error.citation.line),
            v.culprit.kind,
            v.culprit.host,
            v.confidence,
        )
        for v in findings.attempts
    ]


def handoff(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    case_id: str | None = None,
    context: int = defaults.HANDOFF_CONTEXT,
    signatures: Sequence[str | Path] = (),
    skew_s: float = DEFAULT_SKEW_S,
    silence_s: float = DEFAULT_SILENCE_S,
) -> HandoffResult:
    """Analyze a case (or a bundle, ingested into a scratch directory) and pack the handoff
    archive ``out`` (``.tar.zst``): redacted report and findings, the rows behind them, the
    host map, the attempts, extra signature folders and a manifest of sha256s.

    Raises:
        UsageError: ``out`` does not end in .tar.zst, or ``context`` is negative.
        BundleError, CaseError, SignatureError: as for :func:`analyze`.
    """
    from analyzer import handoff as handoff_mod
    from analyzer.diagnose import attempts as attempts_mod
    from analyzer.diagnose.evidence import load as load_evidence
    from analyzer.report.redact import redact

    target = Path(out)
    if not target.name.endswith(".tar.zst"):
        raise UsageError("the handoff file name must end in .tar.zst", path=str(target))
    if context < 0:
        raise UsageError("--context must be >= 0")
    folders = [Path(p) for p in signatures]
    with handoff_mod.scratch() as scratch:
        result = analyze(
            inputs, Path(scratch) / "out", signatures=folders, skew_s=skew_s, silence_s=silence_s
        )
        opened = load_case(result.case)
        catalogue = load_catalogue(folders)
        activity = load_evidence(opened, catalogue).activity()
        attempts = attempts_mod.split(activity, silence_s=silence_s)
        chosen_id = case_id or result.findings.bundle.id[:12]
        archive, manifest, ids = handoff_mod.build(
            opened,
            result.findings,
            result.report_path.read_text(encoding="utf-8"),
            attempts,
            redact=redact,
            case_id=chosen_id,
            signature_folders=folders,
            context=context,
        )
        members = handoff_mod.parse(archive, str(target))[1]
        again = _reanalyze(members, Path(scratch) / "check", skew_s, silence_s)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_bytes(target, archive)
    except OSError as exc:
        raise UsageError(f"cannot write the handoff: {exc}", path=str(target)) from None
    return HandoffResult(
        path=target,
        case_id=chosen_id,
        members=len(manifest.members) + 1,
        bytes=len(archive),
        rows=len(ids),
        findings=result.findings,
        reproduces=verdict_key(again) == verdict_key(result.findings),
    )


def _write_bytes(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.partial")
    temporary.write_bytes(data)
    temporary.replace(path)


def _reanalyze(
    members: dict[str, bytes], target: Path, skew_s: float, silence_s: float
) -> Findings:
    """Diagnose a handoff's mini-case with its recorded attempts and packed signatures."""
    from analyzer import handoff as handoff_mod
    from analyzer.diagnose.run import Settings, diagnose
    from analyzer.report.redact import redact

    handoff_mod.unpack(members, target)
    folders = sorted(p for p in (target / handoff_mod.SIGNATURES_DIR).glob("*") if p.is_dir())
    catalogue = load_catalogue(folders)
    return diagnose(
        load_case(target / handoff_mod.CASE_DIR),
        catalogue,
        Settings(skew_s=skew_s, silence_s=silence_s),
        redact=redact,
        attempts=handoff_mod.attempts_of(members),
    )


def verify_handoff(path: str | Path) -> dict[str, Any]:
    """Check a handoff archive against its manifest; return the manifest.

    Raises:
        HandoffError: damaged, tampered with, or not a handoff.
    """
    import dataclasses as dc

    from analyzer import handoff as handoff_mod

    manifest, _ = handoff_mod.read(Path(path))
    return dc.asdict(manifest)


def _analyze_handoff(path: Path, out: Path, template: str) -> AnalyzeResult:
    """Verify a handoff, unpack it under ``OUT/handoff`` and re-diagnose its evidence."""
    from analyzer import handoff as handoff_mod
    from analyzer.report import markdown, modelarts_zh

    _, members = handoff_mod.read(path)
    settings = json.loads(members["findings.json"]).get("settings", {})
    findings = _reanalyze(
        members,
        out / "handoff",
        float(settings.get("skew_s", DEFAULT_SKEW_S)),
        float(settings.get("silence_s", DEFAULT_SILENCE_S)),
    )
    renderer = modelarts_zh.render if template == "modelarts-zh" else markdown.render
    out.mkdir(parents=True, exist_ok=True)
    findings_path, report_path = out / FINDINGS_FILE, out / REPORT_FILE
    _write_text(findings_path, findings.model_dump_json(indent=2) + "\n")
    _write_text(report_path, renderer(findings))
    return AnalyzeResult(
        out / "handoff" / handoff_mod.CASE_DIR, findings_path, report_path, findings, False, False
    )
