"""The ``text`` input: one TPU container's stderr (``kubectl logs``, formats.md §5.5).

The same kinds of lines as the ``cloud_logging`` payloads (:mod:`benchmarks.inputs.tpu`), from
one host. Its timestamps are compressed (the log spans about 20 hours whatever its size) so
that stamps without a year stay unambiguous.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import numpy as np
import polars as pl

from benchmarks.inputs.clock import START_NS, unit_spacing_ns
from benchmarks.inputs.pool import Layout, fill
from benchmarks.inputs.tpu import WEIGHTS, build_hosts, build_pool, payload

#: About how long a line of this input is.
LINE_BYTES: Final = 110


def generate(path: Path, target: int, seed: int) -> None:
    """Write about ``target`` bytes of stderr to ``path``."""
    hosts = build_hosts(seed, 1)
    pool = build_pool(seed)
    line = pl.concat_str([payload(pool, pool.body, hosts), pl.lit("\n")])

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        return frame.select(line).to_series()

    # absl's pre-initialisation lines: a zero date and seconds since the epoch in the stamp.
    epoch = START_NS / 1e9 - 95.5
    head = (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
        f"I0000 00:00:{epoch:.6f} {hosts.cc_tid[0]:>7} tpu_client.cc:55] Initializing TPU "
        "client with 4 local devices\n"
    ).encode()
    unit_ns = unit_spacing_ns(target, LINE_BYTES)
    layout = Layout(pool, WEIGHTS, hosts=1, start_ns=START_NS, unit_ns=unit_ns)
    fill(path, target, seed, layout, render, head, legacy_tail=True)
