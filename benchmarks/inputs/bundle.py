"""The ``bundle`` input: a whole incident bundle written by the fixtures generator.

A directory, as ``python -m fixtures generate host-crash-heartbeat`` writes it into
``OUT/bundle/``: the Cloud Logging GCS sink's JSON-lines shards (``gcs/stderr/…``,
``gcs/stdout/…``) of every TPU worker container, one ``journal.log`` per node
(``nodes/<node>/``) and the ``gcloud/`` exports, for a job whose host dies of a TPU hardware
error and whose other workers then time out their heartbeat. ``culprit ingest DIR`` reads it
with several readers at once, as it would read a real incident's logs.

The generator's knobs are hosts and minutes; the size follows them about linearly (at the
default rate of 60 background lines per worker and minute, about 2.5 MB per host and hour).
To reach about ``target`` bytes, :func:`generate` first writes a small calibration bundle of
:data:`CALIBRATION_HOSTS` hosts and :data:`MINUTES` minutes (then deletes it), takes the host
count whose bundle of :data:`MINUTES` minutes comes nearest (a multiple of 4, 8 to 4,096), and
scales the minutes so that host count lands on ``target``. Both steps are deterministic, so a
seed and a version of ``fixtures/`` give the same bytes; the bundle's ``truth.toml`` (scenario,
hosts, minutes, rate, seed and the expected verdict) is kept beside the directory, as
``<name>.truth.toml``, not inside it: ingesting must not read the answer.

The bytes depend on ``fixtures/``, which changes independently of this module, so the cached
bundle's name also carries a digest of the ``fixtures/`` sources (:func:`cache_path`): an edit
there means a new bundle.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

from benchmarks.environment import source_digest
from benchmarks.measure import tree_bytes
from fixtures.options import MAX_HOSTS, MIN_HOSTS, Options
from fixtures.truth import BUNDLE_DIR, TRUTH_FILE

SCENARIO: Final = "host-crash-heartbeat"
#: The incident's length the host count is chosen at, and the background rate.
MINUTES: Final = 60.0
RATE: Final = 60.0
CALIBRATION_HOSTS: Final = MIN_HOSTS
#: The generator's limits on ``--minutes``.
MIN_MINUTES: Final = 2.0
MAX_MINUTES: Final = 24 * 60.0


def fixtures_digest() -> str:
    """A short digest of the ``fixtures/`` sources (the generator of the bytes)."""
    return source_digest("fixtures")[:12]


def cache_path(stem: str, seed: int) -> Path:
    """Where the bundle directory goes in the cache: its stem and the ``fixtures/`` digest."""
    return Path(f"{stem}-fx{fixtures_digest()}")


def truth_path(path: Path) -> Path:
    """Where the ``truth.toml`` of the bundle at ``path`` is kept: beside it."""
    return path.with_name(f"{path.name}.{TRUTH_FILE}")


def plan(target: int, bytes_per_host: float) -> tuple[int, float]:
    """Hosts and minutes for about ``target`` bytes, given the bytes one host writes in
    :data:`MINUTES` minutes.

    The host count is the multiple of 4 nearest ``target / bytes_per_host`` (within the
    generator's limits); the minutes then scale :data:`MINUTES` by what is left over (within
    2 to 1,440, rounded to 0.01), so small targets get a short incident of 8 hosts.
    """
    hosts = round(target / bytes_per_host / 4) * 4
    hosts = min(max(hosts, MIN_HOSTS), MAX_HOSTS)
    minutes = MINUTES * target / (bytes_per_host * hosts)
    return hosts, round(min(max(minutes, MIN_MINUTES), MAX_MINUTES), 2)


def _generate_into(out: Path, hosts: int, minutes: float, seed: int) -> int:
    """Generate the scenario into ``out`` (replacing it); the bundle's size in bytes."""
    # Imported here, not with the module: the other inputs (and the report, which lists every
    # input) do not need the scenarios, writers and texts the generator pulls in.
    from fixtures.generate import generate as generate_bundle

    options = Options(hosts=hosts, seed=seed, minutes=minutes, rate=RATE)
    generate_bundle(SCENARIO, options, out, force=True)
    return tree_bytes(out / BUNDLE_DIR)


def generate(path: Path, target: int, seed: int) -> None:
    """Write a bundle directory of about ``target`` bytes to ``path`` (its ``truth.toml``
    beside it, see :func:`truth_path`).

    It is generated in ``<path>.partial`` and renamed into place when complete, so an
    interrupted run leaves no directory that a later run would take for a cached input.
    """
    work = path.with_name(f"{path.name}.partial")
    shutil.rmtree(work, ignore_errors=True)
    try:
        calibration = _generate_into(work, CALIBRATION_HOSTS, MINUTES, seed)
        hosts, minutes = plan(target, calibration / CALIBRATION_HOSTS)
        _generate_into(work, hosts, minutes, seed)
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
        (work / BUNDLE_DIR).rename(path)
        (work / TRUTH_FILE).replace(truth_path(path))
    finally:
        shutil.rmtree(work, ignore_errors=True)
