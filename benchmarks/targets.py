"""The performance targets, judged from the recorded results files: the targets table of
``benchmarks/RESULTS.md``.

Everything here is a pure function of results files (name -> parsed JSON), so the table can be
rebuilt at any time without measuring (``python -m benchmarks run --rebuild-table``) and is
tested on hand-written results. Each :class:`Target` reads its figure from one results file of
the kind that measures it (``ingest``, ``match``, ``analyze``), if that file measured it at the
target's size:

* **end to end**: ``host-crash-heartbeat`` at 4,096 hosts (at least 20 M rows and an 8 GB
  bundle): bundle → report at most 120 s and peak RSS at most 4 GB; at 1,024 hosts (60 min,
  rate 60) at most 30 s;
* **matching**: the polars backend over a case of at least 10 M rows at least 1.5× ripgrep's
  rows/s (the same catalogue regexes, :func:`benchmarks.match.rg_pattern`) and 100× the plain
  Python loop's, both measured in the same run;
* **re-analysis**: re-match + diagnose + report of the ingested 4,096-host case at most 10 s;
* **ingest**: Cloud Logging JSON-lines at least 150 MB/s, text and kubelet (journal) logs at
  least 300 MB/s each, inputs of at least 1,024 MiB; a gzip-compressed Cloud Logging input no
  slower than a fast inflate allows: its MB/s (of decoded bytes) at least 0.9 × the smaller of
  the plain input's ingest MB/s and the fastest bare inflate's MB/s over the same file, all
  three from the same run.

MB = 10^6 bytes and GB = 10^9 bytes, as the targets are stated (the sections below the table
use MiB). A figure is the median of the run's repetitions with their min and max; a peak RSS is
judged on the highest run, a ratio's range pairs the extremes (the slowest run of one side with
the fastest of the other).

*This run* is the latest results file of kind ``run`` (``python -m benchmarks run``): a target
is judged (met / not met) only on a figure from one of the results files that run produced. A
``--quick`` run produces none (its children record nothing; its figures, on inputs far below
the targets' sizes, are embedded in its own file and only printed), so after a quick run, as
for any target the latest run did not measure, the row says "not measured in this run" and
shows the latest recorded figure at the target's size, with its date, if there is one.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from benchmarks import MIB

RUN: Final = "run"
TARGETS_BEGIN: Final = "<!-- targets:begin -->"
TARGETS_END: Final = "<!-- targets:end -->"
SCENARIO: Final = "host-crash-heartbeat"
MB: Final = 1_000_000
GB: Final = 1_000_000_000
#: The 4,096-host end-to-end target's size.
E2E_HOSTS: Final = 4096
E2E_ROWS: Final = 20_000_000
E2E_BUNDLE_BYTES: Final = 8 * GB
E2E_SECONDS: Final = 120.0
E2E_RSS_BYTES: Final = 4 * GB
E2E_1024_SECONDS: Final = 30.0
REANALYSIS_SECONDS: Final = 10.0
#: The matching targets: case size, times ripgrep, times the Python loop.
MATCH_ROWS: Final = 10_000_000
VS_RG: Final = 1.5
VS_LOOP: Final = 100.0
#: The ingest targets: input size, MB/s per input, the gzip factor.
INGEST_MIB: Final = 1024
INGEST_MB_S: Final = {"cloud_logging": 150.0, "text": 300.0, "kubelet": 300.0}
GZIP_FACTOR: Final = 0.9

Report = dict[str, Any]


@dataclass(frozen=True)
class Figure:
    """One measured figure of a target, from one results file."""

    #: The median and the range over the run's repetitions.
    value: float
    low: float
    high: float
    #: The figure as the table shows it: ``171.2 s (170.1–172.5)``.
    text: str
    #: Whether it meets the target (``None`` for a figure without one).
    met: bool | None
    #: What it was measured on, and why it falls short when it is not the target's size.
    detail: str
    file: str
    date: str
    runs: int


@dataclass(frozen=True)
class Target:
    """A target: what it says, its threshold, the results kind it is read from and how."""

    key: str
    area: str
    text: str
    #: The threshold as shown; ``None`` for a figure listed without a target.
    threshold: str | None
    kind: str
    #: ``read(report, file, strict)``: the figure of one results file, or None; ``strict``
    #: False (a quick run) lifts the size conditions that are not the target's own subject.
    read: Callable[[Report, str, bool], Figure | None]


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
        return {
            "key": self.target.key,
            "area": self.target.area,
            "text": self.target.text,
            "threshold": self.target.threshold,
            "status": self.status,
            "earlier": self.earlier,
            "figure": None if self.figure is None else asdict(self.figure),
        }


# -- reading figures ----------------------------------------------------------------------------


def kind(report: Report) -> str:
    """Which benchmark recorded ``report`` (files from before ``kind`` are ingest runs)."""
    return str(report.get("kind", "ingest"))


def _stamp(report: Report, file: str) -> tuple[str, str]:
    """The order of results files: recording time (or date), then file name."""
    return (str(report.get("recorded_at") or report.get("date", "")), file)


def _size(size: int) -> str:
    """A byte count in GB (from 1 GB on) or MB, as the targets state sizes."""
    return f"{size / GB:,.1f} GB" if size >= GB else f"{size / MB:,.0f} MB"


def _seconds(result: dict[str, Any]) -> tuple[float, float, float]:
    return float(result["median_s"]), float(result["min_s"]), float(result["max_s"])


def _duration(result: dict[str, Any]) -> str:
    median, low, high = _seconds(result)
    return f"{median:,.1f} s ({low:,.1f}–{high:,.1f})"


def _figure(
    report: Report,
    file: str,
    values: tuple[float, float, float],
    text: str,
    met: bool | None,
    detail: str,
    runs: int,
) -> Figure:
    value, low, high = values
    return Figure(value, low, high, text, met, detail, file, str(report.get("date", "?")), runs)


def _runs(result: dict[str, Any]) -> int:
    return len(result.get("runs") or [])


def _analyze(
    report: Report,
    name: str,
    hosts: int,
    *,
    minutes: float | None = None,
) -> dict[str, Any] | None:
    """The result ``name`` of an analyze report on the scenario at ``hosts`` hosts (and
    ``minutes`` at rate 60 when given), or None."""
    if report.get("scenario") != SCENARIO or int(report.get("hosts", 0)) != hosts:
        return None
    if minutes is not None and (
        float(report.get("minutes", 0)) != minutes or float(report.get("rate", 0)) != 60.0
    ):
        return None
    return next((r for r in report.get("results", []) if r.get("name") == name), None)


def _e2e_size(report: Report, result: dict[str, Any]) -> tuple[str, bool]:
    """What the 4,096-host case was (rows, bundle) and whether it is the target's size."""
    rows, size = int(result["rows"]), int(result["bytes"])
    short = []
    if rows < E2E_ROWS:
        short.append(f"fewer than the target's {E2E_ROWS:,} rows")
    if size < E2E_BUNDLE_BYTES:
        short.append(f"a bundle under the target's {E2E_BUNDLE_BYTES / GB:g} GB")
    detail = (
        f"{rows:,} rows, {_size(size)} bundle ({report.get('hosts', 0):,} hosts × "
        f"{float(report.get('minutes', 0)):g} min)"
        + (f"; **below the target's size**: {', '.join(short)}" if short else "")
    )
    return detail, not short


def _e2e_time(report: Report, file: str, strict: bool = True) -> Figure | None:
    result = _analyze(report, "bundle-to-report", E2E_HOSTS)
    if result is None:
        return None
    detail, sized = _e2e_size(report, result)
    met = sized and float(result["median_s"]) <= E2E_SECONDS
    return _figure(report, file, _seconds(result), _duration(result), met, detail, _runs(result))


def _e2e_rss(report: Report, file: str, strict: bool = True) -> Figure | None:
    result = _analyze(report, "bundle-to-report", E2E_HOSTS)
    if result is None:
        return None
    detail, sized = _e2e_size(report, result)
    peaks = [float(run["peak_rss_mib"]) for run in result.get("runs", [])] or [
        float(result["peak_rss_mib"])
    ]
    values = (statistics.median(peaks), min(peaks), max(peaks))
    text = f"{values[0]:,.0f} MiB ({values[1]:,.0f}–{values[2]:,.0f})"
    met = sized and values[2] * MIB <= E2E_RSS_BYTES
    return _figure(report, file, values, text, met, detail, len(peaks))


def _e2e_1024(report: Report, file: str, strict: bool = True) -> Figure | None:
    result = _analyze(report, "bundle-to-report", 1024, minutes=60.0)
    if result is None:
        return None
    detail = f"{int(result['rows']):,} rows, {_size(int(result['bytes']))} bundle"
    met = float(result["median_s"]) <= E2E_1024_SECONDS
    return _figure(report, file, _seconds(result), _duration(result), met, detail, _runs(result))


def _reanalysis(report: Report, file: str, strict: bool = True) -> Figure | None:
    result = _analyze(report, "rematch-diagnose", E2E_HOSTS)
    if result is None:
        return None
    detail, sized = _e2e_size(report, result)
    met = sized and float(result["median_s"]) <= REANALYSIS_SECONDS
    return _figure(report, file, _seconds(result), _duration(result), met, detail, _runs(result))


def _analyze_figure(
    name: str, hosts: int, minutes: float
) -> Callable[[Report, str, bool], Figure | None]:
    """A figure without a target: the analyze measurement ``name`` at ``hosts`` × ``minutes``."""

    def read(report: Report, file: str, strict: bool = True) -> Figure | None:
        result = _analyze(report, name, hosts, minutes=minutes if strict else None)
        if result is None:
            return None
        detail = (
            f"{int(result['rows']):,} rows, {_size(int(result['bytes']))} bundle "
            f"({int(report['hosts']):,} hosts × {float(report['minutes']):g} min)"
        )
        return _figure(
            report, file, _seconds(result), _duration(result), None, detail, _runs(result)
        )

    return read


def _match_results(report: Report, strict: bool) -> dict[str, dict[str, Any]] | None:
    """The results of a match report at the targets' size (any size unless ``strict``), by
    name (None when smaller)."""
    case_rows = int((report.get("case") or {}).get("rows", 0))
    if strict and (int(report.get("rows_requested", 0)) < MATCH_ROWS or case_rows < MATCH_ROWS):
        return None
    return {
        str(r["name"]): r
        for r in report.get("results", [])
        if r.get("status") is None and r.get("median_s")
    }


#: The baselines' names in the matching figures.
_SHORT: Final = {"rg": "ripgrep", "python-loop": "Python loop", "grep": "grep -E"}


def _ratio_figure(
    report: Report, file: str, polars: dict[str, Any], other: dict[str, Any], goal: float
) -> Figure:
    """polars' rows/s over ``other``'s: the medians' ratio, and the range from the extremes."""
    p_median, p_low, p_high = _seconds(polars)
    o_median, o_low, o_high = _seconds(other)
    values = (o_median / p_median, o_low / p_high, o_high / p_low)
    digits = 2 if values[0] < 10 else 0
    text = f"{values[0]:,.{digits}f}× ({values[1]:,.{digits}f}–{values[2]:,.{digits}f})"
    name = _SHORT.get(str(other["name"]), str(other["name"]))
    extrapolated = other.get("extrapolated_from")
    detail = (
        f"medians: polars {p_median:,.1f} s, {name} {o_median:,.1f} s"
        + (f" (extrapolated from {int(extrapolated):,} lines)" if extrapolated else "")
        + f"; {int(polars['rows']):,} rows"
    )
    return _figure(
        report, file, values, text, values[0] >= goal, detail, min(_runs(polars), _runs(other))
    )


def _vs_rg(report: Report, file: str, strict: bool = True) -> Figure | None:
    results = _match_results(report, strict)
    # Only ripgrep fed the catalogue's own regexes (benchmarks.match.rg_pattern) counts.
    if not results or "polars" not in results or "rg" not in results:
        return None
    if "patterns_rg" not in (report.get("catalogue") or {}):
        return None
    return _ratio_figure(report, file, results["polars"], results["rg"], VS_RG)


def _vs_loop(report: Report, file: str, strict: bool = True) -> Figure | None:
    results = _match_results(report, strict)
    if not results or "polars" not in results or "python-loop" not in results:
        return None
    return _ratio_figure(report, file, results["polars"], results["python-loop"], VS_LOOP)


def _ingest_results(report: Report, strict: bool) -> dict[str, dict[str, Any]]:
    """The results of an ingest report at the targets' input size (any size unless
    ``strict``), by input."""
    size = report.get("size_mib")
    return {
        str(r["input"]): r
        for r in report.get("results", [])
        if not strict or (size if size is not None else r.get("input_mib", 0)) >= INGEST_MIB
    }


def _mb_per_s(size: float, result: dict[str, Any]) -> tuple[float, float, float]:
    """``size`` bytes in MB/s at the median, slowest and fastest run."""
    median, low, high = _seconds(result)
    return size / MB / median, size / MB / high, size / MB / low


def _rate_text(values: tuple[float, float, float]) -> str:
    return f"{values[0]:,.1f} MB/s ({values[1]:,.1f}–{values[2]:,.1f})"


def _ingest_figure(name: str, goal: float | None) -> Callable[[Report, str, bool], Figure | None]:
    """The ingest MB/s of the input ``name`` (of the bytes culprit decoded for a compressed
    one), against ``goal`` MB/s (``None``: a figure without a target)."""

    def read(report: Report, file: str, strict: bool = True) -> Figure | None:
        result = _ingest_results(report, strict).get(name)
        if result is None:
            return None
        decoded = result.get("decoded_bytes") if result.get("compression") else None
        values = _mb_per_s(float(decoded or result["bytes"]), result)
        text = _rate_text(values)
        detail = f"{_size(int(result['bytes']))}, {int(result['rows']):,} rows"
        if decoded:
            stored = _mb_per_s(float(result["bytes"]), result)
            detail = (
                f"{result['compression']}: {_size(decoded)} decoded from "
                f"{_size(int(result['bytes']))} stored ({stored[0]:,.1f} MB/s of stored "
                f"bytes), {int(result['rows']):,} rows" + _inflate_note(result)
            )
        met = None if goal is None else values[0] >= goal
        return _figure(report, file, values, text, met, detail, _runs(result))

    return read


def _inflate_rates(result: dict[str, Any]) -> list[tuple[str, float]]:
    """The decompression baselines over a compressed input: (label, MB/s at the median)."""
    return [
        (str(b["label"]), float(b["decoded_bytes"]) / MB / float(b["median_s"]))
        for b in (result.get("inflate") or {}).get("results", [])
    ]


def _inflate_note(result: dict[str, Any]) -> str:
    rates = _inflate_rates(result)
    missing = (result.get("inflate") or {}).get("missing") or []
    parts = [f"{label} {rate:,.0f} MB/s" for label, rate in rates]
    parts += [f"{name} not installed" for name in missing]
    return "; decoding alone: " + ", ".join(parts) if parts else ""


def _gzip(report: Report, file: str, strict: bool = True) -> Figure | None:
    results = _ingest_results(report, strict)
    gz, plain = results.get("cloud_logging_gz"), results.get("cloud_logging")
    if gz is None or plain is None or not gz.get("decoded_bytes"):
        return None
    rates = _inflate_rates(gz)
    if not rates:
        return None
    values = _mb_per_s(float(gz["decoded_bytes"]), gz)
    plain_rate = _mb_per_s(float(plain["bytes"]), plain)[0]
    label, inflate = max(rates, key=lambda pair: pair[1])
    bound = GZIP_FACTOR * min(plain_rate, inflate)
    detail = (
        f"plain JSON-lines ingest {plain_rate:,.1f} MB/s, fastest inflate {inflate:,.1f} MB/s "
        f"({label}): {GZIP_FACTOR:g} × min = {bound:,.1f} MB/s; "
        + _inflate_note(gz).removeprefix("; ")
    )
    return _figure(report, file, values, _rate_text(values), values[0] >= bound, detail, _runs(gz))


def _zstd(report: Report, file: str, strict: bool = True) -> Figure | None:
    """A figure without a target: the zstd kubelet input beside the plain one."""
    figure = _ingest_figure("kubelet_zst", None)(report, file, strict)
    plain = _ingest_results(report, strict).get("kubelet")
    if figure is None or plain is None:
        return figure
    plain_rate = _mb_per_s(float(plain["bytes"]), plain)[0]
    detail = f"{figure.detail}; plain kubelet ingest {plain_rate:,.1f} MB/s in the same run"
    return replace(figure, detail=detail)


#: Every target, in table order, then the figures listed without a target.
TARGETS: Final[tuple[Target, ...]] = (
    Target(
        "e2e-4096-time",
        "End to end",
        f"{SCENARIO} at 4,096 hosts (≥ 20 M rows, ≥ 8 GB bundle): bundle → report",
        "≤ 120 s",
        "analyze",
        _e2e_time,
    ),
    Target(
        "e2e-4096-rss",
        "End to end",
        f"{SCENARIO} at 4,096 hosts (≥ 20 M rows, ≥ 8 GB bundle): bundle → report, peak RSS",
        "≤ 4 GB (3,815 MiB) in every run",
        "analyze",
        _e2e_rss,
    ),
    Target(
        "e2e-1024-time",
        "End to end",
        f"{SCENARIO} at 1,024 hosts (60 min): bundle → report",
        "≤ 30 s",
        "analyze",
        _e2e_1024,
    ),
    Target(
        "match-vs-rg",
        "Matching",
        "full catalogue over ≥ 10 M rows (polars backend): rows/s over ripgrep's, same regexes",
        "≥ 1.5×",
        "match",
        _vs_rg,
    ),
    Target(
        "match-vs-loop",
        "Matching",
        "full catalogue over ≥ 10 M rows (polars backend): rows/s over the plain Python loop's",
        "≥ 100×",
        "match",
        _vs_loop,
    ),
    Target(
        "reanalysis-4096",
        "Re-analysis",
        "re-match + diagnose + report of the ingested 4,096-host case",
        "≤ 10 s",
        "analyze",
        _reanalysis,
    ),
    Target(
        "ingest-cloud_logging",
        "Ingest",
        "Cloud Logging JSON-lines (`cloud_logging`, 1 GiB)",
        "≥ 150 MB/s",
        "ingest",
        _ingest_figure("cloud_logging", INGEST_MB_S["cloud_logging"]),
    ),
    Target(
        "ingest-text",
        "Ingest",
        "text logs: container stderr (`text`, 1 GiB)",
        "≥ 300 MB/s",
        "ingest",
        _ingest_figure("text", INGEST_MB_S["text"]),
    ),
    Target(
        "ingest-kubelet",
        "Ingest",
        "text logs: kubelet journal (`kubelet`, 1 GiB)",
        "≥ 300 MB/s",
        "ingest",
        _ingest_figure("kubelet", INGEST_MB_S["kubelet"]),
    ),
    Target(
        "ingest-gzip",
        "Ingest",
        "gzip input (`cloud_logging_gz`), MB/s of decoded bytes",
        "≥ 0.9 × min(plain `cloud_logging` ingest, fastest inflate), same run",
        "ingest",
        _gzip,
    ),
    # Figures without a target.
    Target(
        "ingest-cloud_logging_array",
        "Ingest",
        "gcloud JSON array of the `cloud_logging` entries (`cloud_logging_array`)",
        None,
        "ingest",
        _ingest_figure("cloud_logging_array", None),
    ),
    Target(
        "ingest-modelarts",
        "Ingest",
        "ModelArts worker log (`modelarts`, 1 GiB)",
        None,
        "ingest",
        _ingest_figure("modelarts", None),
    ),
    Target(
        "ingest-zstd",
        "Ingest",
        "zstd journal (`kubelet_zst`), MB/s of decoded bytes",
        None,
        "ingest",
        _zstd,
    ),
    Target(
        "e2e-64-time",
        "End to end",
        f"{SCENARIO} at 64 hosts (60 min): bundle → report",
        None,
        "analyze",
        _analyze_figure("bundle-to-report", 64, 60.0),
    ),
    Target(
        "reanalysis-1024",
        "Re-analysis",
        "re-match + diagnose + report of the ingested 1,024-host case (60 min)",
        None,
        "analyze",
        _analyze_figure("rematch-diagnose", 1024, 60.0),
    ),
)


# -- judging ------------------------------------------------------------------------------------


def latest_run(files: Mapping[str, Report]) -> tuple[str, Report] | None:
    """The latest results file of kind ``run``: (name, report), or None."""
    runs = [(name, report) for name, report in files.items() if kind(report) == RUN]
    return max(runs, key=lambda item: _stamp(item[1], item[0]), default=None)


def _figures(target: Target, files: Mapping[str, Report], strict: bool) -> list[Figure]:
    """The target's figure from every results file that measured it, oldest first."""
    found = []
    for name, report in sorted(files.items(), key=lambda item: _stamp(item[1], item[0])):
        if kind(report) == target.kind:
            figure = target.read(report, name, strict)
            if figure is not None:
                found.append(figure)
    return found


def _status(figure: Figure) -> str:
    if figure.met is None:
        return "–"
    return "met" if figure.met else "not met"


def evaluate(
    files: Mapping[str, Report], this_run: Collection[str] | None = None, *, quick: bool = False
) -> list[Row]:
    """Every target judged on ``files``: its latest figure from a file of ``this_run`` (by
    default the files the latest ``run`` file lists, none for a quick run), else "not measured
    in this run" with the latest figure of the other files. ``quick``: the figures are from a
    quick run (sizes below the targets'), shown but never judged."""
    if this_run is None:
        latest = latest_run(files)
        quick_run = latest is None or bool(latest[1].get("quick"))
        this_run = () if latest is None or quick_run else latest[1].get("results_files", [])
    rows = []
    for target in TARGETS:
        figures = _figures(target, files, strict=not quick)
        current = [f for f in figures if f.file in this_run]
        if current and quick:
            # A quick figure never counts: it says nothing of met or not.
            figure = replace(current[-1], met=None)
            status = "–" if target.threshold is None else "quick run: not judged"
            rows.append(Row(target, status, figure, earlier=False))
        elif current:
            rows.append(Row(target, _status(current[-1]), current[-1], earlier=False))
        else:
            rows.append(
                Row(target, "not measured in this run", figures[-1] if figures else None, True)
            )
    return rows


# -- the RESULTS.md section ---------------------------------------------------------------------

#: The heading and prose put in front of the targets markers when they are first added.
TARGETS_INTRO: Final = """## Targets

`python -m benchmarks run` (from the repository root) reproduces every figure below in one
command: ingest throughput per reader family (Cloud Logging JSON-lines and gcloud array,
container text, kubelet journal, ModelArts, and gzip/zstd-compressed inputs with bare-decoder
baselines), matching over the 10 M-row case against ripgrep and the Python loop, and bundle →
report at 64, 1,024 and 4,096 hosts with re-analysis, each figure the median of 3 runs. It runs
`benchmarks.ingest`, `benchmarks.match` and `benchmarks.analyze` in turn (each records its own
results file and rebuilds its section below), then records a results file of kind `run`
listing them and rebuilds the table between the markers from all results files. `--quick`
(32 MiB of the four inputs the targets judge, a 1 M-row case, 64 hosts × 10 min, still 3 runs
each; under 2 minutes once its inputs are cached) checks the machinery: its figures are
printed and kept in its `run` file, never used here. `--only
ingest,match,analyze` runs some of the steps; `--rebuild-table` rebuilds the table without
measuring; `--no-record` writes nothing. The full run takes a couple of hours and needs about
25 GB free for the 4,096-host bundle. What each target reads and how it is judged:
`benchmarks/targets.py`.

"""


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


def _status_cell(row: Row) -> str:
    return {"met": "**met**", "not met": "**not met**"}.get(row.status, row.status)


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
        lines.append(
            f"| {row.target.area} | {_cell(row.target.text)} | {_cell(row.target.threshold)} "
            f"| {_cell(_measured(row))} | {file} | {_status_cell(row)} |"
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
    else:
        name, report = latest
        if report.get("quick"):
            head = (
                f"Latest run: {_run_label(name, report)}, a `--quick` run: its figures (far "
                "below the targets' sizes) are not used here, so no target is judged; each row "
                "shows the latest figure recorded at the target's size."
            )
        else:
            failed = [s["name"] for s in report.get("steps", []) if s.get("status") != "ok"]
            head = (
                f"Latest run: {_run_label(name, report)}, command `{report.get('command')}`; "
                "a row is judged only on a figure that run produced"
                + (f" (steps that did not finish: {', '.join(failed)})" if failed else "")
                + "."
            )
    body = table(evaluate(files))
    return (
        f"{TARGETS_BEGIN}\n{head} MB = 10⁶ bytes, GB = 10⁹ bytes; the results files are in "
        f"`benchmarks/results/`.\n\n{body}{TARGETS_END}\n"
    )


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


def place_section(text: str, new_section: str) -> str:
    """RESULTS.md's ``text`` with ``new_section`` between the targets markers; when they are
    missing, :data:`TARGETS_INTRO` and the section go in right after the title (the first
    line), in front of every other section."""
    if TARGETS_BEGIN in text and TARGETS_END in text:
        before, _, rest = text.partition(TARGETS_BEGIN)
        _, _, after = rest.partition(TARGETS_END)
        return before + new_section.rstrip("\n") + after
    title, _, rest = text.partition("\n")
    if not title.startswith("# "):
        title, rest = "# Benchmark results", text
    return f"{title}\n\n{TARGETS_INTRO}{new_section}\n" + rest.lstrip("\n")
