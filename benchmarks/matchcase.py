"""The input of the matching benchmark: a generated incident ingested into a case, cached.

``python -m benchmarks.match --rows N`` needs a case of at least ``N`` rows. It is made once
and kept under ``benchmarks/.cache/match/``:

1. :func:`calibrate`: a small bundle of the scenario (:data:`CALIBRATION_HOSTS` hosts,
   :data:`MINUTES` minutes) is generated and ingested to learn how many rows one host gives
   in an hour (its case and bundle are deleted; the figure is cached in a small JSON file
   named like the cases, see below).
2. :func:`plan`: the host count (a multiple of 4, up to the generator's 4,096) and, past that,
   the minutes that give ``N`` rows plus :data:`MARGIN`.
3. :func:`build`: ``python -m fixtures generate SCENARIO -o BUNDLE --hosts H --minutes M
   --rate R --seed S`` and ``culprit ingest BUNDLE/bundle -o CASE --quiet``, then the
   messages are exported once (:func:`export_messages`): one message per line in
   ``messages.txt``, newlines inside a message replaced by a space, for the baselines. The
   bundle is deleted once ingested. Everything is built in ``<name>.partial`` and renamed when
   complete, so an interrupted build is never taken for a cached case.

A case directory's name carries what its bytes depend on: scenario, hosts, minutes, rate,
seed, a digest of the ``fixtures/`` sources (the generator) and the culprit version (the
ingest); ``facts.json`` beside the case keeps its row count, the message bytes and how it was
made. Edits to ``analyzer/`` that change what ingest writes without a version bump are not
noticed: delete ``benchmarks/.cache/match/`` then.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl
import pyarrow.parquet as pq

from benchmarks import MIB
from benchmarks.environment import generator_digest
from benchmarks.measure import BenchmarkError, culprit_command, tree_bytes
from benchmarks.progress import say
from fixtures.options import MAX_HOSTS, MIN_HOSTS
from fixtures.truth import BUNDLE_DIR

SCENARIO: Final = "host-crash-heartbeat"
RATE: Final = 60.0
SEED: Final = 0
MINUTES: Final = 60.0
CALIBRATION_HOSTS: Final = 64
#: Rows asked for beyond the target, as the row count is only about linear in hosts.
MARGIN: Final = 0.01
#: Free space to leave on the cache's disk while building (bundle and case included).
MIN_FREE_BYTES: Final = 20 << 30
#: Bundle bytes per row, to estimate a build's disk use (a generated bundle is ~1 KB a row).
BUNDLE_BYTES_PER_ROW: Final = 1100
MESSAGES_FILE: Final = "messages.txt"
FACTS_FILE: Final = "facts.json"
CASE_DIR: Final = "case"
#: Rows per batch when exporting the messages.
EXPORT_BATCH_ROWS: Final = 262_144


@dataclass(frozen=True)
class Plan:
    """What to generate for a case."""

    scenario: str
    hosts: int
    minutes: float
    rate: float
    seed: int

    def name(self, fixtures_digest: str, version: str) -> str:
        """The cache directory's name: everything the case's bytes depend on."""
        return (
            f"{self.scenario}-{self.hosts}h-{self.minutes:g}m-r{self.rate:g}-seed{self.seed}"
            f"-fx{fixtures_digest}-culprit{version}"
        )


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


def plan(rows: int, rows_per_host_hour: float) -> Plan:
    """Hosts and minutes for at least ``rows`` rows (plus :data:`MARGIN`), given the rows one
    host gives in an hour: :data:`MINUTES` minutes and the smallest multiple of 4 hosts that
    reaches it; past :data:`~fixtures.options.MAX_HOSTS` hosts, more minutes (up to a day);
    below :data:`~fixtures.options.MIN_HOSTS`, fewer (at least 2)."""
    wanted = rows * (1 + MARGIN)
    hosts = math.ceil(wanted / rows_per_host_hour / 4) * 4
    minutes = MINUTES
    if hosts > MAX_HOSTS or hosts < MIN_HOSTS:
        hosts = min(max(hosts, MIN_HOSTS), MAX_HOSTS)
        minutes = math.ceil(MINUTES * wanted / (rows_per_host_hour * hosts) * 10) / 10
        minutes = min(max(minutes, 2.0), 24 * 60.0)
    return Plan(SCENARIO, hosts, minutes, RATE, SEED)


def culprit_version() -> str:
    """The installed culprit version (part of the cache key)."""
    from importlib.metadata import version

    return version("culprit")


def _generate_command(plan: Plan, out: Path) -> list[str]:
    from benchmarks.generate import generate_command
    from fixtures.options import Options

    options = Options(hosts=plan.hosts, seed=plan.seed, minutes=plan.minutes, rate=plan.rate)
    return generate_command(plan.scenario, out, options)


def _run(command: list[str], log: Path) -> float:
    """Run ``command`` (output to ``log``); its wall time. Raises when it fails."""
    started = time.perf_counter()
    with log.open("wb") as sink:
        code = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, check=False)
    if code.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise BenchmarkError(f"{' '.join(command)} exited with {code.returncode}:\n{tail}")
    return time.perf_counter() - started


def _generate_and_ingest(plan: Plan, work: Path) -> dict[str, Any]:
    """Generate ``plan`` into ``work/bundle`` and ingest it into ``work/case``; the bundle is
    deleted afterwards. Times and sizes, for ``facts.json``."""
    bundle = work / "bundle"
    generate_s = _run(_generate_command(plan, bundle), work / "generate.log")
    bundle_bytes = tree_bytes(bundle / BUNDLE_DIR)
    say(f"  generated {bundle_bytes / MIB:,.0f} MiB in {generate_s:.0f} s; ingesting ...")
    ingest = [*culprit_command(), "ingest", str(bundle / BUNDLE_DIR), "-o", str(work / CASE_DIR)]
    ingest_s = _run([*ingest, "--force", "--quiet"], work / "ingest.log")
    shutil.rmtree(bundle)
    meta = json.loads((work / CASE_DIR / "case.json").read_text())
    return {
        "bundle_bytes": bundle_bytes,
        "generate_s": generate_s,
        "ingest_s": ingest_s,
        "counts": meta["counts"],
        "rows": meta["counts"]["rows"],
        "case_bytes": tree_bytes(work / CASE_DIR),
    }


def calibrate(cache: Path, fixtures_digest: str, version: str) -> float:
    """Rows per host and hour of the scenario (cached in ``cache``)."""
    probe = Plan(SCENARIO, CALIBRATION_HOSTS, MINUTES, RATE, SEED)
    path = cache / f"calibration-{probe.name(fixtures_digest, version)}.json"
    if path.is_file():
        return float(json.loads(path.read_text())["rows_per_host_hour"])
    say(f"calibrating: {CALIBRATION_HOSTS} hosts x {MINUTES:g} min of {SCENARIO} ...")
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
    """Write every message of the case's row files to ``out``, one per line (rows in file
    order; newlines inside a message replaced by a space, a null message as an empty line);
    the counts: rows, message bytes (UTF-8, before the replacement), messages that had a
    newline, null messages."""
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


def check_space(directory: Path, rows: int) -> None:
    """Refuse to build when it would leave less than :data:`MIN_FREE_BYTES` free."""
    need = rows * BUNDLE_BYTES_PER_ROW
    free = shutil.disk_usage(directory).free
    if free - need < MIN_FREE_BYTES:
        raise BenchmarkError(
            f"building a {rows:,}-row case needs about {need / (1 << 30):.1f} GiB in "
            f"{directory}: only {free / (1 << 30):.1f} GiB free, and "
            f"{MIN_FREE_BYTES >> 30} GiB must stay free"
        )


def prepare(cache: Path, rows: int) -> CachedCase:
    """A case of at least ``rows`` rows with its exported messages, built when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    digest, version = generator_digest(), culprit_version()
    chosen = plan(rows, calibrate(cache, digest, version))
    root = cache / chosen.name(digest, version)
    if (root / FACTS_FILE).is_file():
        return CachedCase(root, json.loads((root / FACTS_FILE).read_text()))
    check_space(cache, rows)
    say(
        f"building {root.name}: {chosen.hosts:,} hosts x {chosen.minutes:g} min "
        f"(about {rows:,} rows; generating, ingesting and exporting take minutes) ..."
    )
    work = root.with_name(root.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    made = _generate_and_ingest(chosen, work)
    started = time.perf_counter()
    exported = export_messages(work / CASE_DIR / "rows", work / MESSAGES_FILE)
    if exported["rows"] != made["rows"]:
        raise BenchmarkError(f"exported {exported['rows']:,} messages of {made['rows']:,} rows")
    facts = {
        "scenario": chosen.scenario,
        "hosts": chosen.hosts,
        "minutes": chosen.minutes,
        "rate": chosen.rate,
        "seed": chosen.seed,
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
