"""What log templates add to an analysis: ``python -m benchmarks.templates [--hosts 256]
[--minutes 60] [--rate 60] [--runs 3]``.

A generated incident (``fixtures``, host-crash-heartbeat) is analyzed end to end (bundle →
report, templates included) in a fresh case; then, on that case, the template tables are
written again alone (:func:`analyzer.signatures.templates.write_templates`) and the template
rules of the diagnosis run alone (the attempt tables, outliers, leads, phase). The overhead is
their time over the rest of the analysis. Medians of ``--runs`` runs are printed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from analyzer import api
from analyzer.case.layout import TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE, TEMPLATES_FILE
from analyzer.diagnose import attempts as attempts_mod
from analyzer.diagnose.evidence import load
from analyzer.diagnose.leads import rank_leads
from analyzer.diagnose.outliers import rank_hosts
from analyzer.diagnose.patterns import load_patterns
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.matching import row_files
from analyzer.signatures.templates import write_templates
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR


def _rules(case: Path) -> float:
    """Seconds of the template rules of the diagnosis over every attempt of ``case``."""
    opened = api.load_case(case)
    data = load(opened, load_catalogue())
    attempts = attempts_mod.split(data.activity())
    started = time.perf_counter()
    patterns = load_patterns(opened)
    for attempt in attempts:
        table = patterns.within(attempt.start, attempt.end)
        outliers = rank_hosts(table)
        rank_leads(table, outliers)
    return time.perf_counter() - started


def measure(hosts: int, minutes: float, rate: float, runs: int, work: Path) -> dict[str, float]:
    generated = work / "gen"
    if not (generated / BUNDLE_DIR).is_dir():
        generate(
            "host-crash-heartbeat", Options(hosts=hosts, minutes=minutes, rate=rate), generated
        )
    totals, templates, rules, rows = [], [], [], 0
    for _ in range(runs):
        out = work / "out"
        shutil.rmtree(out, ignore_errors=True)
        started = time.perf_counter()
        result = api.analyze([generated / BUNDLE_DIR], out)
        totals.append(time.perf_counter() - started)
        case = out / "case"
        rows = result.findings.bundle.rows
        # The tables of the analysis are kept when their rows and rules are unchanged: remove
        # them, so that they are made again and timed.
        for name in (TEMPLATES_FILE, TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE):
            (case / name).unlink()
        started = time.perf_counter()
        write_templates(row_files(api.load_case(case)), case)
        templates.append(time.perf_counter() - started)
        rules.append(_rules(case))
    total = statistics.median(totals)
    added = statistics.median(templates) + statistics.median(rules)
    return {
        "rows": rows,
        "analysis_s": round(total, 2),
        "templates_s": round(statistics.median(templates), 2),
        "rules_s": round(statistics.median(rules), 2),
        "overhead": round(added / max(total - added, 1e-9), 4),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.templates", description=__doc__)
    parser.add_argument("--hosts", type=int, default=256)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        figures = measure(
            args.hosts, args.minutes, args.rate, args.runs, args.work or Path(scratch)
        )
    for key, value in figures.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
