"""The cases and tools the matching benchmark (:mod:`benchmarks.match`) runs on: the case of
a fleet-sized generated bundle (issue 20's 1,024-host case, beside :func:`~benchmarks.bundles.
prepare_case`'s row-count case), the working copy each run matches, and ripgrep."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Final

from benchmarks import say
from benchmarks.bundles import (
    CASE_DIR,
    DEFAULT_SCENARIO,
    FACTS_FILE,
    MESSAGES_FILE,
    RATE,
    SEED,
    CachedCase,
    Plan,
    _generate_and_ingest,
    check_space,
    culprit_version,
    export_messages,
)
from benchmarks.measure import BenchmarkError, generator_digest

#: The issue's second case: a fleet-sized incident, ``--hosts`` hosts for an hour.
DEFAULT_HOSTS: Final = 1024
HOSTS_MINUTES: Final = 60.0
#: Bundle bytes per host and hour at rate 60 (benchmarks/bundles.py), with slack.
_BYTES_PER_HOST_HOUR: Final = 2_800_000


def prepare_hosts_case(cache: Path, hosts: int) -> CachedCase:
    """The case of a ``hosts``-host, 60-minute generated bundle (the default scenario, rate
    60, seed 0) with its exported messages, built when missing (as :func:`prepare_case`)."""
    cache.mkdir(parents=True, exist_ok=True)
    plan = Plan(DEFAULT_SCENARIO, hosts, HOSTS_MINUTES, RATE, SEED)
    root = cache / plan.name(generator_digest(), culprit_version())
    if (root / FACTS_FILE).is_file():
        return CachedCase(root, json.loads((root / FACTS_FILE).read_text()))
    check_space(cache, hosts * _BYTES_PER_HOST_HOUR * 2)
    say(f"building {root.name} (generating and ingesting take minutes)")
    work = root.with_name(root.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    made = _generate_and_ingest(plan, work)
    exported = export_messages(work / CASE_DIR / "rows", work / MESSAGES_FILE)
    if exported["rows"] != made["rows"]:
        raise BenchmarkError(f"exported {exported['rows']:,} messages of {made['rows']:,} rows")
    facts = {
        **plan.fields(),
        "fixtures_sha256": generator_digest(),
        "culprit_version": culprit_version(),
        **made,
        **exported,
        "messages_file_bytes": (work / MESSAGES_FILE).stat().st_size,
    }
    (work / FACTS_FILE).write_text(json.dumps(facts, indent=2) + "\n")
    work.rename(root)
    return CachedCase(root, facts)


def find_rg() -> str | None:
    """The ``rg`` installed beside this interpreter (the ``bench`` extra), else on ``PATH``."""
    beside = Path(sys.executable).with_name("rg")
    return str(beside) if beside.is_file() else shutil.which("rg")


def link_case(cached: Path, out: Path) -> None:
    """A working copy of the case ``cached``: its row files hard-linked (``culprit match`` renames
    its matches file into place, so the cache is never written), the small files copied."""
    out.mkdir(parents=True)
    for path in cached.rglob("*"):
        target = out / path.relative_to(cached)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.parent == cached:
            shutil.copy2(path, target)
        else:
            try:
                os.link(path, target)
            except OSError:
                shutil.copy2(path, target)
