"""The ``cloud_logging`` input: a Log Router sink JSON-lines object of ``k8s_container`` stderr
entries (formats.md §1.7(a) shape).

Entries carry JobSet pod labels, ``severity: ERROR``, a nanosecond ``timestamp``, a
``receiveTimestamp`` and a ``textPayload`` ending in a newline, from 1,024 hosts (16 slices of
64 workers). Payloads are the TPU workers' lines (:mod:`benchmarks.inputs.tpu`); a Python
traceback is split over one entry per line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from benchmarks.inputs.clock import START_NS, STEP_NS, rfc3339
from benchmarks.inputs.pool import Layout, fill
from benchmarks.inputs.tpu import SLICES, WEIGHTS, WORKERS, build_hosts, build_pool, payload


def _insert_ids(rng: np.random.Generator, count: int) -> pl.Series:
    """Random 16-character ``[0-9a-z]`` insertIds."""
    alphabet = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    data = alphabet[rng.integers(0, len(alphabet), size=(count, 16))].tobytes()
    offsets = np.arange(0, 16 * (count + 1), 16, dtype=np.int32)
    array = pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))
    series = pl.from_arrow(array)
    assert isinstance(series, pl.Series)
    return series


def generate(path: Path, target: int, seed: int) -> None:
    """Write about ``target`` bytes of entries to ``path``."""
    hosts = build_hosts(seed, SLICES * WORKERS)
    pool = build_pool(seed)
    # textPayload is a JSON string: the pool bodies go in escaped (headers need no escaping).
    escaped = pool.body.map_elements(lambda s: json.dumps(s)[1:-1], return_dtype=pl.String)
    text_payload = payload(pool, escaped, hosts)
    index = np.arange(len(hosts.labels))

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        rows = frame.height
        # timestamp is the container runtime's stamp, a little after the program's own;
        # receiveTimestamp is when Cloud Logging got the entry, up to seconds later.
        frame = frame.with_columns(
            iid=_insert_ids(rng, rows),
            ets=pl.col("pts") + pl.Series(rng.integers(20_000, 900_000, size=rows)),
        ).with_columns(
            rts=pl.col("ets") + pl.Series(rng.integers(300_000_000, 3_000_000_000, size=rows))
        )
        return frame.select(
            pl.concat_str(
                [
                    pl.lit('{"insertId":"'),
                    pl.col("iid"),
                    pl.lit('","labels":'),
                    pl.col("host").replace_strict(index, hosts.labels),
                    pl.lit(',"logName":"projects/my-tpu-proj/logs/stderr","receiveTimestamp":"'),
                    rfc3339(pl.col("rts")),
                    pl.lit('","resource":'),
                    pl.col("host").replace_strict(index, hosts.resource),
                    pl.lit(',"severity":"ERROR","textPayload":"'),
                    text_payload,
                    pl.lit('\\n","timestamp":"'),
                    rfc3339(pl.col("ets")),
                    pl.lit('"}\n'),
                ]
            )
        ).to_series()

    # Every host writes about one line per step.
    host_count = SLICES * WORKERS
    unit_ns = STEP_NS // host_count
    layout = Layout(pool, WEIGHTS, hosts=host_count, start_ns=START_NS, unit_ns=unit_ns)
    fill(path, target, seed, layout, render, legacy_tail=True)
