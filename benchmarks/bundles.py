"""Incident bundles of the fixtures generator, generated once and cached for the benchmarks.

A bundle (``--scenario``, ``--hosts``, ``--minutes``, ``--rate``, ``--seed``) is written by
``python -m fixtures generate`` in a child process and cached under a name carrying what its
bytes depend on (:meth:`Plan.name`): the options, a digest of the scenario generator's sources
and the culprit version. :func:`prepare` keeps ``<name>/bundle/``, the generator's
``<name>/truth.toml`` beside it (never ingested) and ``<name>/facts.json``, built in
``<name>.partial`` and renamed when complete so that an interrupted build is never reused.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl
import pyarrow.parquet as pq

from benchmarks import BENCHMARKS_DIR, MIB, say
from benchmarks.measure import (
    BenchmarkError,
    culprit_command,
    generator_digest,
    run_once,
    tree_bytes,
    tree_files,
)
from fixtures.errors import FixtureError
from fixtures.options import MAX_HOSTS, MIN_HOSTS, Options
from fixtures.scenarios import find
from fixtures.truth import BUNDLE_DIR, Truth, read_truth

DEFAULT_SCENARIO: Final = "host-crash-heartbeat"
DEFAULT_CACHE: Final = BENCHMARKS_DIR / ".cache" / "analyze"
FACTS_FILE: Final = "facts.json"
#: Free space to leave on the cache's disk while building (bundle and case included).
MIN_FREE_BYTES: Final = 20 << 30
#: Bundle bytes one host writes in an hour at rate 60 (~2.5 MB, benchmarks/RESULTS.md
#: "Generation speed"), with some slack: to refuse a build that would fill the disk.
BUNDLE_BYTES_PER_HOST_HOUR: Final = 2_800_000


@dataclass(frozen=True)
class Plan:
    """What to generate: a scenario and the generator's options."""

    scenario: str
    hosts: int
    minutes: float
    rate: float
    seed: int

    @classmethod
    def of(cls, scenario: str, options: Options) -> Plan:
        return cls(scenario, options.hosts, options.minutes, options.rate, options.seed)

    @property
    def stem(self) -> str:
        """What the plan asks for, as a directory name."""
        return f"{self.scenario}-{self.hosts}h-{self.minutes:g}m-r{self.rate:g}-seed{self.seed}"

    def name(self, fixtures_digest: str, version: str) -> str:
        """The cache directory's name: everything the bytes depend on."""
        return f"{self.stem}-fx{fixtures_digest}-culprit{version}"

    def fields(self) -> dict[str, Any]:
        """What a results file records of the bundle's plan."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class CachedBundle:
    """A generated bundle in the cache: ``root/bundle``, ``root/truth.toml``, the facts."""

    root: Path
    facts: dict[str, Any]

    @property
    def bundle(self) -> Path:
        return self.root / BUNDLE_DIR

    def truth(self) -> Truth:
        return read_truth(self.root)

    def fields(self) -> dict[str, Any]:
        """What a results file records about the bundle it measured."""
        keys = ("scenario", "hosts", "minutes", "rate", "seed")
        return {key: self.facts[key] for key in keys} | {
            "bundle": {**self.facts, "name": self.root.name}
        }


def culprit_version() -> str:
    """The installed culprit version (part of the cache key: it decides what ingest writes)."""
    from importlib.metadata import version

    return version("culprit")


def generate_command(plan: Plan, out: Path) -> list[str]:
    """The ``python -m fixtures generate`` command writing ``plan`` into ``out``."""
    return [
        *(sys.executable, "-m", "fixtures", "generate", plan.scenario, "-o", str(out)),
        *("--hosts", str(plan.hosts), "--seed", str(plan.seed)),
        *("--minutes", f"{plan.minutes:g}", "--rate", f"{plan.rate:g}", "--force"),
    ]


def check_space(directory: Path, need: int) -> None:
    """Refuse to build ``need`` bytes when it would leave less than :data:`MIN_FREE_BYTES`."""
    free = shutil.disk_usage(directory).free
    if free - need < MIN_FREE_BYTES:
        raise BenchmarkError(
            f"building needs about {need / (1 << 30):.1f} GiB in {directory}: only "
            f"{free / (1 << 30):.1f} GiB free, and {MIN_FREE_BYTES >> 30} GiB must stay free"
        )


def generate(plan: Plan, out: Path) -> dict[str, Any]:
    """Generate ``plan`` into ``out`` in a child process timed like a measurement; what was
    made (files, bytes, seconds, peak RSS)."""
    with tempfile.TemporaryDirectory(prefix="generate-", dir=out.parent) as logs:
        try:
            run = run_once(generate_command(plan, out), Path(logs) / "generate.log")
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
    files = tree_files(out / BUNDLE_DIR)
    return {
        "bytes": sum(path.stat().st_size for path in files),
        "files": len(files),
        "generate_s": run.seconds,
        "generate_peak_rss_mib": run.peak_rss_mib,
    }


def prepare(cache: Path, plan: Plan) -> CachedBundle:
    """The bundle of ``plan``, generated into the cache when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    digest, version = generator_digest(), culprit_version()
    root = cache / plan.name(digest, version)
    if (root / FACTS_FILE).is_file():
        return CachedBundle(root, json.loads((root / FACTS_FILE).read_text()))
    hours, scale = plan.minutes / 60, max(plan.rate / 60, 1.0)
    check_space(cache, int(BUNDLE_BYTES_PER_HOST_HOUR * plan.hosts * hours * scale))
    say(f"generating {root.name} ...")
    work = root.with_name(root.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    made = generate(plan, work)
    facts = {**plan.fields(), "fixtures_sha256": digest, "culprit_version": version}
    facts |= {"bytes": made["bytes"], "files": made["files"]}
    facts |= {"generate_s": made["generate_s"]}
    facts |= {"generate_peak_rss_mib": made["generate_peak_rss_mib"]}
    (work / FACTS_FILE).write_text(json.dumps(facts, indent=2) + "\n")
    work.rename(root)
    say(f"  {made['bytes'] / MIB:,.1f} MiB in {made['files']:,} files, {made['generate_s']:.1f} s")
    return CachedBundle(root, facts)


def add_bundle_options(
    parser: argparse.ArgumentParser, *, hosts: bool = True, minutes: bool = True, cache: bool = True
) -> None:
    """The options naming a bundle (``--hosts`` and ``--minutes`` left out where the sizes are
    given otherwise) and where bundles are cached."""
    if hosts:
        parser.add_argument("--hosts", type=int, default=1024, help="hosts of the incident")
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help="fixtures scenario")
    if minutes:
        parser.add_argument("--minutes", type=float, default=60.0, help="length of the incident")
    parser.add_argument("--rate", type=float, default=60.0, help="background lines/host/minute")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    if cache:
        parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="bundle cache")


def plans(
    parser: argparse.ArgumentParser, args: argparse.Namespace, hosts: list[tuple[int, float]]
) -> list[Plan]:
    """The plans of ``(hosts, minutes)`` pairs with the parsed bundle options; a bad scenario
    or size is a usage error."""
    try:
        find(args.scenario)
        return [
            Plan.of(args.scenario, Options(hosts=h, seed=args.seed, minutes=m, rate=args.rate))
            for h, m in hosts
        ]
    except FixtureError as error:
        parser.error(str(error))


# -- the matching benchmark's case ---------------------------------------------------------------
#
# :func:`calibrate` learns the rows one host gives in an hour from a small bundle (cached),
# :func:`case_plan` picks the hosts (a multiple of 4) and, past 4,096, the minutes that give the
# rows asked for plus :data:`MARGIN`, and :func:`prepare_case` generates the bundle, ingests it
# into a case under ``benchmarks/.cache/match/``, deletes the bundle and exports the messages
# once for the baselines (one per line, newlines inside a message replaced by a space). Edits
# to ``analyzer/`` that change what ingest writes without a version bump are not noticed:
# delete ``benchmarks/.cache/match/`` then.

#: The matching case's incident: the default scenario at rate 60, seed 0, 60 minutes (more
#: when 4,096 hosts are not enough); its rows per host and hour are calibrated on 64 hosts.
RATE: Final = 60.0
SEED: Final = 0
MINUTES: Final = 60.0
CALIBRATION_HOSTS: Final = 64
#: Rows asked for beyond the target, as the row count is only about linear in hosts.
MARGIN: Final = 0.01
#: Bundle bytes per row, to estimate a build's disk use (a generated bundle is ~1 KB a row).
BUNDLE_BYTES_PER_ROW: Final = 1100
MESSAGES_FILE: Final = "messages.txt"
CASE_DIR: Final = "case"
#: Rows per batch when exporting the messages.
EXPORT_BATCH_ROWS: Final = 262_144


@dataclass(frozen=True)
class CachedCase:
    """A built case: its directory, the exported messages and the facts."""

    root: Path
    facts: dict[str, Any]

    @property
    def case(self) -> Path:
        return self.root / CASE_DIR

    @property
    def messages(self) -> Path:
        return self.root / MESSAGES_FILE

    @property
    def rows(self) -> int:
        return int(self.facts["rows"])


def parse_rows(text: str) -> int:
    """A row count as given to ``--rows``: ``10M``, ``500k``, ``1,000,000``, ``2.5M``."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}.get(cleaned[-1:].lower(), 1)
    number = cleaned[:-1] if scale != 1 else cleaned
    try:
        value = float(number) * scale
    except ValueError:
        raise ValueError(f"not a row count: {text!r}") from None
    if value < 1 or not math.isfinite(value):
        raise ValueError(f"not a row count: {text!r}")
    return round(value)


def case_plan(rows: int, rows_per_host_hour: float) -> Plan:
    """The smallest multiple of 4 hosts giving ``rows`` rows (plus :data:`MARGIN`) in
    :data:`MINUTES` minutes; past the generator's limits on hosts, other minutes instead."""
    wanted = rows * (1 + MARGIN)
    hosts = math.ceil(wanted / rows_per_host_hour / 4) * 4
    minutes = MINUTES
    if hosts > MAX_HOSTS or hosts < MIN_HOSTS:
        hosts = min(max(hosts, MIN_HOSTS), MAX_HOSTS)
        minutes = math.ceil(MINUTES * wanted / (rows_per_host_hour * hosts) * 10) / 10
        minutes = min(max(minutes, 2.0), 24 * 60.0)
    return Plan(DEFAULT_SCENARIO, hosts, minutes, RATE, SEED)


def _generate_and_ingest(plan: Plan, work: Path) -> dict[str, Any]:
    """Generate ``plan`` into ``work/bundle`` and ingest it into ``work/case``; the bundle is
    deleted afterwards. Times and sizes, for ``facts.json``."""
    bundle = work / "bundle"
    made = generate(plan, bundle)
    say(f"  generated {made['bytes'] / MIB:,.0f} MiB in {made['generate_s']:.0f} s; ingesting ...")
    ingest = [
        *culprit_command(),
        "ingest",
        str(bundle / BUNDLE_DIR),
        "-o",
        str(work / CASE_DIR),
    ]
    ingest_s = run_once([*ingest, "--force", "--quiet"], work / "ingest.log").seconds
    shutil.rmtree(bundle)
    meta = json.loads((work / CASE_DIR / "case.json").read_text())
    return {
        "bundle_bytes": made["bytes"],
        "generate_s": made["generate_s"],
        "ingest_s": ingest_s,
        "counts": meta["counts"],
        "rows": meta["counts"]["rows"],
        "case_bytes": tree_bytes(work / CASE_DIR),
    }


def calibrate(cache: Path, fixtures_digest: str, version: str) -> float:
    """Rows per host and hour of the scenario (cached in ``cache``)."""
    probe = Plan(DEFAULT_SCENARIO, CALIBRATION_HOSTS, MINUTES, RATE, SEED)
    path = cache / f"calibration-{probe.name(fixtures_digest, version)}.json"
    if path.is_file():
        return float(json.loads(path.read_text())["rows_per_host_hour"])
    say(f"calibrating: {CALIBRATION_HOSTS} hosts x {MINUTES:g} min of {DEFAULT_SCENARIO} ...")
    work = cache / f"calibration-{fixtures_digest}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        made = _generate_and_ingest(probe, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_host_hour = float(made["rows"]) / CALIBRATION_HOSTS / (MINUTES / 60)
    path.write_text(json.dumps({**made, "rows_per_host_hour": per_host_hour}, indent=2) + "\n")
    say(f"  {made['rows']:,} rows: {per_host_hour:,.1f} rows per host and hour")
    return per_host_hour


def export_messages(rows_dir: Path, out: Path) -> dict[str, int]:
    """Every message of the case's row files, one per line in file order (newlines inside a
    message made spaces, a null message empty), to ``out``; counts of rows and bytes."""
    rows = message_bytes = multiline = nulls = 0
    with out.open("wb") as sink:
        for path in sorted(rows_dir.glob("*.parquet")):
            for batch in pq.ParquetFile(path).iter_batches(EXPORT_BATCH_ROWS, columns=["message"]):
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                messages = frame["message"]
                rows += len(messages)
                nulls += messages.null_count()
                message_bytes += int(messages.str.len_bytes().sum() or 0)
                multiline += int(messages.str.contains("\n", literal=True).sum() or 0)
                flat = messages.fill_null("").str.replace_all("\n", " ", literal=True)
                sink.write(("\n".join(flat.to_list()) + "\n").encode("utf-8"))
    return {
        "rows": rows,
        "message_bytes": message_bytes,
        "multiline_messages": multiline,
        "null_messages": nulls,
    }


def prepare_case(cache: Path, rows: int) -> CachedCase:
    """A case of at least ``rows`` rows with its exported messages, built when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    digest, version = generator_digest(), culprit_version()
    chosen = case_plan(rows, calibrate(cache, digest, version))
    root = cache / chosen.name(digest, version)
    if (root / FACTS_FILE).is_file():
        return CachedCase(root, json.loads((root / FACTS_FILE).read_text()))
    check_space(cache, rows * BUNDLE_BYTES_PER_ROW)
    say(f"building {root.name} (about {rows:,} rows: generating and ingesting take minutes)")
    work = root.with_name(root.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    made = _generate_and_ingest(chosen, work)
    started = time.perf_counter()
    exported = export_messages(work / CASE_DIR / "rows", work / MESSAGES_FILE)
    if exported["rows"] != made["rows"]:
        raise BenchmarkError(f"exported {exported['rows']:,} messages of {made['rows']:,} rows")
    facts = {
        **chosen.fields(),
        "fixtures_sha256": digest,
        "culprit_version": version,
        "python": sys.version.split()[0],
        **made,
        **exported,
        "export_s": time.perf_counter() - started,
        "messages_file_bytes": (work / MESSAGES_FILE).stat().st_size,
    }
    (work / FACTS_FILE).write_text(json.dumps(facts, indent=2) + "\n")
    work.rename(root)
    say(
        f"  {facts['rows']:,} rows, {facts['message_bytes'] / MIB:,.0f} MiB of messages; "
        f"case {facts['case_bytes'] / MIB:,.0f} MiB (bundle deleted)"
    )
    if facts["rows"] < rows:
        say(f"  warning: {facts['rows']:,} rows, fewer than the {rows:,} asked for")
    return CachedCase(root, facts)


def sample_lines(case: CachedCase, count: int) -> Path:
    """A file of ``count`` messages spread evenly over the exported messages (every k-th
    line from the first, k = rows // count), cached beside them."""
    count = min(count, case.rows)
    path = case.root / f"sample-{count}.txt"
    if path.is_file():
        return path
    step = max(1, case.rows // count)
    taken = 0
    partial = path.with_suffix(".partial")
    with case.messages.open("rb") as source, partial.open("wb") as sink:
        for index, line in enumerate(source):
            if index % step == 0:
                sink.write(line)
                taken += 1
                if taken == count:
                    break
    partial.rename(path)
    return path
