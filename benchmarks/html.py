"""HTML report benchmark: ``python -m benchmarks.html [--sizes 1024x60,4096x10] [--runs 3]``
(RESULTS.md, "HTML report").

For each ``HOSTSxMINUTES`` size, the case of the analyze benchmark's cached bundle is made once
(not timed); then ``culprit report CASE --format html`` is timed in a fresh child process
(the diagnosis of the matched case included, as a user runs it), and headless chromium
(Debian's, through Playwright) opens the file with every network request refused until the
heat strip is drawn (``#heat-svg``), timed inside the page with ``performance.now()``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import bundles, measure, say
from benchmarks.families import HTML
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command


def browser_times(page_path: Path, runs: int) -> list[float]:
    """Milliseconds from navigation start until the strip's SVG exists, ``runs`` times."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise measure.BenchmarkError("chromium is not installed (apt-get install chromium)")
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
                    raise measure.BenchmarkError(f"the page asked for the network: {refused[:3]}")
                page.close()
        finally:
            browser.close()
    return times


def measure_size(plan: bundles.Plan, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The case of ``plan``'s bundle made once, then ``report --format html`` and the browser
    timed ``--runs`` times each."""
    cached = bundles.prepare(args.cache, plan)
    culprit = measure.culprit_command()
    out = workdir / f"{plan.hosts}x{plan.minutes:g}"
    say(f"{plan.hosts:,} hosts × {plan.minutes:g} min: analyzing once (not timed) ...")
    measure.run_once(
        [*culprit, "analyze", str(cached.bundle), "-o", str(out), "--quiet"],
        workdir / f"analyze-{plan.hosts}.log",
    )
    renders, sizes = [], []
    for number in range(1, args.runs + 1):
        target = workdir / f"html-{plan.hosts}-{number}"
        run = measure.run_once(
            [*culprit, "report", str(out / "case"), "--format", "html", "-o", str(target)],
            workdir / f"report-{plan.hosts}-{number}.log",
        )
        renders.append(run.seconds)
        sizes.append((target / "report.html").stat().st_size)
        say(f"  render run {number}/{args.runs}: {run.seconds:.1f} s, {sizes[-1] / 1e6:.2f} MB")
    browser = browser_times(workdir / f"html-{plan.hosts}-1" / "report.html", args.runs)
    say("  browser: " + ", ".join(f"{t:.0f} ms" for t in browser))
    return {
        **cached.fields(),
        "render_s": renders,
        "render_median_s": statistics.median(renders),
        "html_bytes": sizes[-1],
        "html_bytes_all_runs": sizes,
        "browser_ms": browser,
        "browser_median_ms": statistics.median(browser),
    }


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[bundles.Plan]]:
    parser = parser_for("benchmarks.html", __doc__)
    parser.add_argument("--sizes", default="1024x60,4096x10", help="HOSTSxMINUTES, comma-separated")
    bundles.add_bundle_options(parser, hosts=False, minutes=False)
    add_recording_options(parser)
    args = checked(parser, argv)
    sizes = []
    for size in args.sizes.split(","):
        hosts, _, minutes = size.partition("x")
        sizes.append((int(hosts), float(minutes or 60)))
    return args, bundles.plans(parser, args, sizes)


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    args, sizes = _parse_args(argv)
    command = recorded_command("benchmarks.html", argv)
    start = measure.Start.now()
    with measure.work_directory(args.cache, "html-", keep=False) as workdir:
        results = [measure_size(plan, args, workdir) for plan in sizes]
    report = {
        **measure.run_stamp(HTML.kind, command, args.runs),
        "results": results,
        "method": (
            "render: wall time of `culprit report CASE --format html` in a fresh child process "
            "(interpreter start-up and the diagnosis of the matched case included); browser: "
            "performance.now() in headless chromium once #heat-svg exists, network refused"
        ),
        **start.provenance(),
    }
    finish(report, HTML, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
