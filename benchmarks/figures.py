"""How a target reads its figure from one results file: the readers :mod:`benchmarks.targets`
lists, each a pure function of a report (the median of its runs with their min and max; a
peak RSS judged on the highest run; a ratio's range pairs the extremes). MB and GB are 10^6
and 10^9 bytes, as the targets are stated."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from benchmarks import MIB
from benchmarks.ceilings import best_ceiling, describe_ceilings

SCENARIO: Final = "host-crash-heartbeat"
MB: Final = 1_000_000
GB: Final = 1_000_000_000
#: The 4,096-host end-to-end target's size.
E2E_HOSTS: Final = 4096
E2E_ROWS: Final = 20_000_000
E2E_BUNDLE_BYTES: Final = 8 * GB
E2E_RSS_BYTES: Final = 4 * GB
#: The matching targets' case size, and the ingest targets' input size and gzip factor.
MATCH_ROWS: Final = 10_000_000
INGEST_MIB: Final = 1024
GZIP_FACTOR: Final = 0.9

#: The analyze measurements: bundle → report, and re-match + diagnose of the ingested case.
COLD: Final = "bundle-to-report"
REMATCH: Final = "rematch-diagnose"

Report = dict[str, Any]
Result = dict[str, Any]
Values = tuple[float, float, float]


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


#: ``read(report, file, strict)``: a target's figure in one results file, or None; ``strict``
#: False (a quick run) lifts the size conditions that are not the target's own subject.
Reader = Callable[[Report, str, bool], Figure | None]


def _size(size: int) -> str:
    """A byte count in GB (from 1 GB on) or MB, as the targets state sizes."""
    return f"{size / GB:,.1f} GB" if size >= GB else f"{size / MB:,.0f} MB"


def _seconds(result: Result) -> Values:
    return float(result["median_s"]), float(result["min_s"]), float(result["max_s"])


def _figure(
    report: Report, file: str, values: Values, text: str, met: bool | None, detail: str, runs: int
) -> Figure:
    date = str(report.get("date", "?"))
    return Figure(*values, text, met, detail, file, date, runs)


def _runs(result: Result) -> int:
    return len(result.get("runs") or [])


def analysis(
    name: str, hosts: int, limit: float | None, *, minutes: float | None = None, sized: bool = False
) -> Reader:
    """The seconds of the analyze measurement ``name`` at ``hosts`` hosts (and ``minutes``)
    against ``limit`` (None: no target); ``sized``: the case must be the 4,096-host target's."""

    def read(report: Report, file: str, strict: bool = True) -> Figure | None:
        result = _analyze(report, name, hosts, minutes if strict or limit else None)
        if result is None:
            return None
        detail, ok = _e2e_size(report, result) if sized else (_case(report, result, limit), True)
        met = None if limit is None else ok and float(result["median_s"]) <= limit
        median, low, high = _seconds(result)
        text = f"{median:,.1f} s ({low:,.1f}–{high:,.1f})"
        return _figure(report, file, _seconds(result), text, met, detail, _runs(result))

    return read


def _analyze(report: Report, name: str, hosts: int, minutes: float | None) -> Result | None:
    """The result ``name`` of an analyze report on the scenario at ``hosts`` hosts (and
    ``minutes`` at rate 60 when given), or None."""
    if report.get("scenario") != SCENARIO or int(report.get("hosts", 0)) != hosts:
        return None
    if minutes is not None and (
        float(report.get("minutes", 0)) != minutes or float(report.get("rate", 0)) != 60.0
    ):
        return None
    return next((r for r in report.get("results", []) if r.get("name") == name), None)


def _case(report: Report, result: Result, limit: float | None) -> str:
    text = f"{int(result['rows']):,} rows, {_size(int(result['bytes']))} bundle"
    if limit is None:  # a figure without a target says which incident it is
        text += f" ({int(report['hosts']):,} hosts × {float(report['minutes']):g} min)"
    return text


def _e2e_size(report: Report, result: Result) -> tuple[str, bool]:
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


def e2e_rss(report: Report, file: str, strict: bool = True) -> Figure | None:
    result = _analyze(report, "bundle-to-report", E2E_HOSTS, None)
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


#: The baselines' names in the matching figures.
_SHORT: Final = {"rg": "ripgrep", "python-loop": "Python loop", "grep": "grep -E"}


def over(baseline: str, goal: float, hosts: int | None = None) -> Reader:
    """polars' rows/s over ``baseline``'s in the same run, at least ``goal`` times: the
    medians' ratio, and the range from the extremes. On the case of ``hosts`` hosts
    (``--hosts``) when given, else on a case of at least :data:`MATCH_ROWS` rows."""

    def read(report: Report, file: str, strict: bool = True) -> Figure | None:
        case_rows = int((report.get("case") or {}).get("rows", 0))
        requested = int(report.get("rows_requested", 0))
        if hosts is not None:
            if report.get("hosts_case") != hosts:
                return None
        elif report.get("hosts_case") is not None:
            return None  # a --hosts case: the rows target is judged on --rows cases only
        elif strict and (requested < MATCH_ROWS or case_rows < MATCH_ROWS):
            return None
        results = {
            str(r["name"]): r
            for r in report.get("results", [])
            if r.get("status") is None and r.get("median_s")
        }
        if "polars" not in results or baseline not in results:
            return None
        # Only ripgrep fed the catalogue's own regexes (the dialect's ripgrep writer) counts.
        if baseline == "rg" and "patterns_rg" not in (report.get("catalogue") or {}):
            return None
        polars, other = results["polars"], results[baseline]
        p_median, p_low, p_high = _seconds(polars)
        o_median, o_low, o_high = _seconds(other)
        values = (o_median / p_median, o_low / p_high, o_high / p_low)
        digits = 2 if values[0] < 10 else 0
        text = f"{values[0]:,.{digits}f}× ({values[1]:,.{digits}f}–{values[2]:,.{digits}f})"
        extrapolated = other.get("extrapolated_from")
        detail = (
            f"medians: polars {p_median:,.1f} s, {_SHORT.get(baseline, baseline)} "
            f"{o_median:,.1f} s"
            + (f" (extrapolated from {int(extrapolated):,} lines)" if extrapolated else "")
            + f"; {int(polars['rows']):,} rows"
        )
        runs = min(_runs(polars), _runs(other))
        return _figure(report, file, values, text, values[0] >= goal, detail, runs)

    return read


def _ingest_results(report: Report, strict: bool) -> dict[str, Result]:
    """The results of an ingest report at the targets' input size (any size unless
    ``strict``), by input."""
    size = report.get("size_mib")
    return {
        str(r["input"]): r
        for r in report.get("results", [])
        if not strict or (size if size is not None else r.get("input_mib", 0)) >= INGEST_MIB
    }


def _mb_per_s(size: float, result: Result) -> Values:
    """``size`` bytes in MB/s at the median, slowest and fastest run."""
    median, low, high = _seconds(result)
    return size / MB / median, size / MB / high, size / MB / low


def _rate_text(values: Values) -> str:
    return f"{values[0]:,.1f} MB/s ({values[1]:,.1f}–{values[2]:,.1f})"


def ingest(name: str, goal: float | None) -> Reader:
    """The ingest MB/s of the input ``name`` (of the bytes culprit decoded for a compressed
    one), against ``goal`` MB/s (``None``: a figure without a target)."""

    def read(report: Report, file: str, strict: bool = True) -> Figure | None:
        result = _ingest_results(report, strict).get(name)
        if result is None:
            return None
        decoded = result.get("decoded_bytes") if result.get("compression") else None
        values = _mb_per_s(float(decoded or result["bytes"]), result)
        detail = f"{_size(int(result['bytes']))}, {int(result['rows']):,} rows"
        if decoded:
            stored = _mb_per_s(float(result["bytes"]), result)
            detail = (
                f"{result['compression']}: {_size(decoded)} decoded from "
                f"{_size(int(result['bytes']))} stored ({stored[0]:,.1f} MB/s of stored "
                f"bytes), {int(result['rows']):,} rows" + _inflate_note(result)
            )
        described = describe_ceilings(result, MIB / MB, "MB/s")
        if described:
            detail += f"; library ceilings in the same run: {described}"
        bar = goal
        best = best_ceiling(result)
        if goal is not None and best is not None and best["mib_per_s"] * MIB / MB < goal:
            # The alternative: where a format cannot reach the goal, the best
            # library's own rate over the same input in the same run is the bar.
            bar = float(best["mib_per_s"]) * MIB / MB
            detail += f"; judged against the best ceiling, {bar:,.1f} MB/s"
        met = None if bar is None else values[0] >= bar
        return _figure(report, file, values, _rate_text(values), met, detail, _runs(result))

    return read


def _inflate_rates(result: Result) -> list[tuple[str, float]]:
    """The decompression baselines over a compressed input: (label, MB/s at the median)."""
    return [
        (str(b["label"]), float(b["decoded_bytes"]) / MB / float(b["median_s"]))
        for b in (result.get("inflate") or {}).get("results", [])
    ]


def _inflate_note(result: Result) -> str:
    missing = (result.get("inflate") or {}).get("missing") or []
    parts = [f"{label} {rate:,.0f} MB/s" for label, rate in _inflate_rates(result)]
    parts += [f"{name} not installed" for name in missing]
    return "; decoding alone: " + ", ".join(parts) if parts else ""


def gzip(report: Report, file: str, strict: bool = True) -> Figure | None:
    results = _ingest_results(report, strict)
    gz, plain = results.get("cloud_logging_gz"), results.get("cloud_logging")
    if gz is None or plain is None or not gz.get("decoded_bytes") or not _inflate_rates(gz):
        return None
    values = _mb_per_s(float(gz["decoded_bytes"]), gz)
    plain_rate = _mb_per_s(float(plain["bytes"]), plain)[0]
    label, inflate = max(_inflate_rates(gz), key=lambda pair: pair[1])
    bound = GZIP_FACTOR * min(plain_rate, inflate)
    detail = (
        f"plain JSON-lines ingest {plain_rate:,.1f} MB/s, fastest inflate {inflate:,.1f} MB/s "
        f"({label}): {GZIP_FACTOR:g} × min = {bound:,.1f} MB/s; "
        + _inflate_note(gz).removeprefix("; ")
    )
    return _figure(report, file, values, _rate_text(values), values[0] >= bound, detail, _runs(gz))


def zstd(report: Report, file: str, strict: bool = True) -> Figure | None:
    """A figure without a target: the zstd kubelet input beside the plain one."""
    figure = ingest("kubelet_zst", None)(report, file, strict)
    plain = _ingest_results(report, strict).get("kubelet")
    if figure is None or plain is None:
        return figure
    plain_rate = _mb_per_s(float(plain["bytes"]), plain)[0]
    detail = f"{figure.detail}; plain kubelet ingest {plain_rate:,.1f} MB/s in the same run"
    return replace(figure, detail=detail)


def startup(limit: float) -> Reader:
    """The wall seconds of ``culprit analyze FILE -o OUT`` on the start-up benchmark's small
    file, against ``limit``, with the floors measured in the same run."""

    def read(report: Report, file: str, strict: bool = True) -> Figure | None:
        result = next(iter(report.get("results") or []), None)
        if result is None or not result.get("wall_s"):
            return None
        walls = [float(w) for w in result["wall_s"]]
        values = (float(result["wall_median_s"]), min(walls), max(walls))
        text = f"{values[0]:,.2f} s ({values[1]:,.2f}–{values[2]:,.2f})"
        floors = "; ".join(
            f"{name} {float(floor['wall_median_s']):,.2f} s"
            for name, floor in (result.get("floors") or {}).items()
        )
        detail = (
            f"{int(result.get('lines', 0))}-line file, CPU {float(result['cpu_median_s']):,.2f} s"
        )
        detail += f"; floors in the same run: {floors}" if floors else ""
        return _figure(report, file, values, text, values[0] <= limit, detail, len(walls))

    return read
