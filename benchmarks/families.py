"""The table of report families: how each benchmark's results read in ``RESULTS.md``.

One entry per kind of results file, all written by the one writer of :mod:`benchmarks.report`:
the columns of the table, what a row stands for and their order, the versions and the command
under each run, and a detail line per row. A new benchmark adds one entry here.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any, Final

from benchmarks.ceilings import best_ceiling, describe_ceilings
from benchmarks.report import Column, Report, Result, RowsFamily, RunFamily, markers
from fixtures.sized import SIZED_LOGS

#: The order of the ingest inputs in the tables: the sized logs' order.
INPUT_NAMES: Final = tuple(SIZED_LOGS)


def _number(key: str, spec: str = ",") -> Callable[[Result], str]:
    """A cell with ``result[key]`` formatted by ``spec``."""
    return lambda r: format(r[key], spec)


def _per_run(runs: Sequence[dict[str, Any]], spec: str) -> tuple[str, str, str]:
    """Wall time, CPU time and load average of every run, as the detail lines list them."""
    walls = ", ".join(f"{format(run['seconds'], spec)} s" for run in runs)
    cpu = ", ".join(f"{format(run['user_s'] + run['system_s'], spec)} s" for run in runs)
    load = ", ".join(f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in runs)
    return walls, cpu, load


def _versions(*names: str) -> Callable[[Report], str]:
    """The versions of the distributions ``names`` a run was measured with."""
    return lambda report: ", ".join(f"{n} {report['machine']['versions'][n]}" for n in names)


_library_versions: Final = _versions("culprit", "polars", "pyarrow", "duckdb", "numpy")


def _spread(r: Result, spec: str = ",.1f") -> str:
    """``median (min–max)`` of a result's wall times."""
    return f"{r['median_s']:{spec}} ({r['min_s']:{spec}}–{r['max_s']:{spec}})"


# -- ingest ---------------------------------------------------------------------------------------


def _compressed_note(result: Result) -> str:
    """For a compressed input: what it decodes to, MiB/s over the decoded bytes (the table's
    MiB/s is over the stored bytes) and the decompression baselines over the same file."""
    if not result.get("compression"):
        return ""
    decoded = result.get("decoded_mib")
    if decoded is None:
        return f" {result['compression']}: decoded size not recorded."
    return (
        f" {result['compression']}-compressed: decodes to {decoded:,.1f} MiB, "
        f"**{result['decoded_mib_per_s']:,.1f} MiB/s of decoded bytes** (the table's "
        f"{result['mib_per_s']:,.1f} MiB/s is over the stored bytes); decoding the same file to "
        f"`/dev/null` alone: {describe_inflate(result.get('inflate') or {})}."
    )


def describe_inflate(inflate: dict[str, Any]) -> str:
    """The baselines for a progress or RESULTS.md line: ``zlib 310 MiB/s, isal 880 MiB/s``."""
    parts = [
        f"{r['label']} {r['mib_per_s']:,.0f} MiB/s (median of "
        f"{len(r['runs'])}: {statistics.median(run['seconds'] for run in r['runs']):.2f} s)"
        for r in inflate.get("results", [])
    ]
    parts += [f"{name} not installed" for name in inflate.get("missing", [])]
    return ", ".join(parts) or "none"


def _ceilings_note(result: Result) -> str:
    """The library ceilings measured over the same file in the same run, if any."""
    described = describe_ceilings(result)
    return (
        f" Library ceilings over the same file (`benchmarks/ceilings.py`): {described}."
        if described
        else ""
    )


def _ceiling_cell(result: Result) -> str:
    best = best_ceiling(result)
    return "–" if best is None else f"{best['mib_per_s']:,.1f}"


def _ingest_detail(report: Report, r: Result) -> str:
    c = r["counts"]
    _, cpu, load = _per_run(r["runs"], ".1f")
    return (
        f"* {r['input']}: {c['records']:,} lines -> {c['rows']:,} rows, {c['folded']:,} "
        f"folded, {c['quarantined']:,} quarantined, {c['duplicates']:,} duplicates; case "
        f"{r['case_mib']:,.0f} MiB on disk; CPU per run {cpu}; 1-minute load average before -> "
        f"after each run {load}." + _compressed_note(r) + _ceilings_note(r)
    )


def _input_order(key: tuple[Any, ...], result: Result) -> tuple[Any, ...]:
    name = key[0]
    return (INPUT_NAMES.index(name) if name in INPUT_NAMES else len(INPUT_NAMES), name)


INGEST: Final = RowsFamily(
    kind="ingest",
    columns=(
        Column("input", "---", lambda r: str(r["input"])),
        Column("reader", "---", lambda r: ", ".join(r["readers"])),
        Column("input MiB", "--:", _number("input_mib", ",.1f")),
        Column("lines", "--:", _number("records")),
        Column("rows", "--:", _number("rows")),
        Column("median s", "--:", _number("median_s", ".1f")),
        Column("min s", "--:", _number("min_s", ".1f")),
        Column("max s", "--:", _number("max_s", ".1f")),
        Column("MiB/s", "--:", _number("mib_per_s", ".1f")),
        Column("best library ceiling MiB/s", "--:", _ceiling_cell),
        Column("peak RSS MiB", "--:", _number("peak_rss_mib", ",.0f")),
    ),
    measured_at=2,
    key=lambda report, result: (str(result["input"]),),
    order=_input_order,
    tools=_library_versions,
    how=lambda report: (
        f"{', '.join(r['input'] for r in report['results'])}; {report['runs']} run(s) per "
        "input, each `culprit ingest FILE -o CASE --force --quiet` in a fresh child process"
    ),
    detail=_ingest_detail,
)

# -- generation -----------------------------------------------------------------------------------


def _generate_detail(report: Report, r: Result) -> str:
    walls, cpu, load = _per_run(r["runs"], ".1f")
    return (
        f"* {r['scenario']}, {r['hosts']:,} hosts, {r['minutes']:g} min, rate {r['rate']:g}, "
        f"seed {r['seed']}: {r['bytes']:,} bytes in {r['files']:,} files; wall per run {walls}; "
        f"CPU per run {cpu}; 1-minute load average before -> after each run {load}."
    )


GENERATE: Final = RowsFamily(
    kind="generate",
    columns=(
        Column("scenario", "---", lambda r: str(r["scenario"])),
        Column("hosts", "--:", _number("hosts")),
        Column("minutes", "--:", _number("minutes", "g")),
        Column("rate", "--:", _number("rate", "g")),
        Column("files", "--:", _number("files")),
        Column("MiB written", "--:", _number("written_mib", ",.1f")),
        Column("wall s", "--:", _number("median_s", ".1f")),
        Column("MiB/s", "--:", _number("mib_per_s", ".1f")),
        Column("peak RSS MiB", "--:", _number("peak_rss_mib", ",.0f")),
    ),
    measured_at=9,
    measured_header="commit",
    dated=False,
    package="fixtures",
    key=lambda report, r: (
        str(r["scenario"]),
        int(r["hosts"]),
        float(r["minutes"]),
        float(r["rate"]),
    ),
    order=lambda key, result: key,
    tools=_versions("polars", "numpy"),
    how=lambda report: (
        f"{report['runs']} run(s) per host count, each `python -m fixtures generate "
        "SCENARIO -o OUT --hosts N --seed S --minutes M --rate R --force` in a fresh child "
        "process"
    ),
    detail=_generate_detail,
    empty="No generation run recorded yet.",
)

# -- matching -------------------------------------------------------------------------------------


def _absent(r: Result) -> bool:
    return r.get("status") == "not installed"


def _ratio(value: float | None) -> str:
    """A throughput ratio for a table cell: ``12.3×``, ``0.41×``, ``–``."""
    if value is None:
        return "–"
    if value < 0.1:
        return f"{value:.2g}×"
    return f"{value:,.{2 if value < 10 else 1}f}×"


def _match_wall(r: Result) -> str:
    if _absent(r):
        return "not installed"
    if r.get("extrapolated_from"):
        return f"{r['median_s']:,.0f}, extrapolated ({r['min_s']:,.0f}–{r['max_s']:,.0f})"
    return _spread(r)


def _match_cell(cell: Callable[[Result], str]) -> Callable[[Result], str]:
    """``cell``, or ``–`` on the row of a tool that is not installed."""
    return lambda r: "–" if _absent(r) else cell(r)


def _peak_rss(r: Result) -> str:
    """The peak RSS, none for an extrapolated figure (it is the sample's)."""
    rss = None if r.get("extrapolated_from") else r.get("peak_rss_mib")
    return "–" if rss is None else f"{rss:,.0f}"


def _left_out(pairs: Sequence[Sequence[str]]) -> str:
    if not pairs:
        return ", none left out."
    return "; left out: " + "; ".join(f"`{code}` ({why})" for code, why in pairs) + "."


def _match_run(report: Report) -> list[str]:
    """A matching run's case, its catalogue and patterns, and its targets met or not."""
    case, cat = report["case"], report["catalogue"]
    lines = [
        f"  * Case: {case['scenario']}, {case['hosts']:,} hosts × {case['minutes']:g} min, "
        f"rate {case['rate']:g}, seed {case['seed']} (fixtures `{case['fixtures_sha256']}`), "
        f"ingested by culprit {case['culprit_version']}: {case['rows']:,} rows, "
        f"{case['message_bytes']:,} bytes of message text "
        f"({case['message_bytes'] / (1 << 20):,.0f} MiB, {case['multiline_messages']:,} "
        "messages with a newline).",
        f"  * Catalogue: {cat['signatures']:,} signatures (catalogue sha256 "
        f"`{cat['digest'][:12]}`); {len(cat['patterns_ere']):,} translated to POSIX ERE for "
        f"grep{_left_out(cat['left_out'])}"
        # Runs from before ripgrep was fed the catalogue's own regexes say nothing of it.
        + (
            f" {len(cat['patterns_rg']):,} of the catalogue's own regexes adapted for ripgrep "
            "(named groups made plain, a newline outside a class made a space)"
            + _left_out(cat.get("left_out_rg") or [])
            if "patterns_rg" in cat
            else ""
        ),
    ]
    for check in (report.get("targets") or {}).get("checks", []):
        verdict = "met" if check["met"] else "**not met**"
        lines.append(f"  * {check['text']}: {check['value']} — {verdict}.")
    return lines


def _match_detail(report: Report, r: Result) -> str:
    if _absent(r):
        return f"* {r['label']}: not installed on the machine (`{r['program']}`)."
    walls, cpu, load = _per_run(r["runs"], ",.1f")
    note = f" {r['note']}" if r.get("note") else ""
    return (
        f"* {r['label']}, {report['date']}, {r['rows']:,} rows: `{r['command']}`.{note} "
        f"Wall per run {walls}; CPU per run {cpu}; peak RSS {r['peak_rss_mib']:,.0f} MiB; "
        f"1-minute load average before -> after each run {load}."
    )


MATCH: Final = RowsFamily(
    kind="match",
    columns=(
        Column("backend / baseline", "---", lambda r: str(r["label"])),
        Column("rows", "--:", _match_cell(_number("rows"))),
        Column("signatures / patterns", "--:", _match_cell(_number("patterns"))),
        Column("wall s, median (min–max)", "--:", _match_wall),
        Column("rows/s", "--:", _match_cell(_number("rows_per_s", ",.0f"))),
        Column("MiB/s", "--:", _match_cell(_number("mib_per_s", ",.1f"))),
        Column("peak RSS MiB", "--:", _match_cell(_peak_rss)),
        Column("× Python loop", "--:", _match_cell(lambda r: _ratio(r.get("vs_python_loop")))),
        Column("× grep", "--:", _match_cell(lambda r: _ratio(r.get("vs_grep")))),
        Column("× ripgrep", "--:", _match_cell(lambda r: _ratio(r.get("vs_rg")))),
    ),
    key=lambda report, r: (int(report.get("rows_requested") or r.get("rows") or 0), str(r["name"])),
    order=lambda key, r: (-key[0], r.get("kind") == "baseline", int(r.get("order") or 0), key[1]),
    tools=lambda r: (
        f"{_versions('culprit', 'polars', 'pyarrow', 'duckdb')(r)}; {r['grep_version']}"
        + (f"; {r['rg_version']}" if r.get("rg_version") else "")
    ),
    how=lambda report: f"{report['runs']} run(s) of each",
    run_details=_match_run,
    detail=_match_detail,
    empty="No matching run recorded yet.",
)

# -- end-to-end analysis --------------------------------------------------------------------------

#: The measurements of an analyze run, in table order.
ANALYZE_ORDER: Final = {"bundle-to-report": 0, "rematch-diagnose": 1, "diagnose-only": 2}


def _yes(value: bool) -> str:
    return "yes" if value else "**no**"


def _analyze_run(report: Report) -> list[str]:
    """An analysis run's bundle and case, and its verdict against the generator's truth."""
    b, case = report["bundle"], report["case"]
    check = report["verdict"]
    found, expected = check["found"], check["expected"]
    first = found.get("first_error")
    cited = f"`{first['path']}:{first['line']}` ({first['signature']})" if first else "none"
    want = expected["first_error"]
    host, true_host = found["culprit"].get("host") or "–", expected["culprit"].get("host") or "–"
    return [
        f"  * Bundle: {report['scenario']}, {report['hosts']:,} hosts × {report['minutes']:g} "
        f"min, rate {report['rate']:g}, seed {report['seed']} (fixtures "
        f"`{b['fixtures_sha256']}`): {b['bytes']:,} bytes in {b['files']:,} files. Case: "
        f"{case['counts']['records']:,} records -> {case['rows']:,} rows, "
        f"{case['counts']['folded']:,} folded, {case['counts']['quarantined']:,} quarantined; "
        f"{case['case_mib']:,.0f} MiB on disk; {case['matches']:,} matches.",
        f"  * Verdict of the first bundle → report run: attempt {found['attempt']}, "
        f"{found['failure_mode']}; first error {cited}; culprit {found['culprit']['kind']} "
        f"`{host}`. Truth (`truth.toml`, attempt {expected['attempt']}): first error "
        f"`{want['path']}:{want['line']}`, culprit {expected['culprit']['kind']} `{true_host}`. "
        f"First error matches: {_yes(check['first_error_matches'])}; culprit matches: "
        f"{_yes(check['culprit_matches'])}; **verdict matches truth: "
        f"{'yes' if check['matches'] else 'no'}**.",
    ]


def _analyze_detail(report: Report, r: Result) -> str:
    walls, cpu, load = _per_run(r["runs"], ",.1f")
    agree = "" if r.get("verdicts_agree", True) else " **The runs' verdicts differ.**"
    return (
        f"* {r['label']}, {report['scenario']}, {report['hosts']:,} hosts × "
        f"{report['minutes']:g} min, {report['date']}: `{r['command']}`.{agree} Wall per "
        f"run {walls}; CPU per run {cpu}; peak RSS {r['peak_rss_mib']:,.0f} MiB; "
        f"1-minute load average before -> after each run {load}."
    )


ANALYZE: Final = RowsFamily(
    kind="analyze",
    columns=(
        Column("measurement", "---", lambda r: str(r["label"])),
        Column("hosts", "--:", _number("hosts")),
        Column("rows", "--:", _number("rows")),
        Column("bundle MiB", "--:", _number("bundle_mib", ",.1f")),
        Column("wall s, median (min–max)", "--:", _spread),
        Column("peak RSS MiB", "--:", _number("peak_rss_mib", ",.0f")),
    ),
    key=lambda report, r: (
        str(report["scenario"]),
        int(report["hosts"]),
        float(report["minutes"]),
        float(report["rate"]),
        int(report["seed"]),
        str(r["name"]),
    ),
    order=lambda key, r: (
        *(key[0], -key[1], -key[2], -key[3], key[4]),
        ANALYZE_ORDER.get(key[5], len(ANALYZE_ORDER)),
        key[5],
    ),
    tools=_library_versions,
    how=lambda report: (
        f"{report['runs']} run(s) of each measurement, each in a fresh child process"
    ),
    run_details=_analyze_run,
    detail=_analyze_detail,
    empty="No end-to-end analysis run recorded yet.",
)

# -- scale-out ------------------------------------------------------------------------------------


def _scaleout_section(report: Report, name: str) -> str:
    """The RESULTS.md section of one scale-out report."""
    begin, end = markers("scaleout")
    engines, steps, plan = report["engines"], report["steps"], report["projection"]
    bundle, machine = report["bundle"], report["machine"]
    local = engines["local"]["median_s"]
    lines = [
        begin,
        f"Run `{name}` ({report['date']}, commit `{(machine.get('git_commit') or '')[:12]}`), "
        f"command `{report['command']}`: {report['hosts']:,} hosts × {report['minutes']:g} min, "
        f"{bundle['bytes'] / 1e9:.2f} GB in {bundle['files']:,} files; "
        f"{machine.get('cores', '?')} cores. Medians of {report['runs']} runs "
        "(min–max); every run's findings equal the local engine's byte for byte.",
        "",
        "| run | wall s | vs local | peak RSS MiB (process tree) |",
        "|---|---:|---:|---:|",
    ]
    for key, figures in engines.items():
        label = (
            "local engine (`--jobs` = cores)"
            if key == "local"
            else f"`--engine ray --workers {key.split('-')[1]}`"
        )
        lines.append(
            f"| {label} | {_spread(figures, '.1f')} | {figures['median_s'] / local:.2f}× "
            f"| {figures['peak_rss_mib']:,.0f} |"
        )
    count = steps["shards"]
    lines += [
        "",
        f"Shard steps, one command at a time ({count} shards, one core each):",
        "",
        "| step | seconds |",
        "|---|---:|",
        f"| `ingest --shard k/{count} --jobs 1`, per shard | "
        + ", ".join(f"{s:.1f}" for s in steps["ingest_shard_s"])
        + " |",
        f"| `merge` of the ingest parts | {steps['merge_ingest_s']:.1f} |",
        f"| `match --shard k/{count}`, per shard | "
        + ", ".join(f"{s:.1f}" for s in steps["match_shard_s"])
        + " |",
        f"| `merge` of the match parts | {steps['merge_match_s']:.1f} |",
        f"| `analyze CASE` (diagnosis and report) | {steps['diagnose_s']:.1f} |",
        "",
        "Bytes each shard read: "
        + ", ".join(f"{b / 1e6:,.0f} MB" for b in steps["shard_bytes"])
        + ". The ingest parts hold "
        f"{steps['ingest_parts_rows_bytes'] / 1e6:,.0f} MB of rows and "
        f"{steps['ingest_parts_small_bytes'] / 1e6:,.1f} MB of small tables (inventory, "
        "quarantine, de-duplication keys, host aliases); the match parts "
        f"{steps['match_parts_bytes'] / 1e6:,.2f} MB.",
        "",
        f"**Projection** (arithmetic on the figures above, not a measurement): "
        f"{plan['gb']:g} GB on {plan['nodes']} nodes × {plan['cores_per_node']} cores. "
        f"Ingest + match ran at {plan['per_core_mb_s']:.1f} MB per core-second here, so "
        f"the shards take {plan['parallel_s']:,.0f} s if they scale linearly and the shared "
        f"file system keeps up; the merges and the diagnosis, scaled linearly with the bundle "
        f"(×{plan['scale']:,.0f}), add {plan['serial_s']:,.0f} s in the driver: about "
        f"{plan['total_s'] / 60:,.0f} min in all.",
        end,
    ]
    return "\n".join(lines) + "\n"


SCALEOUT: Final = RunFamily("scaleout", _scaleout_section)

# -- the HTML report ------------------------------------------------------------------------------


def _html_section(report: Report, name: str) -> str:
    begin, end = markers("html")
    lines = [
        begin,
        f"Run `{name}` ({report['date']}, commit "
        f"`{(report['machine'].get('git_commit') or '')[:12]}`), command `{report['command']}`; "
        f"medians of {report['runs']} runs (min–max).",
        "",
        "| bundle | `report --format html` | report.html "
        "| chromium: open until the strip is drawn |",
        "|---|---:|---:|---:|",
    ]
    for r in report["results"]:
        lines.append(
            f"| {r['hosts']:,} hosts × {r['minutes']:g} min "
            f"({r['bundle']['bytes'] / 1e9:.2f} GB) | {r['render_median_s']:.1f} s "
            f"({min(r['render_s']):.1f}–{max(r['render_s']):.1f}) | "
            f"{r['html_bytes'] / 1e6:.2f} MB | {r['browser_median_ms']:.0f} ms "
            f"({min(r['browser_ms']):.0f}–{max(r['browser_ms']):.0f}) |"
        )
    lines.append(end)
    return "\n".join(lines) + "\n"


HTML: Final = RunFamily("html", _html_section)


# -- start-up: a 10-line file -------------------------------------------------------------------


def _startup_section(report: Report, name: str) -> str:
    begin, end = markers("startup")
    r = report["results"][0]

    def span(values: list[float]) -> str:
        return f"{min(values):.2f}–{max(values):.2f}"

    lines = [
        begin,
        f"Run `{name}` ({report['date']}, commit "
        f"`{(report['machine'].get('git_commit') or '')[:12]}`), command `{report['command']}`; "
        f"medians of {report['runs']} runs (min–max), each a fresh child process; "
        f"{r['bytecode_compiled_share']:.0%} of the analyzer's modules had their bytecode "
        "compiled.",
        "",
        "| command | wall s | CPU s | peak RSS MiB |",
        "|---|---:|---:|---:|",
        f"| `{r['command_timed']}`, {r['lines']} lines | {r['wall_median_s']:.2f} "
        f"({span(r['wall_s'])}) | {r['cpu_median_s']:.2f} ({span(r['cpu_s'])}) "
        f"| {r['peak_rss_mib']:.0f} |",
    ]
    for floor, figures in r["floors"].items():
        lines.append(
            f"| floor: `{floor}` | {figures['wall_median_s']:.2f} "
            f"({span(figures['wall_s'])}) | {figures['cpu_median_s']:.2f} "
            f"({span(figures['cpu_s'])}) | {figures['peak_rss_mib']:.0f} |"
        )
    lines.append(end)
    return "\n".join(lines) + "\n"


STARTUP: Final = RunFamily("startup", _startup_section)
