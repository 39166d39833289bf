"""HTML report benchmark: ``python -m benchmarks.html [--sizes 1024x60,4096x10] [--runs 3]``.

For each ``HOSTSxMINUTES`` size, on the analyze benchmark's cached bundle of host-crash-heartbeat
(:func:`benchmarks.analyze.prepare`; generated when missing), the case is made once with
``culprit analyze BUNDLE -o OUT --quiet`` (not timed), then, ``--runs`` times each:

* **render**: ``culprit report OUT/case --format html -o DIR`` in a fresh child process timed by
  :func:`benchmarks.measure.run_once` (diagnosis of the matched case included, as a user runs
  it), and the size of the ``report.html`` it wrote;
* **browser**: headless chromium (Debian's, through Playwright) opens the file with every
  network request refused, and the time from navigation until the heat strip is drawn
  (``#heat-svg`` present) is measured inside the page with ``performance.now()``.

Results go to ``benchmarks/results/`` (kind ``html``) and the HTML section of
``benchmarks/RESULTS.md``; ``--no-record`` writes neither.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from benchmarks.analyze import DEFAULT_CACHE, DEFAULT_SCENARIO, bundle_fields, prepare
from benchmarks.environment import machine, provenance, run_stamp, source_digest
from benchmarks.measure import BenchmarkError, culprit_command, run_once
from benchmarks.progress import say
from benchmarks.report import add_recording_options, record_with_section, recorded_command
from fixtures.options import Options

HTML: Final = "html"
BEGIN: Final = "<!-- html:begin -->"
END: Final = "<!-- html:end -->"
INTRO: Final = """## HTML report: size and render time

`python -m benchmarks.html [--sizes 1024x60,4096x10] [--runs 3]` (from the repository root;
needs Debian's `chromium` and `pip install -e '.[test]'` for Playwright) makes the case of each
bundle once, then times `culprit report CASE --format html` in a fresh process (diagnosis of the
matched case included) and headless chromium opening the file with the network refused, until
the heat strip is drawn. Raw figures: `benchmarks/results/`, kind `html`.

"""


def _size(text: str) -> tuple[int, float]:
    hosts, _, minutes = text.partition("x")
    return int(hosts), float(minutes or 60)


def browser_times(page_path: Path, runs: int) -> list[float]:
    """Milliseconds from navigation start until the strip's SVG exists, ``runs`` times."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise BenchmarkError("chromium is not installed (apt-get install chromium)")
    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                refused: list[str] = []

                def block(route: Any, refused: list[str] = refused) -> None:
                    if route.request.url.startswith("file://"):
                        route.continue_()
                    else:
                        refused.append(route.request.url)
                        route.abort()

                page.route("**/*", block)
                page.goto(page_path.as_uri())
                page.wait_for_selector("#heat-svg")
                times.append(float(page.evaluate("performance.now()")))
                if refused:
                    raise BenchmarkError(f"the page asked for the network: {refused[:3]}")
                page.close()
        finally:
            browser.close()
    return times


def measure_size(
    hosts: int, minutes: float, args: argparse.Namespace, workdir: Path
) -> dict[str, Any]:
    options = Options(hosts=hosts, seed=args.seed, minutes=minutes, rate=args.rate)
    cached = prepare(args.cache, DEFAULT_SCENARIO, options)
    culprit = culprit_command()
    out = workdir / f"{hosts}x{minutes:g}"
    say(f"{hosts:,} hosts × {minutes:g} min: analyzing once (not timed) ...")
    run_once(
        [*culprit, "analyze", str(cached.bundle), "-o", str(out), "--quiet"],
        workdir / f"analyze-{hosts}.log",
    )
    renders, sizes = [], []
    for number in range(1, args.runs + 1):
        target = workdir / f"html-{hosts}-{number}"
        run = run_once(
            [*culprit, "report", str(out / "case"), "--format", "html", "-o", str(target)],
            workdir / f"report-{hosts}-{number}.log",
        )
        renders.append(run.seconds)
        sizes.append((target / "report.html").stat().st_size)
        say(f"  render run {number}/{args.runs}: {run.seconds:.1f} s, {sizes[-1] / 1e6:.2f} MB")
    browser = browser_times(workdir / f"html-{hosts}-1" / "report.html", args.runs)
    say("  browser: " + ", ".join(f"{t:.0f} ms" for t in browser))
    return {
        **bundle_fields(DEFAULT_SCENARIO, options, cached),
        "render_s": renders,
        "render_median_s": statistics.median(renders),
        "html_bytes": sizes[-1],
        "html_bytes_all_runs": sizes,
        "browser_ms": browser,
        "browser_median_ms": statistics.median(browser),
    }


def section(report: dict[str, Any], name: str) -> str:
    lines = [
        BEGIN,
        f"Run `{name}` ({report['date']}, commit "
        f"`{(report['machine'].get('git_commit') or '')[:12]}`), command `{report['command']}`; "
        f"medians of {report['runs']} runs (min–max).",
        "",
        "| bundle | `report --format html` | report.html "
        "| chromium: open until the strip is drawn |",
        "|---|---:|---:|---:|",
    ]
    for result in report["results"]:
        lines.append(
            f"| {result['hosts']:,} hosts × {result['minutes']:g} min "
            f"({result['bundle']['bytes'] / 1e9:.2f} GB) | {result['render_median_s']:.1f} s "
            f"({min(result['render_s']):.1f}–{max(result['render_s']):.1f}) | "
            f"{result['html_bytes'] / 1e6:.2f} MB | {result['browser_median_ms']:.0f} ms "
            f"({min(result['browser_ms']):.0f}–{max(result['browser_ms']):.0f}) |"
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.html", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sizes", default="1024x60,4096x10", help="HOSTSxMINUTES, comma-separated")
    parser.add_argument("--rate", type=float, default=60.0, help="background lines/host/min")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="bundle cache")
    add_recording_options(parser)
    args = parser.parse_args(argv)
    command = recorded_command("benchmarks.html", argv)
    digest, host = source_digest(), machine()
    workdir = Path(tempfile.mkdtemp(prefix="html-", dir=args.cache))
    try:
        results = [measure_size(*_size(size), args, workdir) for size in args.sizes.split(",")]
    except BenchmarkError as exc:
        say(f"error: {exc}")
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    changed, origin = provenance(host, digest)
    if changed:
        say("warning: the analyzer sources or the commit changed during the run")
    report = {
        **run_stamp(HTML, command, args.runs),
        "results": results,
        "method": (
            "render: wall time of `culprit report CASE --format html` in a fresh child process "
            "(interpreter start-up and the diagnosis of the matched case included); browser: "
            "performance.now() in headless chromium once #heat-svg exists, network refused"
        ),
        **origin,
    }
    record_with_section(
        report, section, (BEGIN, END, INTRO), record=not args.no_record, copy=args.report_json
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
