"""The lines JAX training workers on TPU write, shared by the ``cloud_logging`` and ``text``
inputs: the line pool, the simulated hosts and the renderer of a line's absl / TF tsl header.

Payloads are mostly ``train.py:211] completed step: N, seconds: X`` chatter, with other absl /
TF tsl / Python logging lines, some warnings and errors, and a few Python tracebacks.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import polars as pl

from benchmarks.inputs.clock import FIRST_STEP
from benchmarks.inputs.pool import Category, Line, Pool, UnitMaker, UnitsSpec, make_pool
from benchmarks.inputs.strings import compact_json, random_hex, random_uuid

# Line families (how the header in front of a pool body is rendered).
ABSL_PY: Final = 0  # I1129 18:35:15.123456 140231558416192 train.py:211] msg
ABSL_CC: Final = 1  # E1129 18:35:15.123456    1234 coordination_service_agent.cc:332] msg
TSL: Final = 2  # 2026-11-29 18:35:15.101020: E external/xla/...cc:1170] msg
PYLOG: Final = 3  # WARNING:absl:msg (the body carries its own prefix)
RAW: Final = 4  # traceback lines, no prefix

#: Category weights: chatter, info, warnings, errors, tracebacks.
WEIGHTS: Final = np.array([0.905, 0.066, 0.023, 0.0058, 0.0002])
#: 1,024 hosts: 16 slices (JobSet jobs) of 64 workers.
SLICES: Final = 16
WORKERS: Final = 64

#: A line template: family, level letter (the lead), and a body drawn from the generator.
Template = tuple[int, str, Callable[[random.Random], str]]


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
            f"key {random_hex(r, 16)}"
        ),
    ),
    (
        TSL,
        "I",
        lambda r: (
            f"external/xla/xla/service/service.cc:163] XLA service 0x{random_hex(r, 12)} "
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


def _one_of(templates: Sequence[Template]) -> UnitMaker:
    """Makes a one-line unit from a template picked at random."""

    def make(r: random.Random) -> list[Line]:
        family, level, render = r.choice(templates)
        return [(family, level, render(r))]

    return make


def build_pool(seed: int) -> Pool:
    """A few thousand distinct lines, grouped into units per category."""
    r = random.Random(f"culprit-bench-pool-{seed}")
    specs: list[UnitsSpec] = [
        # One chatter line: its body is rendered per row (completed step N).
        (Category.CHATTER, lambda _: [(ABSL_PY, "I", "")], 1),
        (Category.INFO, _one_of(_INFO), 1600),
        (Category.WARNING, _one_of(_WARNING), 800),
        (Category.ERROR, _one_of(_ERROR), 300),
        (Category.MULTILINE, _traceback, 60),
    ]
    return make_pool(r, specs)


@dataclass(frozen=True)
class Hosts:
    """Per-host strings of the simulated TPU workers."""

    labels: pl.Series  # the entry's "labels" object, JSON
    resource: pl.Series  # the entry's "resource" object, JSON
    py_tid: pl.Series  # Python thread ident (absl-py headers)
    cc_tid: pl.Series  # C++ thread id (absl C++ headers)


def build_hosts(seed: int, count: int) -> Hosts:
    """The first ``count`` workers of the JobSet, slice after slice."""
    r = random.Random(f"culprit-bench-hosts-{seed}")
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    labels: list[str] = []
    resources: list[str] = []
    pool_hash = [random_hex(r, 8) for _ in range(SLICES)]
    controller = [random_uuid(r) for _ in range(SLICES)]
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
        labels.append(compact_json(label))
        resources.append(compact_json(resource))
    return Hosts(
        labels=pl.Series("labels", labels, dtype=pl.String),
        resource=pl.Series("resource", resources, dtype=pl.String),
        py_tid=pl.Series(
            "py_tid", [str(r.randrange(139_000_000_000_000, 141_000_000_000_000)) for _ in labels]
        ),
        cc_tid=pl.Series("cc_tid", [str(r.randrange(100, 99_999)) for _ in labels]),
    )


def payload(pool: Pool, body: pl.Series, hosts: Hosts) -> pl.Expr:
    """The line as the program wrote it (header + body), without the newline.

    ``body`` stands in for ``pool.body`` (the same lines, escaped as the output needs).
    """
    py_tid, cc_tid = hosts.py_tid, hosts.cc_tid
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
    text = (
        pl.when(line == 0).then(chatter).otherwise(line.replace_strict(np.arange(len(body)), body))
    )
    return pl.concat_str([header, text])
