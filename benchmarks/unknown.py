"""The template rules measured with the built-in catalogue switched off: on every generated
multi-host scenario, where the outlier rule ranks the planted culprit host and whether the
first lead is the planted first error (docs/accuracy.md, "Unknown failures").

``python -m benchmarks.unknown [--hosts 16] [--seeds 1,2] [--work DIR]`` prints one line per
attempt and the totals.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer import api
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.scenarios import SCENARIOS
from fixtures.truth import BUNDLE_DIR


@dataclass(frozen=True)
class AttemptScore:
    scenario: str
    seed: int
    attempt: int
    #: The planted culprit host (None when the truth blames the program).
    culprit: str | None
    #: Its rank among the outliers of the verdict (None when not among them).
    rank: int | None
    #: Whether the outlier rank cites rows.
    cited: bool
    first_lead_ok: bool
    leads: int


def options(hosts: int, seed: int) -> Options:
    """The suite's small incidents: 10 minutes at 12 background lines per host and minute."""
    return Options(hosts=hosts, seed=seed, minutes=10.0, rate=12.0)


def score_scenario(name: str, hosts: int, seed: int, work: Path) -> list[AttemptScore]:
    """Generate ``name``, analyze it without the built-in catalogue, score every attempt."""
    root = work / f"{name}-{hosts}-{seed}"
    shutil.rmtree(root, ignore_errors=True)
    truth = generate(name, options(hosts, seed), root / "gen")
    result = api.analyze(
        [root / "gen" / BUNDLE_DIR], root / "out", api.settings(builtin_signatures=False, jobs=1)
    )
    scores = []
    for verdict, expected in zip(result.findings.attempts, truth.attempts, strict=False):
        host = expected.culprit.host if expected.culprit.kind != "program" else None
        ranks = {o.host: o for o in verdict.outliers}
        found = ranks.get(host) if host is not None else None
        first = verdict.leads[0].citation if verdict.leads else None
        scores.append(
            AttemptScore(
                scenario=name,
                seed=seed,
                attempt=expected.index,
                culprit=host,
                rank=None if found is None else found.rank,
                cited=found is not None and bool(found.citations),
                # The truth cites a folded record (a traceback) at its first line.
                first_lead_ok=first is not None
                and first.path == expected.first_error.path
                and expected.first_error.line in (first.line, first.record_line),
                leads=len(verdict.leads),
            )
        )
    return scores


@dataclass(frozen=True)
class Totals:
    attempts: int
    with_culprit: int
    first: int
    top5: int
    first_lead: int

    def share(self, part: int, whole: int) -> float:
        return part / whole if whole else 0.0

    def lines(self) -> list[str]:
        return [
            f"culprit ranked first by spatial-outlier: {self.first}/{self.with_culprit} "
            f"({self.share(self.first, self.with_culprit):.0%})",
            f"culprit in the top 5: {self.top5}/{self.with_culprit} "
            f"({self.share(self.top5, self.with_culprit):.0%})",
            f"first lead = planted first error: {self.first_lead}/{self.attempts} "
            f"({self.share(self.first_lead, self.attempts):.0%})",
        ]


def totals(scores: Sequence[AttemptScore]) -> Totals:
    named = [s for s in scores if s.culprit is not None]
    return Totals(
        attempts=len(scores),
        with_culprit=len(named),
        first=sum(1 for s in named if s.rank == 1 and s.cited),
        top5=sum(1 for s in named if s.rank is not None and s.rank <= 5 and s.cited),
        first_lead=sum(1 for s in scores if s.first_lead_ok),
    )


def run(hosts: int, seeds: Sequence[int], work: Path) -> list[AttemptScore]:
    return [
        score
        for scenario in SCENARIOS
        for seed in seeds
        for score in score_scenario(scenario.name, hosts, seed, work)
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.unknown", description=__doc__)
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        scores = run(args.hosts, seeds, args.work or Path(scratch))
    for s in scores:
        print(
            f"{s.scenario:24} seed {s.seed} attempt {s.attempt}: culprit rank {s.rank} "
            f"first lead {'ok' if s.first_lead_ok else 'MISS'} ({s.leads} leads)"
        )
    for line in totals(scores).lines():
        print(line)


if __name__ == "__main__":
    main()
