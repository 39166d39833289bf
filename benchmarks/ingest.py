"""Ingest throughput benchmark: ``python -m benchmarks.ingest [--size-mb 1024] [--runs 3]``.

Four synthetic inputs of about ``--size-mb`` MiB each (``--inputs`` picks some) are generated
once (deterministically from ``--seed``) and cached under ``benchmarks/.cache/``, each under a
name carrying its size, seed and generator version:

* ``cloud_logging``: a Log Router sink JSON-lines object of ``k8s_container`` stderr entries
  (formats.md §1.7(a) shape: JobSet pod labels, ``severity: ERROR``, nanosecond ``timestamp``,
  ``receiveTimestamp``, ``textPayload`` ending in a newline) from 1,024 hosts (16 slices of 64
  workers). Payloads are mostly ``train.py:211] completed step: N, seconds: X`` chatter, with
  other absl / TF tsl / Python logging lines, some warnings and errors, and a few Python
  tracebacks split over one entry per line.
* ``text``: one container's stderr (``kubectl logs``, formats.md §5.5) made of the same kinds of
  lines; its timestamps are compressed (a 1 GiB log spans about a day) so that stamps without a
  year stay unambiguous.
* ``kubelet``: ``journalctl -o short-precise`` text of one GKE TPU node (formats.md §2.3,
  §2.6), read by the kubelet reader: mostly routine kubelet klog chatter (SyncLoop, PLEG
  events, probes, status patches, volume mounts, pod startup latency), some containerd
  (logrus), kernel and node-problem-detector lines, a few errors (``pod_workers``
  CrashLoopBackOff, ContainerStatus NotFound, node status updates, TPU admission) and rare
  sequences (eviction, cgroup OOM kill, a liveness probe with a multi-line ``output=<``
  value, node shutdown). About 20 hours of journal, ending 4 hours before the TPU inputs
  start.
* ``modelarts``: one ModelArts worker log, ``modelarts-job-<uuid>-worker-0.log`` in a
  directory of its own (the reader needs that name), of an 8-NPU node running ranks 0-7 of a
  32-rank PyTorch job (formats.md §3.4, §3.5): mostly per-step ``[rankN]: … - train - INFO -
  step N | loss …`` prints, then CANN plog lines (HCCL, RUNTIME, GE, ASCENDCL; ``[TRACE]``
  status lines), ``[ModelArts Service Log]`` / ``[Modelarts Service Log]`` platform lines,
  logrus ``time="…+08:00" … Platform=ModelArts-Service`` upload lines, Python warnings and
  errors, torch_npu ``ERR02200`` / ``ERR00100`` lines, and rare blocks: ``EI0002``
  notify-wait timeouts with TAB-indented continuation lines (bare or behind ``[rankN]:``),
  ``EE9999`` inner errors, Python tracebacks, a process restart. Zone-less stamps are in
  UTC+8 container time; one step per 2.4 s and rank, so 1 GiB spans about 19 days.

Lines are drawn from a pool of a few thousand distinct lines and rendered in blocks with polars
(one ``concat_str`` per block, written straight from the Arrow buffer), so generating a GiB takes
seconds, not minutes.

Each input is then ingested ``--runs`` times by ``culprit ingest FILE -o CASE --force --quiet``
in a child process. Wall time is measured by this process around the child (``perf_counter``,
so it includes interpreter start-up and imports). Peak RSS and user/system CPU come from a
tiny Python launcher that starts ``culprit`` and collects it with ``os.wait4``: the kernel's
``rusage`` of exactly that child, as ``/usr/bin/time -v`` reports it, unpolluted by earlier
runs (``RUSAGE_CHILDREN`` keeps a high-water mark over all of them) or by this process's own
memory (on Linux a child's peak RSS is seeded with its parent's at fork and survives ``exec``,
which is why the launcher, a fresh ~10 MiB process, sits in between). The case directory is
deleted before every run, outside the timed region. The input is read from the page cache (it
was just generated or read by the previous run); the numbers are warm-cache numbers.

Results are printed and written to ``benchmarks/results/<YYYY-MM-DD>-<hostname>.json``
(``-2``, ``-3`` … when a run of that day and host is already recorded). The section between
the ``<!-- ingest:begin -->`` and ``<!-- ingest:end -->`` markers of ``benchmarks/RESULTS.md``
is then rebuilt from all recorded runs: per input, its latest result, with the date and
commit of the run it came from, so a run of some inputs keeps the others' rows.
``--no-record`` skips both, for quick checks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform
import random
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

HERE: Final = Path(__file__).resolve().parent
REPO: Final = HERE.parent
RESULTS_MD: Final = HERE / "RESULTS.md"
BEGIN: Final = "<!-- ingest:begin -->"
END: Final = "<!-- ingest:end -->"
MIB: Final = 1 << 20
#: Peak RSS allowed while ingesting a 2 GB Cloud Logging JSON-lines export.
RSS_BUDGET_MIB: Final = 1536
#: Per input: bump when its generated bytes change, so a stale cached input is not reused.
GENERATOR_VERSIONS: Final = {"cloud_logging": 1, "text": 1, "kubelet": 1, "modelarts": 1}
INPUTS: Final = tuple(GENERATOR_VERSIONS)

# Line families (how the header in front of a pool body is rendered).
ABSL_PY: Final = 0  # I1129 18:35:15.123456 140231558416192 train.py:211] msg
ABSL_CC: Final = 1  # E1129 18:35:15.123456    1234 coordination_service_agent.cc:332] msg
TSL: Final = 2  # 2026-11-29 18:35:15.101020: E external/xla/...cc:1170] msg
PYLOG: Final = 3  # WARNING:absl:msg (the body carries its own prefix)
RAW: Final = 4  # traceback lines, no prefix

# Unit categories; a unit is one line, or several consecutive lines (a traceback).
CHATTER: Final = 0
INFO: Final = 1
WARNING: Final = 2
ERROR: Final = 3
TRACEBACK: Final = 4
WEIGHTS: Final = np.array([0.905, 0.066, 0.023, 0.0058, 0.0002])

START: Final = dt.datetime(2026, 11, 29, 17, 40, tzinfo=dt.UTC)
START_NS: Final = int(START.timestamp()) * 1_000_000_000
FIRST_STEP: Final = 1000
STEP_NS: Final = 2_400_000_000
SLICES: Final = 16
WORKERS: Final = 64
BLOCK_UNITS: Final = 200_000

IntArray = npt.NDArray[np.int64]


# -- the line pool ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    """Distinct lines and the units (one or more consecutive lines) they form.

    A line is ``lead`` + a stamp rendered per row (its kind given by ``family``) + ``body``.
    For the absl/tsl families of the first two inputs ``lead`` is only the level letter and
    the renderer builds the header around it. Line 0 is the per-step chatter, whose body is
    rendered per row (``completed step`` in the TPU inputs, ``step N | loss`` in modelarts).
    """

    family: npt.NDArray[np.int8]
    lead: pl.Series
    body: pl.Series
    unit_start: IntArray
    unit_len: IntArray
    flat: IntArray
    units_by_category: list[IntArray]


Template = tuple[int, str, Callable[[random.Random], str]]
#: One pool line: family (stamp kind), lead, body.
Line = tuple[int, str, str]


def _hex(r: random.Random, digits: int) -> str:
    return f"{r.getrandbits(4 * digits):0{digits}x}"


def _step(r: random.Random) -> int:
    return FIRST_STEP + r.randrange(2000)


_INFO: Final[list[Template]] = [
    (
        ABSL_PY,
        "I",
        lambda r: (
            f"checkpoint_manager.py:1530] [process={r.randrange(1024)}] Saving checkpoint "
            f"for step {_step(r) // 100 * 100}."
        ),
    ),
    (
        ABSL_PY,
        "I",
        lambda r: (
            f"train.py:198] eval at step {_step(r)}: loss={r.uniform(1.8, 2.6):.4f} "
            f"accuracy={r.uniform(0.4, 0.6):.4f}"
        ),
    ),
    (
        ABSL_PY,
        "I",
        lambda r: (
            f"data_loader.py:142] Prefetched {r.randrange(2, 16)} batches from "
            f"gs://llm-data/shards/train-{r.randrange(4096):05d}-of-04096.array_record"
        ),
    ),
    (
        ABSL_CC,
        "I",
        lambda r: (
            "tpu_compilation_cache_interface.cc:442] TPU host compilation cache hit: "
            f"key {_hex(r, 16)}"
        ),
    ),
    (
        TSL,
        "I",
        lambda r: (
            f"external/xla/xla/service/service.cc:163] XLA service 0x{_hex(r, 12)} "
            "initialized for platform TPU (this does not guarantee that XLA will be used). Devices:"
        ),
    ),
    (
        TSL,
        "I",
        lambda r: (
            f"external/xla/xla/pjrt/pjrt_c_api_client.cc:{r.randrange(100, 200)}] "
            f"PjRtCApiClient created for process {r.randrange(1024)}."
        ),
    ),
    (
        PYLOG,
        "",
        lambda r: (
            "INFO:orbax.checkpoint.async_checkpointer:Finished committing to storage "
            f"layer by process: {r.randrange(1024)}"
        ),
    ),
    (
        PYLOG,
        "",
        lambda r: (
            f"INFO:absl:[thread=MainThread] step {_step(r)}: throughput "
            f"{r.uniform(380, 420):.1f} TFLOP/s/device"
        ),
    ),
]

_WARNING: Final[list[Template]] = [
    (
        ABSL_PY,
        "W",
        lambda r: (
            f"train.py:305] Step time {r.uniform(2.6, 9.0):.3f}s exceeds the running "
            f"median by {r.randrange(10, 300)}%"
        ),
    ),
    (
        TSL,
        "W",
        lambda r: (
            "external/xla/xla/service/hlo_rematerialization.cc:3005] Can't reduce memory "
            f"use below {r.uniform(8, 12):.2f}GiB (11811160064 bytes) by rematerialization; "
            f"only reduced to {r.uniform(12, 15):.2f}GiB, down from "
            f"{r.uniform(15, 18):.2f}GiB originally"
        ),
    ),
    (
        PYLOG,
        "",
        lambda r: (
            f"WARNING:absl:Tensorstore: retrying write of chunk {r.randrange(100000)} "
            "after DEADLINE_EXCEEDED"
        ),
    ),
    (
        ABSL_CC,
        "W",
        lambda r: (
            f"tpu_runtime_metrics.cc:{r.randrange(100, 900)}] HBM usage "
            f"{r.uniform(95, 99.9):.1f}% on chip {r.randrange(4)} above the warning threshold"
        ),
    ),
    (
        PYLOG,
        "",
        lambda r: (
            f"WARNING:root:Input pipeline stalled for {r.uniform(1, 30):.2f}s waiting for "
            f"batch {r.randrange(100000)}"
        ),
    ),
]


def _heartbeat(task: int) -> str:
    return (
        "external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:1170] "
        f"/job:jax_worker/replica:0/task:{task} has been set to ERROR in coordination service: "
        f"UNAVAILABLE: Task /job:jax_worker/replica:0/task:{task} heartbeat timeout. This "
        "indicates that the remote task has failed, got preempted, or crashed unexpectedly. "
        "Check the task logs for an earlier error to debug further."
    )


_ERROR: Final[list[Template]] = [
    (
        ABSL_CC,
        "E",
        lambda r: (
            "coordination_service_agent.cc:332] Polled an error from coordination service "
            "(this can be an error from this or another task)."
        ),
    ),
    (
        TSL,
        "E",
        lambda r: _heartbeat(r.randrange(1024)),
    ),
    (
        ABSL_PY,
        "E",
        lambda r: f"train.py:260] Non-finite loss at step {_step(r)}; skipping batch",
    ),
    (
        PYLOG,
        "",
        lambda r: (
            f"ERROR:root:Failed to write metrics for step {_step(r)}: DeadlineExceeded: "
            "504 Deadline Exceeded"
        ),
    ),
]

_EXCEPTIONS: Final = [
    "jaxlib._jax.XlaRuntimeError: UNAVAILABLE: Failed to send RPC to coordination service. "
    "Either the leader task was preempted/died/restarted unexpectedly or this task is "
    "experiencing network issues.",
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. "
    "Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm.",
    "RuntimeError: Unable to initialize backend 'tpu': FAILED_PRECONDITION: TPU initialization "
    "failed: open(/dev/vfio/0): Device or resource busy",
    "ValueError: Incompatible shapes for broadcasting: (8, 2048) and (8, 4096)",
]


def _traceback(r: random.Random) -> list[Line]:
    """A Python traceback, sometimes announced by an absl-py error line."""
    lines: list[Line] = []
    if r.random() < 0.5:
        lines.append((ABSL_PY, "E", f"train.py:262] Step {_step(r)} failed; re-raising"))
    lines += [
        (RAW, "", "Traceback (most recent call last):"),
        (RAW, "", '  File "/app/train.py", line 240, in <module>'),
        (RAW, "", "    main()"),
        (RAW, "", '  File "/app/train.py", line 231, in main'),
        (RAW, "", "    state, metrics = p_train_step(state, batch)"),
    ]
    for _ in range(r.randrange(0, 4)):
        lines += [
            (
                RAW,
                "",
                '  File "/usr/local/lib/python3.11/site-packages/jax/_src/traceback_util.py", '
                f"line {r.randrange(150, 200)}, in reraise_with_filtered_traceback",
            ),
            (RAW, "", "    return fun(*args, **kwargs)"),
        ]
    lines.append((RAW, "", r.choice(_EXCEPTIONS)))
    return lines


def make_pool(units: Sequence[tuple[int, Sequence[Line]]], categories: int) -> Pool:
    """A pool of ``(category, lines)`` units; each unit's lines are consecutive pool lines."""
    lines = [line for _, members in units for line in members]
    unit_len = np.array([len(members) for _, members in units], dtype=np.int64)
    category = np.array([category for category, _ in units], dtype=np.int64)
    return Pool(
        family=np.array([family for family, _, _ in lines], dtype=np.int8),
        lead=pl.Series("lead", [lead for _, lead, _ in lines], dtype=pl.String),
        body=pl.Series("body", [body for _, _, body in lines], dtype=pl.String),
        unit_start=np.concatenate([[0], np.cumsum(unit_len)[:-1]]).astype(np.int64),
        unit_len=unit_len,
        flat=np.arange(len(lines), dtype=np.int64),
        units_by_category=[
            np.flatnonzero(category == index).astype(np.int64) for index in range(categories)
        ],
    )


def build_pool(seed: int) -> Pool:
    """A few thousand distinct lines, grouped into units per category."""
    r = random.Random(f"culprit-bench-pool-{seed}")
    units: list[tuple[int, Sequence[Line]]] = [(CHATTER, [(ABSL_PY, "I", "")])]
    for category, templates, count in (
        (INFO, _INFO, 1600),
        (WARNING, _WARNING, 800),
        (ERROR, _ERROR, 300),
    ):
        for _ in range(count):
            family, level, render = r.choice(templates)
            units.append((category, [(family, level, render(r))]))
    for _ in range(60):
        units.append((TRACEBACK, _traceback(r)))
    return make_pool(units, len(WEIGHTS))


# -- blocks of rows --------------------------------------------------------------------------


def _block(
    pool: Pool,
    rng: np.random.Generator,
    first_unit: int,
    unit_ns: int,
    hosts: int,
    weights: npt.NDArray[np.float64] = WEIGHTS,
    start_ns: int = START_NS,
) -> pl.DataFrame:
    """``BLOCK_UNITS`` units expanded to one row per line, in time order.

    Units are drawn by category (``weights``), then uniformly within it; unit ``k`` of the
    input is stamped somewhere in ``[start_ns + k * unit_ns, start_ns + (k + 1) * unit_ns)``.
    ``host`` is a random number below ``hosts`` (a host, or a rank) per unit.
    """
    n = BLOCK_UNITS
    category = rng.choice(len(weights), size=n, p=weights)
    unit = np.zeros(n, dtype=np.int64)
    for index, members in enumerate(pool.units_by_category):
        mask = category == index
        unit[mask] = members[rng.integers(0, len(members), size=int(mask.sum()))]
    host = rng.integers(0, hosts, size=n)
    unit_ts = start_ns + (first_unit + np.arange(n, dtype=np.int64)) * unit_ns
    unit_ts += rng.integers(0, unit_ns, size=n)

    lengths = pool.unit_len[unit]
    of_row = np.repeat(np.arange(n, dtype=np.int64), lengths)
    firsts = np.cumsum(lengths) - lengths
    within = np.arange(of_row.size, dtype=np.int64) - np.repeat(firsts, lengths)
    line = pool.flat[pool.unit_start[unit][of_row] + within]
    payload_ts = (unit_ts[of_row] + within * 7_000) // 1000 * 1000
    return pl.DataFrame(
        {
            "line": line,
            "family": pool.family[line],
            "host": host[of_row],
            "pts": payload_ts,
            "step": FIRST_STEP + (payload_ts - START_NS) // STEP_NS,
            "millis": rng.integers(2300, 2500, size=of_row.size)
            + (rng.random(of_row.size) < 0.002) * rng.integers(0, 9000, size=of_row.size),
        }
    )


def _payload(pool_body: pl.Series, pool: Pool, py_tid: pl.Series, cc_tid: pl.Series) -> pl.Expr:
    """The line as the program wrote it (header + body), without the newline."""
    stamp = pl.col("pts").cast(pl.Datetime("ns"))
    line = pl.col("line")
    level = line.replace_strict(np.arange(len(pool.lead)), pool.lead, return_dtype=pl.String)
    tid = (
        pl.when(pl.col("family") == ABSL_PY)
        .then(pl.col("host").replace_strict(np.arange(len(py_tid)), py_tid))
        .otherwise(pl.col("host").replace_strict(np.arange(len(cc_tid)), cc_tid).str.pad_start(7))
    )
    absl = pl.concat_str(
        [level, stamp.dt.to_string("%m%d %H:%M:%S%.6f"), pl.lit(" "), tid, pl.lit(" ")]
    )
    tsl = pl.concat_str(
        [stamp.dt.to_string("%Y-%m-%d %H:%M:%S%.6f"), pl.lit(": "), level, pl.lit(" ")]
    )
    header = (
        pl.when(pl.col("family") <= ABSL_CC)
        .then(absl)
        .when(pl.col("family") == TSL)
        .then(tsl)
        .otherwise(pl.lit(""))
    )
    chatter = pl.concat_str(
        [
            pl.lit("train.py:211] completed step: "),
            pl.col("step").cast(pl.String),
            pl.lit(", seconds: "),
            (pl.col("millis") // 1000).cast(pl.String),
            pl.lit("."),
            (pl.col("millis") % 1000).cast(pl.String).str.zfill(3),
        ]
    )
    body = (
        pl.when(line == 0)
        .then(chatter)
        .otherwise(line.replace_strict(np.arange(len(pool_body)), pool_body))
    )
    return pl.concat_str([header, body])


def _write(out: IO[bytes], lines: pl.Series) -> int:
    """Write a column of strings (each ending in a newline) as raw bytes; returns the count."""
    array = lines.to_arrow()
    assert array.null_count == 0, "a generated line is null"
    array = array.cast(pa.large_string())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    start, stop = int(offsets[0]), int(offsets[-1])
    out.write(memoryview(array.buffers()[2])[start:stop])
    return stop - start


def _fill(
    path: Path,
    target: int,
    seed: int,
    head: bytes,
    hosts: int,
    unit_ns: int,
    render: Callable[[pl.DataFrame, np.random.Generator], pl.Series],
    pool: Pool,
    weights: npt.NDArray[np.float64] = WEIGHTS,
    start_ns: int = START_NS,
    *,
    legacy_tail: bool = False,
) -> None:
    """Write blocks rendered by ``render`` to ``path`` until it holds about ``target`` bytes.

    The file ends with the last whole line that fits. ``legacy_tail`` keeps the bytes of the
    cached v1 ``cloud_logging`` and ``text`` inputs, which went on with one more block after
    cutting one and so end with a line from the next block (out of time order).
    """
    partial = path.with_name(path.name + ".partial")
    written = 0
    with partial.open("wb") as out:
        out.write(head)
        written += len(head)
        block = 0
        while written < target:
            rng = np.random.default_rng([seed, block])
            frame = _block(pool, rng, block * BLOCK_UNITS, unit_ns, hosts, weights, start_ns)
            lines = render(frame, rng)
            sizes = lines.str.len_bytes().cum_sum().to_numpy()
            cut = written + int(sizes[-1]) > target
            if cut:
                keep = int(np.searchsorted(sizes, target - written, "right"))
                lines = lines.head(max(1, keep) if legacy_tail else keep)
            written += _write(out, lines)
            block += 1
            if cut and not legacy_tail:
                break
    partial.replace(path)


# -- the TPU inputs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hosts:
    """Per-host strings of the 1,024 simulated TPU workers."""

    labels: pl.Series  # the entry's "labels" object, JSON
    resource: pl.Series  # the entry's "resource" object, JSON
    py_tid: pl.Series  # Python thread ident (absl-py headers)
    cc_tid: pl.Series  # C++ thread id (absl C++ headers)


def build_hosts(seed: int, count: int) -> Hosts:
    r = random.Random(f"culprit-bench-hosts-{seed}")
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    labels: list[str] = []
    resources: list[str] = []
    pool_hash = [_hex(r, 8) for _ in range(SLICES)]
    controller = [
        f"{_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 12)}" for _ in range(SLICES)
    ]
    for index in range(count):
        job, worker = divmod(index, WORKERS)
        job %= SLICES
        node = (
            f"gke-tpu-v5p-train-tpu-pool-{job}-{pool_hash[job]}-{''.join(r.choices(alphabet, k=4))}"
        )
        pod = f"llm-pretrain-slice-{job}-{worker}-{''.join(r.choices(alphabet, k=5))}"
        label = {
            "compute.googleapis.com/resource_name": node,
            "k8s-pod/batch_kubernetes_io/controller-uid": controller[job],
            "k8s-pod/batch_kubernetes_io/job-completion-index": str(worker),
            "k8s-pod/batch_kubernetes_io/job-name": f"llm-pretrain-slice-{job}",
            "k8s-pod/jobset_sigs_k8s_io/job-index": str(job),
            "k8s-pod/jobset_sigs_k8s_io/jobset-name": "llm-pretrain",
            "k8s-pod/jobset_sigs_k8s_io/replicatedjob-name": "slice",
            "k8s-pod/jobset_sigs_k8s_io/restart-attempt": "0",
            "logging.gke.io/top_level_controller_name": "llm-pretrain",
            "logging.gke.io/top_level_controller_type": "JobSet",
        }
        resource = {
            "labels": {
                "cluster_name": "tpu-v5p-train",
                "container_name": "jax-tpu",
                "location": "us-east5",
                "namespace_name": "default",
                "pod_name": pod,
                "project_id": "my-tpu-proj",
            },
            "type": "k8s_container",
        }
        labels.append(json.dumps(label, separators=(",", ":")))
        resources.append(json.dumps(resource, separators=(",", ":")))
    return Hosts(
        labels=pl.Series("labels", labels, dtype=pl.String),
        resource=pl.Series("resource", resources, dtype=pl.String),
        py_tid=pl.Series(
            "py_tid", [str(r.randrange(139_000_000_000_000, 141_000_000_000_000)) for _ in labels]
        ),
        cc_tid=pl.Series("cc_tid", [str(r.randrange(100, 99_999)) for _ in labels]),
    )


def _insert_ids(rng: np.random.Generator, count: int) -> pl.Series:
    """Random 16-character ``[0-9a-z]`` insertIds."""
    alphabet = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    data = alphabet[rng.integers(0, len(alphabet), size=(count, 16))].tobytes()
    offsets = np.arange(0, 16 * (count + 1), 16, dtype=np.int32)
    array = pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))
    series = pl.from_arrow(array)
    assert isinstance(series, pl.Series)
    return series


def _rfc3339(column: pl.Expr) -> pl.Expr:
    return column.cast(pl.Datetime("ns")).dt.to_string("%Y-%m-%dT%H:%M:%S%.9fZ")


def generate_cloud_logging(path: Path, target: int, seed: int) -> None:
    """A Log Router sink JSON-lines object of k8s_container stderr entries (module docstring)."""
    hosts = build_hosts(seed, SLICES * WORKERS)
    pool = build_pool(seed)
    escaped = pool.body.map_elements(lambda s: json.dumps(s)[1:-1], return_dtype=pl.String)
    payload = _payload(escaped, pool, hosts.py_tid, hosts.cc_tid)
    index = np.arange(len(hosts.labels))

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        rows = frame.height
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
                    _rfc3339(pl.col("rts")),
                    pl.lit('","resource":'),
                    pl.col("host").replace_strict(index, hosts.resource),
                    pl.lit(',"severity":"ERROR","textPayload":"'),
                    payload,
                    pl.lit('\\n","timestamp":"'),
                    _rfc3339(pl.col("ets")),
                    pl.lit('"}\n'),
                ]
            )
        ).to_series()

    unit_ns = STEP_NS // (SLICES * WORKERS)
    _fill(path, target, seed, b"", SLICES * WORKERS, unit_ns, render, pool, legacy_tail=True)


def generate_text(path: Path, target: int, seed: int) -> None:
    """One container's stderr of absl / tsl / Python logging lines (module docstring)."""
    hosts = build_hosts(seed, 1)
    pool = build_pool(seed)
    payload = _payload(pool.body, pool, hosts.py_tid, hosts.cc_tid)

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        return frame.select(pl.concat_str([payload, pl.lit("\n")])).to_series()

    epoch = START_NS / 1e9 - 95.5
    head = (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
        f"I0000 00:00:{epoch:.6f} {hosts.cc_tid[0]:>7} tpu_client.cc:55] Initializing TPU "
        "client with 4 local devices\n"
    ).encode()
    # About 110 bytes a line: spread the file over ~20 hours whatever its size.
    unit_ns = max(1_000_000, 20 * 3600 * 1_000_000_000 * 110 // max(target, 1))
    _fill(path, target, seed, head, 1, unit_ns, render, pool, legacy_tail=True)


# -- kubelet: journalctl -o short-precise of one GKE TPU node --------------------------------

#: The node's journal ends where the TPU inputs start: it leads up to the incident.
KUBELET_START_NS: Final = START_NS - 86_400 * 1_000_000_000
#: Kernel lines carry seconds since boot; the node booted 2 h before the first line.
KUBELET_BOOT_NS: Final = KUBELET_START_NS - 7_200 * 1_000_000_000
NODE: Final = "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-m9xq"
KUBELET_PID: Final = 2480
CONTAINERD_PID: Final = 2388
NPD_PID: Final = 3240
#: Categories: routine chatter, other info, warnings, errors, multi-line sequences.
KUBELET_WEIGHTS: Final = np.array([0.9, 0.085, 0.0125, 0.002, 0.0005])

# Stamp kinds of the kubelet input: what sits between a pool line's lead and its body.
K_KLOG: Final = 0  # 'kubelet[2480]: I' + '1129 18:34:45.000152' + '    2480 x.go:1] msg'
K_RFC3339: Final = 1  # 'containerd[2388]: time="' + RFC 3339 (ns, UTC) + '" level=info msg=…'
K_UPTIME: Final = 2  # 'kernel: [' + ' 8523.347333' (seconds since boot) + '] msg'
K_NONE: Final = 3  # no stamp: continuation lines of a multi-line klog value

_SITE: Final = "/home/ma-user/anaconda3/envs/PyTorch-2.1.0/lib/python3.9/site-packages"


@dataclass(frozen=True)
class _Pod:
    namespace: str
    name: str
    uid: str
    container: str
    volumes: tuple[str, ...]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


def _uid(r: random.Random) -> str:
    return f"{_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 12)}"


def _suffix(r: random.Random, k: int = 5) -> str:
    return "".join(r.choices("bcdfghjklmnpqrstvwxz2456789", k=k))


def _go(text: str) -> str:
    """A Go-quoted string (``strconv.Quote`` for ASCII text)."""
    return json.dumps(text)


def _clock(r: random.Random, day: str) -> str:
    return f"{day} {r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d}"


def _klog(
    level: str, where: str, message: str, ident: str = "kubelet", pid: int = KUBELET_PID
) -> Line:
    return (K_KLOG, f"{ident}[{pid}]: {level}", f" {pid:>7} {where}] {message}")


def _npd(where: str, message: str) -> Line:
    return _klog("I", where, message, ident="node-problem-detector", pid=NPD_PID)


def _containerd(level: str, message: str, fields: str = "") -> Line:
    """A containerd logrus line: ``msg`` Go-quoted, then ``fields`` (`` key=value`` …)."""
    return (
        K_RFC3339,
        f'containerd[{CONTAINERD_PID}]: time="',
        f'" level={level} msg={_go(message)}{fields}',
    )


def _kernel(message: str) -> Line:
    return (K_UPTIME, "kernel: [", f"] {message}")


def _continued(text: str) -> Line:
    """A line of a multi-line klog value: journald stores each line as its own entry."""
    return (K_NONE, f"kubelet[{KUBELET_PID}]: ", text)


def _node_pods(r: random.Random) -> tuple[list[_Pod], list[_Pod]]:
    """The node's TPU training pods (one at a time, recreated by JobSet restarts) and its
    system pods."""
    training = [
        _Pod(
            "default",
            f"llm-pretrain-slice-1-3-{_suffix(r)}",
            _uid(r),
            "jax-tpu",
            (f"kube-api-access-{_suffix(r)}", "dshm", "gcs-fuse-csi-ephemeral"),
        )
        for _ in range(4)
    ]
    system = [
        _Pod(ns, name, _uid(r), container, (f"kube-api-access-{_suffix(r)}", *volumes))
        for ns, name, container, volumes in (
            ("kube-system", f"tpu-device-plugin-{_suffix(r)}", "tpu-device-plugin", ("plugin",)),
            ("kube-system", f"kube-proxy-{NODE}", "kube-proxy", ("kubeconfig", "iptableslock")),
            ("kube-system", f"fluentbit-gke-{_suffix(r)}", "fluentbit", ("varlog", "varrun")),
            ("kube-system", f"gke-metadata-server-{_suffix(r)}", "gke-metadata-server", ()),
            ("kube-system", f"netd-{_suffix(r)}", "netd", ("cni-net-dir",)),
            ("kube-system", f"pdcsi-node-{_suffix(r)}", "gce-pd-driver", ("kubelet-dir",)),
            ("kube-system", f"node-local-dns-{_suffix(r)}", "node-cache", ("config-volume",)),
            ("gmp-system", f"collector-{_suffix(r)}", "prometheus", ("config-out", "storage")),
        )
    ]
    return training, system


def build_kubelet_pool(seed: int) -> Pool:
    """Distinct journal lines of one GKE TPU node, grouped into units per category."""
    r = random.Random(f"culprit-bench-kubelet-{seed}")
    training, system = _node_pods(r)
    cids = {pod.uid: [_hex(r, 64) for _ in range(6)] for pod in training + system}
    sandboxes = {pod.uid: _hex(r, 64) for pod in training + system}

    def pod_of(rr: random.Random) -> _Pod:
        return rr.choice(training) if rr.random() < 0.3 else rr.choice(system)

    def volume(rr: random.Random, p: _Pod, what: str) -> str:
        vol = rr.choice(p.volumes)
        kind = "projected" if vol.startswith("kube-api") else "empty-dir"
        return (
            f'"{what} for volume \\"{vol}\\" (UniqueName: \\"kubernetes.io/{kind}/{p.uid}-{vol}'
            f'\\") pod \\"{p.name}\\" (UID: \\"{p.uid}\\") " pod="{p.ref}"'
        )

    def pleg(p: _Pod, kind: str, rr: random.Random) -> Line:
        event = {"ID": p.uid, "Type": kind, "Data": rr.choice(cids[p.uid])}
        return _klog(
            "I",
            "kubelet.go:2455",
            f'"SyncLoop (PLEG): event for pod" pod="{p.ref}" '
            f"event={json.dumps(event, separators=(',', ':'))}",
        )

    def finished(p: _Pod, cid: str, code: int) -> Line:
        return _klog(
            "I",
            "generic.go:334",
            f'"Generic (PLEG): container finished" podID="{p.uid}" containerID="{cid}" '
            f"exitCode={code}",
        )

    def killing(p: _Pod, cid: str, grace: int) -> Line:
        # Older kubelets print podUID unquoted (formats.md §2.2).
        return _klog(
            "I",
            "kuberuntime_container.go:709",
            f'"Killing container with a grace period" pod="{p.ref}" podUID={p.uid} '
            f'containerName="{p.container}" containerID="containerd://{cid}" '
            f"gracePeriod={grace}",
        )

    def patch(p: _Pod, rr: random.Random) -> str:
        order = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
        condition = {
            "lastProbeTime": None,
            "lastTransitionTime": _clock(rr, "2026-11-28").replace(" ", "T") + "Z",
            "status": rr.choice(["True", "False"]),
            "type": "Ready",
        }
        body = {
            "metadata": {"uid": p.uid},
            "status": {
                "$setElementOrder/conditions": [{"type": t} for t in order],
                "conditions": [condition],
            },
        }
        return _go(json.dumps(body, separators=(",", ":")))

    def ip(rr: random.Random) -> str:
        return f"10.128.{rr.randrange(256)}.{rr.randrange(1, 255)}"

    def chatter(rr: random.Random) -> list[Line]:
        p = pod_of(rr)
        choice = rr.randrange(12)
        if choice == 0:
            probe = rr.choice(["readiness", "liveness", "startup"])
            status = {"readiness": "ready", "liveness": "unhealthy", "startup": "started"}[probe]
            status = status if rr.random() < 0.8 else ""
            return [
                _klog(
                    "I",
                    "kubelet.go:2542",
                    f'"SyncLoop (probe)" probe="{probe}" status="{status}" pod="{p.ref}"',
                )
            ]
        if choice == 1:
            return [pleg(p, "ContainerStarted", rr)]
        if choice == 2:
            return [
                _klog("I", "kubelet.go:2423", f'"SyncLoop UPDATE" source="api" pods=["{p.ref}"]')
            ]
        if choice == 3:
            ref = rr.choice(system).ref
            return [
                _klog(
                    "I",
                    "kubelet_getters.go:218",
                    f'"Pod status updated" pod="{ref}" status="Running"',
                )
            ]
        if choice == 4:
            return [
                _klog(
                    "I",
                    "status_manager.go:877",
                    f'"Patch status for pod" pod="{p.ref}" podUID="{p.uid}" patch={patch(p, rr)}',
                )
            ]
        if choice == 5:
            what = "operationExecutor.VerifyControllerAttachedVolume started"
            return [_klog("I", "reconciler_common.go:245", volume(rr, p, what))]
        if choice == 6:
            what = "operationExecutor.MountVolume started"
            return [_klog("I", "reconciler_common.go:218", volume(rr, p, what))]
        if choice == 7:
            what = "MountVolume.SetUp succeeded"
            return [_klog("I", "operation_generator.go:637", volume(rr, p, what))]
        if choice == 8:
            source = f"{ip(rr)}:{rr.randrange(30000, 60000)}"
            return [_klog("I", "log.go:245", f"http: TLS handshake error from {source}: EOF")]
        if choice == 9:
            kind = rr.choice(["ConfigMap", "Secret", "Service", "RuntimeClass", "CSIDriver"])
            return [
                _klog(
                    "I",
                    "reflector.go:368",
                    f'"Caches populated" type="*v1.{kind}" '
                    f'reflector="object-\\"{p.namespace}\\"/\\"kube-root-ca.crt\\""',
                )
            ]
        if choice == 10:
            seconds = rr.uniform(2, 90)
            never = "0001-01-01 00:00:00 +0000 UTC"
            return [
                _klog(
                    "I",
                    "pod_startup_latency_tracker.go:104",
                    f'"Observed pod startup duration" pod="{p.ref}" '
                    f"podStartSLOduration={seconds:.9f} "
                    f'podStartE2EDuration="{seconds + rr.uniform(0, 30):.9f}s" '
                    f'podCreationTimestamp="{_clock(rr, "2026-11-28")} +0000 UTC" '
                    f'firstStartedPulling="{never}" lastFinishedPulling="{never}"',
                )
            ]
        return [killing(p, rr.choice(cids[p.uid]), rr.choice([30, 30, 30, 10, 2]))]

    def info(rr: random.Random) -> list[Line]:
        p = pod_of(rr)
        cid = rr.choice(cids[p.uid])
        choice = rr.randrange(12)
        if choice == 0:
            return [_containerd("info", f"StartContainer for {_go(cid)} returns successfully")]
        if choice == 1:
            meta = f"&ContainerMetadata{{Name:{p.container},Attempt:{rr.randrange(6)},}}"
            sandbox = _go(sandboxes[p.uid])
            return [
                _containerd(
                    "info", f"CreateContainer within sandbox {sandbox} for container {meta}"
                )
            ]
        if choice == 2:
            return [_containerd("info", "shim disconnected", f" id={cid} namespace=k8s.io")]
        if choice == 3:
            return [_containerd("info", f"RemoveContainer for {_go(cid)} returns successfully")]
        if choice == 4:
            image = _go("us-docker.pkg.dev/my-tpu-proj/llm/jax-train:2026.11.27")
            label = '{key:"io.cri-containerd.image" value:"managed"}'
            return [_containerd("info", f"ImageCreate event name:{image} labels:{label}")]
        if choice == 5:
            veth = f"veth{_hex(rr, 8)}"
            return [_kernel(f"IPv6: ADDRCONF(NETDEV_CHANGE): {veth}: link becomes ready")]
        if choice == 6:
            port = f"{rr.randrange(1, 40)}(veth{_hex(rr, 8)})"
            return [_kernel(f"cbr0: port {port} entered forwarding state")]
        if choice == 7:
            return [
                _npd(
                    "custom_plugin_monitor.go:280",
                    "New status generated: &{Source:health-checker-kubelet Events:[] "
                    "Conditions:[{Type:KubeletUnhealthy Status:False Transition:2026-11-28 "
                    "15:41:02 +0000 UTC Reason:KubeletIsHealthy Message:kubelet on the node is "
                    "functioning properly}]}",
                )
            ]
        if choice == 8:
            return [finished(p, cid, 0)]
        if choice == 9:
            return [_klog("I", "scope.go:117", f'"RemoveContainer" containerID="{cid}"')]
        if choice == 10:
            return [
                _klog(
                    "I",
                    "pod_container_deletor.go:80",
                    f'"Container not found in pod\'s containers" containerID="{cid}"',
                )
            ]
        return [_klog("I", "kubelet.go:2416", f'"SyncLoop ADD" source="api" pods=["{p.ref}"]')]

    def warning(rr: random.Random) -> list[Line]:
        p = pod_of(rr)
        choice = rr.randrange(5)
        if choice == 0:
            path = (
                "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                f"{p.uid.replace('-', '_')}.slice/cri-containerd-{rr.choice(cids[p.uid])}.scope"
            )
            return [
                _klog(
                    "W",
                    "watcher.go:93",
                    f'Error while processing event ("{path}": 0x40000100 == IN_CREATE|IN_ISDIR): '
                    f"inotify_add_watch {path}: no such file or directory",
                )
            ]
        if choice == 1:
            address = f"{ip(rr)}:{rr.choice([8080, 9090, 8471])}"
            output = _go(
                f'Get "http://{address}/healthz": dial tcp {address}: connect: connection refused'
            )
            return [
                _klog(
                    "I",
                    "prober.go:107",
                    f'"Probe failed" probeType="Readiness" pod="{p.ref}" podUID="{p.uid}" '
                    f'containerName="{p.container}" probeResult="failure" output={output}',
                )
            ]
        if choice == 2:
            inner = (
                'time="2026-11-28T17:51:12Z" level=warning msg="failed to remove runc container" '
                'error="runc did not terminate successfully: exit status 255: " '
                "runtime=io.containerd.runc.v2"
            )
            return [_containerd("warning", f"cleanup warnings {inner}", " namespace=k8s.io")]
        if choice == 3:
            return [
                _klog(
                    "W",
                    "kubelet_pods.go:1010",
                    '"Unable to retrieve pull secret, the image pull may not succeed." '
                    f'pod="{p.ref}" secret="" err="secret \\"regcred\\" not found"',
                )
            ]
        return [
            _klog(
                "W",
                "reflector.go:470",
                "k8s.io/client-go/informers/factory.go:160: watch of *v1.Node ended with: an "
                'error on the server ("unable to decode an event from the watch stream: http2: '
                'client connection lost") has prevented the request from succeeding',
            )
        ]

    def crashloop(p: _Pod) -> Line:
        err = _go(
            f'failed to "StartContainer" for "{p.container}" with CrashLoopBackOff: '
            f'"back-off 5m0s restarting failed container={p.container} '
            f'pod={p.name}_{p.namespace}({p.uid})"'
        )
        return _klog(
            "E",
            "pod_workers.go:1301",
            f'"Error syncing pod, skipping" err={err} pod="{p.ref}" podUID="{p.uid}"',
        )

    def error(rr: random.Random) -> list[Line]:
        p = rr.choice(training)
        cid = rr.choice(cids[p.uid])
        not_found = _go(
            "rpc error: code = NotFound desc = an error occurred when try to find container "
            f'"{cid}": not found'
        )
        choice = rr.randrange(7)
        if choice == 0:
            return [crashloop(p)]
        if choice == 1:
            return [
                _klog(
                    "E",
                    "remote_runtime.go:432",
                    f'"ContainerStatus from runtime service failed" err={not_found} '
                    f'containerID="{cid}"',
                )
            ]
        if choice == 2:
            err = _go(
                f'error getting node "{NODE}": Get "https://10.0.0.2:443/api/v1/nodes/{NODE}'
                '?timeout=10s": net/http: request canceled (Client.Timeout exceeded while '
                "awaiting headers)"
            )
            return [
                _klog(
                    "E",
                    "kubelet_node_status.go:549",
                    f'"Error updating node status, will retry" err={err}',
                )
            ]
        if choice == 3:
            err = _go(
                "Allocate failed due to requested number of devices unavailable for "
                "google.com/tpu. Requested: 4, Available: 0, which is unexpected"
            )
            return [
                _klog(
                    "E",
                    "kubelet.go:2425",
                    '"Failed to admit pod, unexpected error while attempting to recover from '
                    f'admission failure" pod="{p.ref}" err={err}',
                )
            ]
        if choice == 4:
            return [
                _containerd(
                    "error", f"ContainerStatus for {_go(cid)} failed", f" error={not_found}"
                )
            ]
        if choice == 5:
            return [
                _klog(
                    "E",
                    "cpu_manager.go:395",
                    f'"RemoveStaleState: removing container" podUID="{p.uid}" '
                    f'containerName="{p.container}"',
                )
            ]
        path = f"/var/log/pods/{p.namespace}_{p.name}_{p.uid}/{p.container}/{rr.randrange(5)}.log"
        return [
            _klog(
                "E",
                "log.go:32",
                '"Failed when writing line to log file" err="http2: stream closed" '
                f'path="{path}" line={rr.randrange(1, 4096)}',
            )
        ]

    def sequence(rr: random.Random) -> list[Line]:
        p = rr.choice(training)
        cid = rr.choice(cids[p.uid])
        choice = rr.randrange(5)
        if choice == 0:  # eviction under memory pressure
            ranked = " ".join([p.ref, *(s.ref for s in rr.sample(system, 3))])
            reclaim = 'resourceName="memory"'
            return [
                _klog(
                    "W",
                    "eviction_manager.go:366",
                    f'"Eviction manager: attempting to reclaim" {reclaim}',
                ),
                _klog(
                    "I",
                    "eviction_manager.go:377",
                    f'"Eviction manager: must evict pod(s) to reclaim" {reclaim}',
                ),
                _klog(
                    "I",
                    "eviction_manager.go:374",
                    f'"Eviction manager: pods ranked for eviction" pods="[{ranked}]"',
                ),
                killing(p, cid, 30),
                pleg(p, "ContainerDied", rr),
                _klog(
                    "I",
                    "eviction_manager.go:595",
                    f'"Eviction manager: pod is evicted successfully" pod="{p.ref}"',
                ),
            ]
        if choice == 1:  # container OOM: kernel, containerd, node-problem-detector, kubelet
            pid = rr.randrange(100_000, 400_000)
            killed = f"Memory cgroup out of memory: Killed process {pid} (python3)"
            return [
                _kernel(
                    "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, "
                    "oom_score_adj=-997"
                ),
                _kernel(
                    f"{killed} total-vm:{rr.randrange(10**8, 4 * 10**8)}kB, "
                    f"anon-rss:{rr.randrange(10**8, 4 * 10**8)}kB, "
                    f"file-rss:{rr.randrange(10**5)}kB, "
                    f"shmem-rss:{rr.randrange(10**4)}kB, UID:0 pgtables:{rr.randrange(10**5)}kB "
                    "oom_score_adj:-997"
                ),
                _containerd("info", f"TaskOOM event container_id:{_go(cid)}"),
                _npd(
                    "log_monitor.go:160",
                    "New status generated: &{Source:kernel-monitor Events:[{Severity:warn "
                    f"Reason:OOMKilling Message:{killed}}}]}}",
                ),
                finished(p, cid, 137),
                pleg(p, "ContainerDied", rr),
            ]
        if choice == 2:  # liveness probe failure with a multi-line output value (klog key=<)
            return [
                _klog(
                    "I",
                    "prober.go:107",
                    f'"Probe failed" probeType="Liveness" pod="{p.ref}" podUID="{p.uid}" '
                    f'containerName="{p.container}" probeResult="failure" output=<',
                ),
                _continued("\tTraceback (most recent call last):"),
                _continued('\t  File "/app/healthz.py", line 12, in <module>'),
                _continued("\tConnectionRefusedError: [Errno 111] Connection refused"),
                _continued(" >"),
                _klog(
                    "I",
                    "kuberuntime_manager.go:1056",
                    f'"Message for Container of pod" containerName="{p.container}" '
                    f'containerStatusID="{cid}" pod="{p.ref}" containerMessage="Container '
                    f'{p.container} failed liveness probe, will be restarted"',
                ),
            ]
        if choice == 3:  # crash loop
            return [
                finished(p, cid, 1),
                pleg(p, "ContainerDied", rr),
                _klog("I", "scope.go:117", f'"RemoveContainer" containerID="{cid}"'),
                crashloop(p),
            ]
        return [  # graceful node shutdown (maintenance)
            _klog(
                "I",
                "nodeshutdown_manager_linux.go:262",
                '"Shutdown manager detected new shutdown event, isNodeShuttingDownNow" event=true',
            ),
            _klog(
                "I",
                "nodeshutdown_manager_linux.go:324",
                '"Shutdown manager completed processing shutdown event, node will shutdown '
                'shortly"',
            ),
        ]

    units: list[tuple[int, Sequence[Line]]] = []
    for category, make, count in (
        (CHATTER, chatter, 3000),
        (INFO, info, 1500),
        (WARNING, warning, 600),
        (ERROR, error, 300),
        (TRACEBACK, sequence, 100),
    ):
        units.extend((category, make(r)) for _ in range(count))
    return make_pool(units, len(KUBELET_WEIGHTS))


def _fraction(column: pl.Expr, digits: int) -> pl.Expr:
    """The sub-second digits of a nanosecond count, truncated to ``digits`` digits."""
    fraction: pl.Expr = column % 1_000_000_000 // 10 ** (9 - digits)
    return fraction.cast(pl.String).str.zfill(digits)


def _decimal(column: pl.Expr, decimals: int) -> pl.Expr:
    """An integer count of ``10**-decimals`` units rendered as ``X.YYY``."""
    unit = 10**decimals
    return pl.concat_str(
        [
            (column // unit).cast(pl.String),
            pl.lit("."),
            (column % unit).cast(pl.String).str.zfill(decimals),
        ]
    )


def _stamped(pool: Pool, frame: pl.DataFrame, stamps: dict[int, pl.Expr]) -> pl.Expr:
    """``lead + stamp + body`` of each row's pool line, the stamp picked by the line's family
    (no stamp for a family not in ``stamps``)."""
    line = frame["line"]
    family = pl.lit(pl.Series(pool.family).gather(line))
    stamp = pl.lit("")
    for kind, expr in stamps.items():
        stamp = pl.when(family == kind).then(expr).otherwise(stamp)
    return pl.concat_str([pl.lit(pool.lead.gather(line)), stamp, pl.lit(pool.body.gather(line))])


def generate_kubelet(path: Path, target: int, seed: int) -> None:
    """``journalctl -o short-precise`` of one GKE TPU node (module docstring)."""
    pool = build_kubelet_pool(seed)

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        # journald stamps an entry when it receives it, a little after the program's clock;
        # containerd's own stamp has nanoseconds.
        delay = rng.integers(15_000, 400_000, size=frame.height)
        frame = frame.with_columns(jts=pl.col("pts") + pl.Series(delay))
        pts = pl.col("pts").cast(pl.Datetime("ns"))
        uptime = pl.col("pts") - KUBELET_BOOT_NS
        stamps = {
            K_KLOG: pts.dt.to_string("%m%d %H:%M:%S%.6f"),
            K_RFC3339: (pl.col("pts") + pl.col("jts") % 1000)
            .cast(pl.Datetime("ns"))
            .dt.to_string("%Y-%m-%dT%H:%M:%S%.9fZ"),
            K_UPTIME: pl.concat_str(
                [
                    (uptime // 1_000_000_000).cast(pl.String).str.pad_start(5),
                    pl.lit("."),
                    _fraction(uptime, 6),
                ]
            ),
        }
        return frame.select(
            pl.concat_str(
                [
                    pl.col("jts").cast(pl.Datetime("ns")).dt.to_string("%b %d %H:%M:%S%.6f"),
                    pl.lit(f" {NODE} "),
                    _stamped(pool, frame, stamps),
                    pl.lit("\n"),
                ]
            )
        ).to_series()

    first = dt.datetime.fromtimestamp(KUBELET_START_NS // 1_000_000_000 - 5, dt.UTC)
    journal, klog = first.strftime("%b %d %H:%M:%S"), first.strftime("%m%d %H:%M:%S")
    startup = [
        'flags.go:64] FLAG: --v="2"',
        'server.go:487] "Kubelet version" kubeletVersion="v1.30.5-gke.1014001"',
        'server.go:489] "Golang settings" GOGC="" GOMAXPROCS="" GOTRACEBACK=""',
        f'kubelet_node_status.go:76] "Attempting to register node" node="{NODE}"',
        f'kubelet_node_status.go:79] "Successfully registered node" node="{NODE}"',
    ]
    head = "".join(
        [
            f"{journal}.000412 {NODE} systemd[1]: Started kubelet.service - Kubernetes Kubelet.\n",
            *(
                f"{journal}.{10_000 + 731 * i:06d} {NODE} kubelet[{KUBELET_PID}]: "
                f"I{klog}.{9_000 + 731 * i:06d} {KUBELET_PID:>7} {message}\n"
                for i, message in enumerate(startup)
            ),
        ]
    ).encode()
    # About 340 bytes a line: spread the file over ~20 hours whatever its size, so that
    # year-less stamps stay unambiguous (as in the text input).
    unit_ns = max(1_000_000, 20 * 3600 * 1_000_000_000 * 340 // max(target, 1))
    _fill(path, target, seed, head, 1, unit_ns, render, pool, KUBELET_WEIGHTS, KUBELET_START_NS)


# -- modelarts: one ModelArts worker log (PyTorch + torch_npu on Ascend) ---------------------

#: The worker's container clock is UTC+8 (ModelArts CN regions); zone-less stamps are local.
MA_OFFSET_NS: Final = 8 * 3600 * 1_000_000_000
#: 1 GiB covers about 19 days of training: start 20 days before the TPU inputs.
MA_START_NS: Final = START_NS - 20 * 86_400 * 1_000_000_000
MA_HOST_IP: Final = "172.16.24.51"
MA_RANKS: Final = 8  # ranks (NPUs) on this node: 0-7 of a 32-rank job on 4 nodes
MA_WORLD: Final = 32
MA_PID: Final = 4102  # pid of rank 0; rank r is MA_PID + r
#: Categories: per-step prints, other info, warnings, errors, multi-line blocks.
MA_WEIGHTS: Final = np.array([0.7, 0.26, 0.0353, 0.0045, 0.0002])
#: Each of the 8 ranks prints one line per step; other lines fill the time in between.
MA_UNIT_NS: Final = int(STEP_NS * MA_WEIGHTS[CHATTER]) // MA_RANKS

# Stamp kinds of the modelarts input.
M_NONE: Final = 0
M_ASCTIME: Final = 1  # 2026-11-29 17:20:05,117 (Python logging)
M_ISO: Final = 2  # 2026-11-29T17:20:05 (logrus; the body goes on with '+08:00" level=')
M_CANN: Final = 3  # 2026-11-29-17:20:05.117.205 (CANN plog, error-code blocks)
M_TORCH: Final = 4  # 2026-11-29-17:20:05 (torch_npu)


def modelarts_job(seed: int) -> str:
    """The job UUID in the worker log's name."""
    return _uid(random.Random(f"culprit-bench-modelarts-job-{seed}"))


def _rank(rank: int | None) -> str:
    """torchrun's ``[rankN]: `` prefix (none for ``None``)."""
    return "" if rank is None else f"[rank{rank}]: "


def _plog(
    level: str, module: str, rank: int, where: str, message: str, glued: bool = False
) -> Line:
    """A CANN plog line; RUNTIME/ASCENDCL glue the thread id to ``[file:line]``, HCCL and GE
    put ``[pid]`` after it (formats.md §3.5)."""
    pid = MA_PID + rank
    after = f"{pid + 64} " if glued else f" [{pid}]"
    return (M_CANN, f"[{level}] {module}({pid},python):", f" [{where}]{after}{message}")


def _torch_npu(
    rank: int, code: str, message: str, prefixed: bool = True, rank_id: int | None = None
) -> Line:
    """A torch_npu error line (``RankID:-1`` before the process group exists)."""
    shown = rank if rank_id is None else rank_id
    return (
        M_TORCH,
        f"{_rank(rank if prefixed else None)}[ERROR] ",
        f" (PID:{MA_PID + rank}, Device:{rank}, RankID:{shown}) {code} {message}",
    )


def _pylog(rank: int | None, logger: str, level: str, message: str) -> Line:
    return (M_ASCTIME, _rank(rank), f" - {logger} - {level} - {message}")


def _logrus(level: str, message: str, where: str) -> Line:
    return (
        M_ISO,
        'time="',
        f'+08:00" level={level} msg={_go(message)} file="{where}" Command=obs/upload '
        "Component=ma-training-toolkit Platform=ModelArts-Service",
    )


def _service(message: str, capital: bool = True) -> Line:
    """A platform line; both capitalisations occur (formats.md §3.4)."""
    return (M_NONE, "[ModelArts Service Log]" if capital else "[Modelarts Service Log]", message)


def _service_asctime(level: str, message: str) -> Line:
    return (M_ASCTIME, "[Modelarts Service Log]", f" - {level} - {message}")


def _ei0002(r: random.Random, rank: int, prefix: str) -> list[Line]:
    """An ``EI0002`` notify-wait timeout block: TAB-indented continuation lines and the
    unindented ``there are(is)`` / ``]`` lines CANN writes inside it (formats.md §3.5)."""
    remote = r.randrange(MA_RANKS, MA_WORLD)
    server = f"172.16.24.{51 + remote // MA_RANKS}"
    text = [
        "\tPossible Cause: 1. An exception occurs during the execution on some NPUs in the "
        "cluster. As a result, collective communication operation failed.2. The execution speed "
        "on some NPU in the cluster is too slow to complete a communication operation within "
        "the timeout interval. (default 1800s, You can set the interval by using "
        "HCCL_EXEC_TIMEOUT.)",
        "\tSolution: 1. If this error is reported on part of these ranks, check other ranks to "
        "see whether other errors have been reported earlier. 2. If this error is reported for "
        "all ranks, check whether the error reporting time is consistent (the maximum "
        "difference must not exceed 1800s). If not, locate the cause or set the "
        "HCCL_EXEC_TIMEOUT environment variable to a larger value.",
        "\tTraceBack (most recent call last):",
        f"\tNotify wait execute failed, device_id={rank}, stream_id=14, "
        f"task_id={r.randrange(2, 40)}, flip_num=0, notify_id=11"
        "[FUNC:GetError][FILE:stream.cc][LINE:921]",
        "\trtStreamSynchronizeWithTimeout execute failed, reason=[notify wait timeout]"
        "[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
    ]
    return [
        (
            M_CANN,
            f"{prefix}EI0002: [PID: {MA_PID + rank}] ",
            " The wait execution of the Notify register times out. Reason: The Notify register "
            f"has not received the Notify record from remote rank [{remote}].base information: "
            f"[streamID:[14], taskID[{r.randrange(2, 40)}], taskType[Notify Wait], "
            f"tag[HcomAllReduce_{r.randrange(10**18, 10**19)}_0].] task information: "
            f"[notify id:[0x00000001000000{r.randrange(16, 99)}], stage:[ffffffff], "
            f"remote rank:[{remote}].",
        ),
        (M_NONE, prefix, "there are(is) 1 abnormal device(s):"),
        (
            M_NONE,
            prefix,
            f"\tserverId[{server}], deviceId[{remote % MA_RANKS}], Heartbeat Lost Occurred, "
            "Possible Reason: 1. Process has exited, 2. Network Disconnected",
        ),
        (M_NONE, prefix, "]"),
        *((M_NONE, prefix, line) for line in text),
    ]


def _ee9999(r: random.Random, rank: int) -> list[Line]:
    """An ``EE9999`` inner-error block (newer CANN: pid and stamp in the detail line)."""
    return [
        (M_NONE, "", "EE9999: Inner Error!"),
        (
            M_CANN,
            f"EE9999: [PID: {MA_PID + rank}] ",
            f" The error from device(chipId:{rank}, dieId:0), serial number is "
            f"{r.randrange(1, 9)}, event wait timeout occurred during task execution, "
            "stream_id:19, sq_id:19, task_id:16, event_id=73, timeout=1866s."
            "[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1400]",
        ),
        (
            M_NONE,
            "",
            f"\t[driver interface] halMemAlloc failed: device_id={rank}, size=32212254720, "
            "type=2, env_type=3, drvRetCode=6![FUNC:ReportError][FILE:npu_driver.cc][LINE:568]",
        ),
        (
            M_NONE,
            "",
            "\trtMalloc execute failed, reason=[driver error:out of memory]"
            "[FUNC:ReportError][FILE:error_message_manage.cc][LINE:566]",
        ),
    ]


def _ma_traceback(rank: int) -> list[Line]:
    """A Python traceback through torchrun's ``[rankN]:`` prefix, then torch_npu's line."""
    code = "/home/ma-user/modelarts/user-job-dir/code/pretrain_gpt.py"
    return [
        *(
            (M_NONE, _rank(rank), line)
            for line in (
                "Traceback (most recent call last):",
                f'  File "{code}", line 240, in <module>',
                "    main()",
                f'  File "{code}", line 231, in main',
                "    loss = train_step(model, batch)",
                f'  File "{_SITE}/torch/distributed/distributed_c10d.py", line 2050, in all_reduce',
                "    work = group.allreduce([tensor], opts)",
                "RuntimeError: [ERROR] HCCL error in: "
                "torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64",
            )
        ),
        _torch_npu(rank, "ERR02200", "DIST call hccl api failed."),
    ]


def build_modelarts_pool(seed: int) -> Pool:
    """Distinct lines of one ModelArts worker log, grouped into units per category."""
    r = random.Random(f"culprit-bench-modelarts-{seed}")
    ident = f"{MA_HOST_IP}%enp_60000_0_{r.randrange(10**15, 10**16)}"

    def step(rr: random.Random) -> int:
        return FIRST_STEP + rr.randrange(600_000)

    def info(rr: random.Random) -> list[Line]:
        rank = rr.randrange(MA_RANKS)
        pid = MA_PID + rank
        choice = rr.randrange(12)
        if choice == 0:
            return [
                _plog(
                    "INFO",
                    "HCCL",
                    rank,
                    "op_base.cc:1292",
                    f"Entry-HcclCommInitRootInfoInner:ranks[{MA_WORLD}], rank[{rank}], rootinfo: "
                    f"host ip[{MA_HOST_IP}] port[60000] nicDeploy[1] identifier[{ident}], "
                    f"deviceLogicId[{rank}]",
                )
            ]
        if choice == 1:
            count = rr.choice([256, 4096, 1 << 20, 1 << 24])
            return [
                _plog(
                    "INFO",
                    "HCCL",
                    rank,
                    "hcom.cc:512",
                    f"HcomAllReduce: tag[AllReduce_{ident}], count[{count}], dataType[bfloat16], "
                    f"op[sum], streamId[{rr.randrange(2, 20)}], rankSize[{MA_WORLD}], "
                    f"rank[{rank}]",
                )
            ]
        if choice == 2:
            stream = f"device_id={rank}, stream_id={rr.randrange(2, 200)}, priority=0"
            where = f"stream.cc:{rr.randrange(200, 900)}"
            return [_plog("INFO", "RUNTIME", rank, where, f"Create stream, {stream}", glued=True)]
        if choice == 3:
            return [
                (
                    M_CANN,
                    f"[TRACE] HCCL({pid},python):",
                    f" [status:stop] [hcom.cc:336][hccl-{pid}-0-1795943650-hccl_world_group]"
                    f"[{rank}]hcom op complete,take time [{rr.randrange(100, 90_000)}]us, "
                    f"rankNum[{MA_WORLD}], rank[{rank}]",
                )
            ]
        if choice in (4, 5):
            name = f"/tmp/log/proc-rank-{rank}-device-{rank}.txt"
            target = "obs://llm-obs/llm-pretrain/logs/"
            return [_logrus("info", f"upload {name} to {target} succeed", "upload.go:112")]
        if choice == 6:
            at = f"{step(rr) // 1000 * 1000:8d}"
            return [
                _pylog(
                    rank, "megatron", "INFO", f"saving checkpoint at iteration {at} to /cache/ckpt"
                )
            ]
        if choice == 7:
            return [
                _pylog(
                    rank,
                    "train",
                    "INFO",
                    f"validation loss at iteration {step(rr) // 1000 * 1000} | lm loss value: "
                    f"{rr.uniform(1.8, 2.6):.6E} | lm loss PPL: {rr.uniform(6, 14):.6E}",
                )
            ]
        if choice == 8:
            return [
                (
                    M_NONE,
                    _rank(rank),
                    f"[Rank {rank}] (after {step(rr)} iterations) memory (MB) | allocated: "
                    f"{rr.uniform(20000, 40000):.1f} | max allocated: "
                    f"{rr.uniform(40000, 60000):.1f} | reserved: {rr.uniform(50000, 61000):.1f} "
                    f"| max reserved: {rr.uniform(55000, 62000):.1f}",
                )
            ]
        if choice == 9:
            proc = f"proc-rank-{rank}-device-{rank} (pid: {pid})"
            return [_service_asctime("INFO", f"{proc} is running")]
        if choice == 10:
            text = f"INFO: collect ascend logs of device {rank} succeed"
            return [_service(text, capital=rr.random() < 0.5)]
        return [
            _plog(
                "INFO",
                "GE",
                rank,
                f"ge_api.cc:{rr.randrange(300, 700)}",
                f"Session {rr.randrange(100)} run graph {rr.randrange(1, 40)} success",
            )
        ]

    def warning(rr: random.Random) -> list[Line]:
        rank = rr.randrange(MA_RANKS)
        choice = rr.randrange(5)
        if choice == 0:
            return [
                _plog(
                    "WARNING",
                    "HCCL",
                    rank,
                    "hccl_communicator.cc:2113",
                    f"[HcclCommunicator]rank[{rank}] AlltoAllV is not supported on current "
                    "topo, fallback to pairwise",
                )
            ]
        if choice == 1:
            usage = f"memory usage of device {rank} is {rr.uniform(90, 99):.1f}%"
            return [_plog("WARNING", "RUNTIME", rank, "device.cc:331", usage, glued=True)]
        if choice == 2:  # warnings.warn: the source line follows, indented
            return [
                (
                    M_NONE,
                    _rank(rank),
                    f"{_SITE}/torch_npu/utils/storage.py:38: UserWarning: TypedStorage is "
                    "deprecated. It will be removed in the future and UntypedStorage will be "
                    "the only storage class.",
                ),
                (M_NONE, _rank(rank), "  if self.device.type != 'cpu':"),
            ]
        if choice == 3:
            name = f"/tmp/log/proc-rank-{rank}-device-{rank}.txt"
            retry = f"upload {name} failed, will retry: obs status 503 SlowDown"
            return [_logrus("warning", retry, "upload.go:118")]
        return [
            _pylog(
                rank,
                "train",
                "WARNING",
                f"found inf or nan in grad at iteration {step(rr)}, skipping the update "
                f"(loss scale {2 ** rr.randrange(10, 17)})",
            )
        ]

    def error(rr: random.Random) -> list[Line]:
        rank = rr.randrange(MA_RANKS)
        choice = rr.randrange(6)
        if choice == 0:
            return [
                _plog(
                    "ERROR",
                    "RUNTIME",
                    rank,
                    "engine.cc:914",
                    f"ReportExceptProc:Task exception! device_id={rank}, "
                    f"stream_id={rr.randrange(2, 200)}, task_id={rr.randrange(1, 60)}, type=13, "
                    "retCode=0x91.",
                    glued=True,
                )
            ]
        if choice == 1:
            return [
                _plog(
                    "ERROR",
                    "HCCL",
                    rank,
                    "task_exception_handler.cc:908",
                    "[TaskExecStage][Timeout][Host]Task run failed, base information is "
                    f"streamID:[2], taskID[{rr.randrange(1, 60)}], tag[AllReduce_{ident}], "
                    "AlgType(level 0-1-2):[fullmesh-ring-NHR].",
                )
            ]
        if choice == 2:
            return [_torch_npu(rank, "ERR02200", "DIST call hccl api failed.")]
        if choice == 3:
            return [
                _torch_npu(rank, "ERR00100", "PTA call acl api failed", prefixed=False, rank_id=-1)
            ]
        if choice == 4:
            return [
                _plog(
                    "ERROR",
                    "ASCENDCL",
                    rank,
                    "tensor_data_transfer.cpp:899",
                    "acltdtSendTensor: [Push][Data]failed to send, tdt result = -1, device is "
                    f"{rank}, name is {_uid(rr)}",
                    glued=True,
                )
            ]
        return [
            _pylog(
                rank,
                "train",
                "ERROR",
                f"iteration {step(rr)} took {rr.uniform(30, 600):.1f}s, more than 10x the "
                "median step time",
            )
        ]

    def block(rr: random.Random) -> list[Line]:
        rank = rr.randrange(MA_RANKS)
        choice = rr.randrange(5)
        if choice == 0:  # torch_npu's line, then CANN's block on stderr (no prefix)
            return [
                _torch_npu(rank, "ERR02200", "DIST call hccl api failed."),
                *_ei0002(rr, rank, ""),
            ]
        if choice == 1:  # the same through torchrun's [rankN]: prefix, TABs after it
            return [*_ma_traceback(rank), *_ei0002(rr, rank, _rank(rank))]
        if choice == 2:
            return _ma_traceback(rank)
        if choice == 3:
            return _ee9999(rr, rank)
        return [  # a rank process dies and ModelArts restarts the training processes
            _service_asctime(
                "INFO", f"proc-rank-{rank}-device-{rank} (pid: {MA_PID + rank}) has exited"
            ),
            _service_asctime("INFO", "Begin destroy training processes"),
            _service("Training end with return code: 1", capital=False),
            _service_asctime("INFO", "Begin launch training processes"),
        ]

    units: list[tuple[int, Sequence[Line]]] = [(CHATTER, [(M_NONE, "", "")])]
    for category, make, count in (
        (INFO, info, 2400),
        (WARNING, warning, 600),
        (ERROR, error, 300),
        (TRACEBACK, block, 60),
    ):
        units.extend((category, make(r)) for _ in range(count))
    return make_pool(units, len(MA_WEIGHTS))


def generate_modelarts(path: Path, target: int, seed: int) -> None:
    """A ModelArts worker log of one 8-NPU node (module docstring)."""
    pool = build_modelarts_pool(seed)

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        rows = frame.height
        frame = frame.with_columns(
            loss=pl.Series(rng.integers(19_000, 26_000, size=rows)),
            gnorm=pl.Series(rng.integers(600, 1_400, size=rows)),
        )
        local_ns = pl.col("pts") + MA_OFFSET_NS
        local = local_ns.cast(pl.Datetime("ns"))
        millis = _fraction(local_ns, 3)
        asctime = pl.concat_str([local.dt.to_string("%Y-%m-%d %H:%M:%S"), pl.lit(","), millis])
        cann = pl.concat_str(
            [
                local.dt.to_string("%Y-%m-%d-%H:%M:%S"),
                pl.lit("."),
                millis,
                pl.lit("."),
                (local_ns // 1000 % 1000).cast(pl.String).str.zfill(3),
            ]
        )
        stamps = {
            M_ASCTIME: asctime,
            M_ISO: local.dt.to_string("%Y-%m-%dT%H:%M:%S"),
            M_CANN: cann,
            M_TORCH: local.dt.to_string("%Y-%m-%d-%H:%M:%S"),
        }
        step = FIRST_STEP + (pl.col("pts") - MA_START_NS) // STEP_NS
        chatter = pl.concat_str(
            [
                pl.lit("[rank"),
                pl.col("host").cast(pl.String),
                pl.lit("]: "),
                asctime,
                pl.lit(" - train - INFO - step "),
                step.cast(pl.String),
                pl.lit(" | loss "),
                _decimal(pl.col("loss"), 4),
                pl.lit(" | grad_norm "),
                _decimal(pl.col("gnorm"), 3),
                pl.lit(" | step_time "),
                _decimal(pl.col("millis"), 3),
                pl.lit("s | tokens/s "),
                (4096 * 4 * 1000 // pl.col("millis")).cast(pl.String),
            ]
        )
        line = pl.when(pl.col("line") == 0).then(chatter).otherwise(_stamped(pool, frame, stamps))
        return frame.select(pl.concat_str([line, pl.lit("\n")])).to_series()

    first = dt.datetime.fromtimestamp((MA_START_NS + MA_OFFSET_NS) // 1_000_000_000 - 60, dt.UTC)
    day, clock = first.strftime("%Y-%m-%d"), first.strftime("%H:%M:%S")
    packages = ["sentencepiece==0.2.0", "transformers==4.45.0", "datasets==2.21.0", "einops==0.8.0"]
    lines = [
        "[ModelArts Service Log][init] download code_url: s3://llm-obs/llm-pretrain/code/",
        "[ModelArts Service Log][init] download code_url succeed",
        f'time="{day}T{clock}+08:00" level=info msg="start the periodic upload task, upload '
        'period = 5 seconds " file="upload.go:46" Command=obs/upload '
        "Component=ma-training-toolkit Platform=ModelArts-Service",
        "[ModelArts Service Log]modelarts-pipe: will create log file /tmp/log/llm-pretrain.log",
        "Looking in indexes: https://repo.huaweicloud.com/repository/pypi/simple",
        *(
            f"Requirement already satisfied: {package} in {_SITE} (from -r pip-requirement.txt "
            f"(line {i + 1})) ({package.split('==')[1]})"
            for i, package in enumerate(packages)
        ),
        f"[Modelarts Service Log]{day} {clock},401 - INFO - Begin launch training processes",
        *(
            f"[Modelarts Service Log]{day} {clock},{410 + rank} - INFO - "
            f"proc-rank-{rank}-device-{rank} (pid: {MA_PID + rank}) is launched"
            for rank in range(MA_RANKS)
        ),
    ]
    head = "".join(line + "\n" for line in lines).encode()
    _fill(path, target, seed, head, MA_RANKS, MA_UNIT_NS, render, pool, MA_WEIGHTS, MA_START_NS)


@dataclass(frozen=True)
class Input:
    name: str
    path: Path
    generate: Callable[[Path, int, int], None]


def prepare_inputs(cache: Path, size_mb: int, seed: int, names: Sequence[str]) -> list[Input]:
    """The benchmark inputs, generated into ``cache`` when missing.

    The ModelArts reader recognizes a worker log by its name, which cannot carry the size,
    seed and version: that input lives in a directory named after them.
    """
    cache.mkdir(parents=True, exist_ok=True)

    def stem(name: str) -> str:
        return f"{name}-{size_mb}mb-seed{seed}-v{GENERATOR_VERSIONS[name]}"

    known = {
        "cloud_logging": Input(
            "cloud_logging", cache / f"{stem('cloud_logging')}.jsonl", generate_cloud_logging
        ),
        "text": Input("text", cache / f"{stem('text')}.log", generate_text),
        "kubelet": Input("kubelet", cache / f"{stem('kubelet')}.log", generate_kubelet),
        "modelarts": Input(
            "modelarts",
            cache / stem("modelarts") / f"modelarts-job-{modelarts_job(seed)}-worker-0.log",
            generate_modelarts,
        ),
    }
    inputs = [known[name] for name in names]
    for item in inputs:
        if item.path.is_file():
            continue
        _say(f"generating {item.path} ...")
        item.path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        item.generate(item.path, size_mb * MIB, seed)
        elapsed = time.perf_counter() - started
        size = item.path.stat().st_size / MIB
        _say(f"  {size:,.1f} MiB in {elapsed:.1f} s")
    return inputs


# -- measuring -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_rss_mib: float
    user_s: float
    system_s: float
    load_before: float  # 1-minute load average before and after the run (noise indicator)
    load_after: float


class BenchmarkError(RuntimeError):
    """The ingest under test failed."""


def culprit_command() -> list[str]:
    """The ``culprit`` console script of this interpreter's environment (or ``-m analyzer``)."""
    script = Path(sys.executable).with_name("culprit")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "analyzer"]


#: Runs ``argv[2:]`` as a child, waits for it with ``os.wait4`` and writes the kernel's rusage
#: of that child to the file ``argv[1]``. The launcher is a small fresh process, so the child's
#: peak RSS starts from the launcher's (~10 MiB), not from this benchmark process's: on Linux a
#: process's high-water mark survives ``exec`` and a child forked from a big parent inherits it.
_LAUNCHER: Final = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
child.returncode = code = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as out:
    json.dump({"maxrss": usage.ru_maxrss, "user": usage.ru_utime, "system": usage.ru_stime}, out)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_once(command: list[str], log: Path) -> Run:
    """Run ``command`` via the launcher; wall time and the kernel's rusage of the child."""
    report = log.with_suffix(".rusage.json")
    launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(report)]
    load_before = os.getloadavg()[0]
    with log.open("wb") as sink:
        started = time.perf_counter()
        child = subprocess.Popen([*launcher, *command], stdout=sink, stderr=subprocess.STDOUT)
        try:
            code = child.wait()
        except BaseException:
            child.kill()
            child.wait()
            raise
        seconds = time.perf_counter() - started
    if code != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise BenchmarkError(f"{shlex.join(command)} exited with {code}:\n{tail}")
    usage = json.loads(report.read_text())
    rss_bytes = usage["maxrss"] * (1 if sys.platform == "darwin" else 1024)
    return Run(
        seconds, rss_bytes / MIB, usage["user"], usage["system"], load_before, os.getloadavg()[0]
    )


def _case_facts(case: Path) -> dict[str, Any]:
    meta = json.loads((case / "case.json").read_text())
    files = pl.read_parquet(case / "files.parquet").select("reader", "status")
    size = sum(p.stat().st_size for p in case.rglob("*") if p.is_file())
    return {
        "counts": meta["counts"],
        "readers": sorted(set(files["reader"].to_list())),
        "statuses": sorted(set(files["status"].to_list())),
        "case_mib": size / MIB,
    }


def measure(item: Input, runs: int, workdir: Path) -> dict[str, Any]:
    case = workdir / f"case-{item.name}"
    command = [
        *culprit_command(),
        "ingest",
        str(item.path),
        "-o",
        str(case),
        "--force",
        "--quiet",
    ]
    results: list[Run] = []
    for number in range(1, runs + 1):
        shutil.rmtree(case, ignore_errors=True)
        run = run_once(command, workdir / f"{item.name}-{number}.log")
        results.append(run)
        mb_s = item.path.stat().st_size / MIB / run.seconds
        _say(
            f"  {item.name} run {number}/{runs}: {run.seconds:.1f} s ({mb_s:.1f} MiB/s), "
            f"peak RSS {run.peak_rss_mib:,.0f} MiB, CPU {run.user_s + run.system_s:.1f} s, "
            f"load {run.load_before:.1f} -> {run.load_after:.1f}"
        )
    facts = _case_facts(case)
    shutil.rmtree(case, ignore_errors=True)
    size = item.path.stat().st_size
    seconds = [run.seconds for run in results]
    median = statistics.median(seconds)
    return {
        "input": item.name,
        "file": item.path.name,
        "bytes": size,
        "input_mib": size / MIB,
        "records": facts["counts"]["records"],
        "rows": facts["counts"]["rows"],
        "counts": facts["counts"],
        "readers": facts["readers"],
        "statuses": facts["statuses"],
        "case_mib": facts["case_mib"],
        "median_s": median,
        "min_s": min(seconds),
        "max_s": max(seconds),
        "mib_per_s": size / MIB / median,
        "peak_rss_mib": max(run.peak_rss_mib for run in results),
        "runs": [run.__dict__ for run in results],
        "command": shlex.join(command),
    }


# -- machine description and reporting ------------------------------------------------------


def _first_value(path: str, key: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key:
                return value.strip()
    except OSError:
        pass
    return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def source_digest() -> str:
    """SHA-256 over the analyzer package sources (to notice edits during a run)."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "analyzer").rglob("*.py")):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def machine() -> dict[str, Any]:
    memory_kib = _first_value("/proc/meminfo", "MemTotal")
    versions: dict[str, str | None] = {}
    for package in ("culprit", "polars", "pyarrow", "duckdb", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "analyzer")
    return {
        "hostname": socket.gethostname(),
        "cpu": _first_value("/proc/cpuinfo", "model name") or platform.processor(),
        "cores": os.cpu_count(),
        "ram_gib": round(int(memory_kib.split()[0]) / MIB, 1) if memory_kib else None,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "git_commit": _git("rev-parse", "HEAD"),
        "analyzer_modified_vs_commit": bool(dirty),
    }


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def table(results: list[dict[str, Any]], measured: list[str] | None = None) -> str:
    """The results table; ``measured`` adds a column saying when each row was measured."""
    extra = measured is not None
    head = (
        "| input | reader | "
        + ("measured | " if extra else "")
        + "input MiB | lines | rows | median s | min s | max s | MiB/s | peak RSS MiB |\n"
        + "|---|---|"
        + ("---|" if extra else "")
        + "--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    body = "".join(
        f"| {r['input']} | {', '.join(r['readers'])} | "
        + (f"{measured[i]} | " if measured is not None else "")
        + f"{r['input_mib']:,.1f} | {r['records']:,} | {r['rows']:,} | {r['median_s']:.1f} "
        f"| {r['min_s']:.1f} | {r['max_s']:.1f} | {r['mib_per_s']:.1f} "
        f"| {r['peak_rss_mib']:,.0f} |\n"
        for i, r in enumerate(results)
    )
    return head + body


def _commit(report: dict[str, Any]) -> str:
    m = report["machine"]
    text = f"`{(m['git_commit'] or '?')[:12]}`"
    return text + ("+" if m["analyzer_modified_vs_commit"] else "")


def latest_results(directory: Path) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """Per input, the latest recorded result: ``(report, result, file name)``.

    Reports are ordered by ``recorded_at`` (older reports only have ``date``, which sorts
    before any time of the same day), then by file name. Inputs come in :data:`INPUTS`
    order, unknown ones after them.
    """
    latest: dict[str, tuple[tuple[str, str], dict[str, Any], dict[str, Any], str]] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        key = (str(report.get("recorded_at") or report.get("date", "")), path.name)
        for result in report.get("results", []):
            name = result["input"]
            if name not in latest or key >= latest[name][0]:
                latest[name] = (key, report, result, path.name)
    order = {name: index for index, name in enumerate(INPUTS)}
    names = sorted(latest, key=lambda name: (order.get(name, len(order)), name))
    return [latest[name][1:] for name in names]


def markdown_section(entries: list[tuple[dict[str, Any], dict[str, Any], str]]) -> str:
    """The text between the markers: the latest result of every input, and the runs."""
    files = list(dict.fromkeys(file for _, _, file in entries))
    runs = {file: report for report, _, file in entries}
    lines = [
        BEGIN,
        "Each row is the latest recorded measurement of its input; the *measured* column "
        "gives that run's date and commit (`+`: with uncommitted changes to `analyzer/`) and "
        "the run it came from (below). MiB/s = input size / median wall time.",
        "",
        table(
            [result for _, result, _ in entries],
            [
                f"{report['date']}, {_commit(report)} ({chr(ord('A') + files.index(file))})"
                for report, _, file in entries
            ],
        ).rstrip("\n"),
        "",
    ]
    for index, file in enumerate(files):
        report = runs[file]
        m = report["machine"]
        v = m["versions"]
        names = ", ".join(r["input"] for r in report["results"])
        lines.append(
            f"* ({chr(ord('A') + index)}) `benchmarks/results/{file}`: measured {report['date']} "
            f"on `{m['hostname']}`: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, "
            f"{m['os']}; Python {m['python']}, culprit {v['culprit']}, polars {v['polars']}, "
            f"pyarrow {v['pyarrow']}, duckdb {v['duckdb']}, numpy {v['numpy']}; commit "
            f"`{(m['git_commit'] or '?')[:12]}`"
            + (
                " with uncommitted changes to `analyzer/`"
                if m["analyzer_modified_vs_commit"]
                else ""
            )
            + f" (sha256 of the `analyzer/` sources `{report['analyzer_sha256'][:12]}`)"
            + f". Command (from the repository root): `{report['command']}` ({names}; "
            f"{report['runs']} run(s) per input, each `culprit ingest FILE -o CASE --force "
            "--quiet` in a fresh child process)." + _change_note(report)
        )
    lines.append("")
    for _, r, _ in entries:
        c = r["counts"]
        lines.append(
            f"* {r['input']}: {c['records']:,} lines -> {c['rows']:,} rows, {c['folded']:,} "
            f"folded, {c['quarantined']:,} quarantined, {c['duplicates']:,} duplicates; case "
            f"{r['case_mib']:,.0f} MiB on disk; CPU per run "
            + ", ".join(f"{run['user_s'] + run['system_s']:.1f} s" for run in r["runs"])
            + "; 1-minute load average before -> after each run "
            + ", ".join(f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in r["runs"])
            + "."
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def update_results_md(section: str) -> None:
    text = RESULTS_MD.read_text() if RESULTS_MD.is_file() else "# Benchmark results\n\n"
    if BEGIN in text and END in text:
        before, _, rest = text.partition(BEGIN)
        _, _, after = rest.partition(END)
        text = before + section.rstrip("\n") + after
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS_MD.write_text(text)


def _change_note(report: dict[str, Any]) -> str:
    """What changed in the repository while the run was going on, if anything."""
    if not report["analyzer_changed_during_run"]:
        return ""
    after = report.get("analyzer_sha256_after")
    if after is None:  # recorded before the end state was kept
        return " Warning: `analyzer/` sources or the checked-out commit changed during this run."
    if after != report["analyzer_sha256"]:
        return (
            " Warning: `analyzer/` sources changed during this run (sha256 "
            f"`{after[:12]}` at its end)."
        )
    return (
        f" The checked-out commit moved to `{(report.get('git_commit_after') or '?')[:12]}` "
        "during this run; the `analyzer/` sources were the same at its start and end."
    )


def _results_path(date: str, hostname: str) -> Path:
    """``results/<date>-<host>.json``, or ``-2``, ``-3`` … when that run is already there."""
    path = HERE / "results" / f"{date}-{hostname}.json"
    number = 2
    while path.exists():
        path = HERE / "results" / f"{date}-{hostname}-{number}.json"
        number += 1
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.ingest", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size-mb", type=int, default=1024, help="size of each input, MiB")
    parser.add_argument("--runs", type=int, default=3, help="ingest runs per input")
    parser.add_argument("--cache", type=Path, default=HERE / ".cache", help="input cache dir")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument(
        "--inputs",
        default=",".join(INPUTS),
        help=f"comma-separated subset of {','.join(INPUTS)}",
    )
    parser.add_argument(
        "--no-record", action="store_true", help="do not write results JSON or RESULTS.md"
    )
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.inputs.split(",") if name.strip()]
    if args.size_mb < 1 or args.runs < 1 or not names or not set(names) <= set(INPUTS):
        parser.error(f"--size-mb and --runs must be positive; --inputs: {','.join(INPUTS)}")
    command = shlex.join(["python", "-m", "benchmarks.ingest", *sys.argv[1:]])
    if argv is not None:
        command = shlex.join(["python", "-m", "benchmarks.ingest", *argv])

    inputs = prepare_inputs(args.cache, args.size_mb, args.seed, names)
    digest = source_digest()
    host = machine()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="culprit-bench-") as workdir:
        for item in inputs:
            _say(f"ingesting {item.path.name} x{args.runs}")
            try:
                results.append(measure(item, args.runs, Path(workdir)))
            except BenchmarkError as exc:
                _say(f"error: {exc}")
                return 1
    digest_after, head_after = source_digest(), _git("rev-parse", "HEAD")
    changed = digest_after != digest or head_after != host["git_commit"]
    now = dt.datetime.now(dt.UTC).astimezone()
    report = {
        "date": now.date().isoformat(),
        "recorded_at": now.isoformat(timespec="seconds"),
        "command": command,
        "runs": args.runs,
        "size_mib": args.size_mb,
        "seed": args.seed,
        "generator_versions": {name: GENERATOR_VERSIONS[name] for name in names},
        "method": (
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the culprit "
            "process from os.wait4 in a small Python launcher"
        ),
        "machine": host,
        "analyzer_sha256": digest,
        "analyzer_changed_during_run": changed,
        "analyzer_sha256_after": digest_after,
        "git_commit_after": head_after,
        "rss_budget_mib": RSS_BUDGET_MIB,
        "results": results,
    }
    print(table(results), end="")
    if changed:
        _say("warning:" + (_change_note(report).removeprefix(" Warning:") or " see the report"))
    if not args.no_record:
        out = _results_path(report["date"], report["machine"]["hostname"])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        update_results_md(markdown_section(latest_results(out.parent)))
        _say(f"wrote {out.relative_to(REPO)} and {RESULTS_MD.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
