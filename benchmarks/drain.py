"""Log templates two ways on the loghub samples: culprit's masking in polars
(:mod:`analyzer.signatures.templates`) and a Drain parser (the ``drain3`` package, installed
by hand: it is not a dependency). ``python -m benchmarks.drain [--loghub DIR] [--repeat 100]``.

Per data set (the ``Content`` column of ``*_2k.log_structured.csv``, with loghub's own
``EventId`` as the truth):

* **speed**: lines per second over the 2,000 lines repeated ``--repeat`` times;
* **grouping accuracy**: the share of lines whose group holds exactly the lines of its truth
  group (the loghub benchmark's measure);
* **run stability**: the share of the first 1,000 lines whose template is the same when they
  are parsed alone as when all 2,000 are (the same line in a shorter and a longer run, what a
  cross-run diff compares). Masking decides each line alone, so it is 1 by construction;
  Drain's templates depend on what else it saw.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from analyzer.signatures.templates import template_expr

LOGHUB = Path(__file__).resolve().parents[2] / "shared" / "data" / "loghub"


def _lines(directory: Path) -> tuple[list[str], list[str]]:
    (path,) = directory.glob("*_2k.log_structured.csv")
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [r["Content"] for r in rows], [r["EventId"] for r in rows]


def _grouping_accuracy(predicted: Sequence[str], truth: Sequence[str]) -> float:
    groups: dict[str, set[int]] = {}
    truths: dict[str, set[int]] = {}
    for i, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        groups.setdefault(p, set()).add(i)
        truths.setdefault(t, set()).add(i)
    right = sum(len(members) for members in groups.values() if members in truths.values())
    return right / len(truth)


def _mask(lines: list[str]) -> list[str]:
    frame = pl.DataFrame({"m": lines})
    return frame.select(template_expr(pl.col("m"))).to_series().to_list()


def _drain(lines: list[str]) -> list[str]:
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    ids = [miner.add_log_message(line)["cluster_id"] for line in lines]
    # A line's template is its cluster's final template (clusters generalize as lines come).
    final = {c.cluster_id: c.get_template() for c in miner.drain.clusters}
    return [final[i] for i in ids]


def _stability(parse: Callable[[list[str]], list[str]], lines: list[str]) -> float:
    """The share of the first half's lines that get the same template when the half is
    parsed alone as when the whole sample is (one run of a job against a longer one)."""
    half = len(lines) // 2
    alone = parse(lines[:half])
    whole = parse(lines)[:half]
    return sum(a == b for a, b in zip(alone, whole, strict=True)) / half


def measure(loghub: Path, repeat: int) -> list[dict[str, object]]:
    results = []
    for directory in sorted(p for p in loghub.iterdir() if p.is_dir()):
        if not list(directory.glob("*_2k.log_structured.csv")):
            continue
        lines, truth = _lines(directory)
        many = lines * repeat
        row: dict[str, object] = {"data set": directory.name}
        for name, parse in (("masking", _mask), ("drain3", _drain)):
            started = time.perf_counter()
            parse(many)
            seconds = time.perf_counter() - started
            row[f"{name} lines/s"] = round(len(many) / seconds)
            row[f"{name} accuracy"] = round(_grouping_accuracy(parse(lines), truth), 3)
            row[f"{name} stability"] = round(_stability(parse, lines), 3)
        results.append(row)
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.drain", description=__doc__)
    parser.add_argument("--loghub", type=Path, default=LOGHUB)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args(argv)
    results = measure(args.loghub, args.repeat)
    columns = list(results[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in results:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")


if __name__ == "__main__":
    main()
