"""The ``modelarts`` input: one ModelArts worker log of an 8-NPU node running ranks 0-7 of a
32-rank PyTorch job (formats.md §3.4, §3.5).

The file is ``modelarts-job-<uuid>-worker-0.log`` in a directory of its own (the reader
recognizes a worker log by that name). Mostly per-step ``[rankN]: … - train - INFO - step N |
loss …`` prints, then CANN plog lines (HCCL, RUNTIME, GE, ASCENDCL; ``[TRACE]`` status lines),
``[ModelArts Service Log]`` / ``[Modelarts Service Log]`` platform lines, logrus
``time="…+08:00" … Platform=ModelArts-Service`` upload lines, Python warnings and errors,
torch_npu ``ERR02200`` / ``ERR00100`` lines, and rare blocks: ``EI0002`` notify-wait timeouts
with TAB-indented continuation lines (bare or behind ``[rankN]:``), ``EE9999`` inner errors,
Python tracebacks, a process restart. Zone-less stamps are in UTC+8 container time; one step
per 2.4 s and rank, so 1 GiB spans about 19 days.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Final

import numpy as np
import polars as pl

from benchmarks.inputs.clock import FIRST_STEP, START_NS, STEP_NS, subsecond_digits
from benchmarks.inputs.pool import Category, Layout, Line, Pool, UnitsSpec, fill, make_pool, stamped
from benchmarks.inputs.strings import go_quote, random_uuid

#: The worker's container clock is UTC+8 (ModelArts CN regions); zone-less stamps are local.
UTC_OFFSET_NS: Final = 8 * 3600 * 1_000_000_000
#: 1 GiB covers about 19 days of training: start 20 days before the TPU inputs.
JOB_START_NS: Final = START_NS - 20 * 86_400 * 1_000_000_000
HOST_IP: Final = "172.16.24.51"
RANKS: Final = 8  # ranks (NPUs) on this node: 0-7 of a 32-rank job on 4 nodes
WORLD_SIZE: Final = 32
RANK0_PID: Final = 4102  # pid of rank 0; rank r is RANK0_PID + r
#: Categories: per-step prints, other info, warnings, errors, multi-line blocks.
WEIGHTS: Final = np.array([0.7, 0.26, 0.0353, 0.0045, 0.0002])
#: Each of the 8 ranks prints one line per step; other lines fill the time in between.
UNIT_NS: Final = int(STEP_NS * WEIGHTS[Category.CHATTER]) // RANKS

# Stamp kinds (pool line families): what sits between a pool line's lead and its body.
NO_STAMP: Final = 0
ASCTIME_STAMP: Final = 1  # 2026-11-29 17:20:05,117 (Python logging)
ISO_STAMP: Final = 2  # 2026-11-29T17:20:05 (logrus; the body goes on with '+08:00" level=')
CANN_STAMP: Final = 3  # 2026-11-29-17:20:05.117.205 (CANN plog, error-code blocks)
TORCH_STAMP: Final = 4  # 2026-11-29-17:20:05 (torch_npu)

#: Where the job's Python packages are installed (paths in warnings and tracebacks).
_SITE: Final = "/home/ma-user/anaconda3/envs/PyTorch-2.1.0/lib/python3.9/site-packages"


def modelarts_job(seed: int) -> str:
    """The job UUID in the worker log's name."""
    return random_uuid(random.Random(f"culprit-bench-modelarts-job-{seed}"))


def cache_path(stem: str, seed: int) -> Path:
    """Where the input goes in the cache, relative to it, given its versioned stem.

    The reader recognizes a worker log by its name, which cannot carry the size, seed and
    version: the log lives in a directory named after them.
    """
    return Path(stem) / f"modelarts-job-{modelarts_job(seed)}-worker-0.log"


def _rank(rank: int | None) -> str:
    """torchrun's ``[rankN]: `` prefix (none for ``None``)."""
    return "" if rank is None else f"[rank{rank}]: "


def _plog(
    level: str, module: str, rank: int, where: str, message: str, glued: bool = False
) -> Line:
    """A CANN plog line; RUNTIME/ASCENDCL glue the thread id to ``[file:line]``, HCCL and GE
    put ``[pid]`` after it (formats.md §3.5)."""
    pid = RANK0_PID + rank
    after = f"{pid + 64} " if glued else f" [{pid}]"
    return (CANN_STAMP, f"[{level}] {module}({pid},python):", f" [{where}]{after}{message}")


def _torch_npu(
    rank: int, code: str, message: str, prefixed: bool = True, rank_id: int | None = None
) -> Line:
    """A torch_npu error line (``RankID:-1`` before the process group exists)."""
    shown = rank if rank_id is None else rank_id
    return (
        TORCH_STAMP,
        f"{_rank(rank if prefixed else None)}[ERROR] ",
        f" (PID:{RANK0_PID + rank}, Device:{rank}, RankID:{shown}) {code} {message}",
    )


def _pylog(rank: int | None, logger: str, level: str, message: str) -> Line:
    return (ASCTIME_STAMP, _rank(rank), f" - {logger} - {level} - {message}")


def _logrus(level: str, message: str, where: str) -> Line:
    return (
        ISO_STAMP,
        'time="',
        f'+08:00" level={level} msg={go_quote(message)} file="{where}" Command=obs/upload '
        "Component=ma-training-toolkit Platform=ModelArts-Service",
    )


def _service(message: str, capital: bool = True) -> Line:
    """A platform line; both capitalisations occur (formats.md §3.4)."""
    return (NO_STAMP, "[ModelArts Service Log]" if capital else "[Modelarts Service Log]", message)


def _service_asctime(level: str, message: str) -> Line:
    return (ASCTIME_STAMP, "[Modelarts Service Log]", f" - {level} - {message}")


def _ei0002(r: random.Random, rank: int, prefix: str) -> list[Line]:
    """An ``EI0002`` notify-wait timeout block: TAB-indented continuation lines and the
    unindented ``there are(is)`` / ``]`` lines CANN writes inside it (formats.md §3.5)."""
    remote = r.randrange(RANKS, WORLD_SIZE)
    server = f"172.16.24.{51 + remote // RANKS}"
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
            CANN_STAMP,
            f"{prefix}EI0002: [PID: {RANK0_PID + rank}] ",
            " The wait execution of the Notify register times out. Reason: The Notify register "
            f"has not received the Notify record from remote rank [{remote}].base information: "
            f"[streamID:[14], taskID[{r.randrange(2, 40)}], taskType[Notify Wait], "
            f"tag[HcomAllReduce_{r.randrange(10**18, 10**19)}_0].] task information: "
            f"[notify id:[0x00000001000000{r.randrange(16, 99)}], stage:[ffffffff], "
            f"remote rank:[{remote}].",
        ),
        (NO_STAMP, prefix, "there are(is) 1 abnormal device(s):"),
        (
            NO_STAMP,
            prefix,
            f"\tserverId[{server}], deviceId[{remote % RANKS}], Heartbeat Lost Occurred, "
            "Possible Reason: 1. Process has exited, 2. Network Disconnected",
        ),
        (NO_STAMP, prefix, "]"),
        *((NO_STAMP, prefix, line) for line in text),
    ]


def _ee9999(r: random.Random, rank: int) -> list[Line]:
    """An ``EE9999`` inner-error block (newer CANN: pid and stamp in the detail line)."""
    return [
        (NO_STAMP, "", "EE9999: Inner Error!"),
        (
            CANN_STAMP,
            f"EE9999: [PID: {RANK0_PID + rank}] ",
            f" The error from device(chipId:{rank}, dieId:0), serial number is "
            f"{r.randrange(1, 9)}, event wait timeout occurred during task execution, "
            "stream_id:19, sq_id:19, task_id:16, event_id=73, timeout=1866s."
            "[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1400]",
        ),
        (
            NO_STAMP,
            "",
            f"\t[driver interface] halMemAlloc failed: device_id={rank}, size=32212254720, "
            "type=2, env_type=3, drvRetCode=6![FUNC:ReportError][FILE:npu_driver.cc][LINE:568]",
        ),
        (
            NO_STAMP,
            "",
            "\trtMalloc execute failed, reason=[driver error:out of memory]"
            "[FUNC:ReportError][FILE:error_message_manage.cc][LINE:566]",
        ),
    ]


def _traceback(rank: int) -> list[Line]:
    """A Python traceback through torchrun's ``[rankN]:`` prefix, then torch_npu's line."""
    code = "/home/ma-user/modelarts/user-job-dir/code/pretrain_gpt.py"
    return [
        *(
            (NO_STAMP, _rank(rank), line)
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


def build_pool(seed: int) -> Pool:
    """Distinct lines of one ModelArts worker log, grouped into units per category."""
    r = random.Random(f"culprit-bench-modelarts-{seed}")
    ident = f"{HOST_IP}%enp_60000_0_{r.randrange(10**15, 10**16)}"

    def step(rr: random.Random) -> int:
        return FIRST_STEP + rr.randrange(600_000)

    def info(rr: random.Random) -> list[Line]:
        rank = rr.randrange(RANKS)
        pid = RANK0_PID + rank
        choice = rr.randrange(12)
        if choice == 0:
            return [
                _plog(
                    "INFO",
                    "HCCL",
                    rank,
                    "op_base.cc:1292",
                    f"Entry-HcclCommInitRootInfoInner:ranks[{WORLD_SIZE}], rank[{rank}], rootinfo: "
                    f"host ip[{HOST_IP}] port[60000] nicDeploy[1] identifier[{ident}], "
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
                    f"op[sum], streamId[{rr.randrange(2, 20)}], rankSize[{WORLD_SIZE}], "
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
                    CANN_STAMP,
                    f"[TRACE] HCCL({pid},python):",
                    f" [status:stop] [hcom.cc:336][hccl-{pid}-0-1795943650-hccl_world_group]"
                    f"[{rank}]hcom op complete,take time [{rr.randrange(100, 90_000)}]us, "
                    f"rankNum[{WORLD_SIZE}], rank[{rank}]",
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
                    NO_STAMP,
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
        where = f"ge_api.cc:{rr.randrange(300, 700)}"
        graph = f"Session {rr.randrange(100)} run graph {rr.randrange(1, 40)} success"
        return [_plog("INFO", "GE", rank, where, graph)]

    def warning(rr: random.Random) -> list[Line]:
        rank = rr.randrange(RANKS)
        choice = rr.randrange(5)
        if choice == 0:
            fallback = (
                f"[HcclCommunicator]rank[{rank}] AlltoAllV is not supported on current topo, "
                "fallback to pairwise"
            )
            return [_plog("WARNING", "HCCL", rank, "hccl_communicator.cc:2113", fallback)]
        if choice == 1:
            usage = f"memory usage of device {rank} is {rr.uniform(90, 99):.1f}%"
            return [_plog("WARNING", "RUNTIME", rank, "device.cc:331", usage, glued=True)]
        if choice == 2:  # warnings.warn: the source line follows, indented
            return [
                (
                    NO_STAMP,
                    _rank(rank),
                    f"{_SITE}/torch_npu/utils/storage.py:38: UserWarning: TypedStorage is "
                    "deprecated. It will be removed in the future and UntypedStorage will be "
                    "the only storage class.",
                ),
                (NO_STAMP, _rank(rank), "  if self.device.type != 'cpu':"),
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
        rank = rr.randrange(RANKS)
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
                    f"{rank}, name is {random_uuid(rr)}",
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
        rank = rr.randrange(RANKS)
        choice = rr.randrange(5)
        if choice == 0:  # torch_npu's line, then CANN's block on stderr (no prefix)
            return [
                _torch_npu(rank, "ERR02200", "DIST call hccl api failed."),
                *_ei0002(rr, rank, ""),
            ]
        if choice == 1:  # the same through torchrun's [rankN]: prefix, TABs after it
            return [*_traceback(rank), *_ei0002(rr, rank, _rank(rank))]
        if choice == 2:
            return _traceback(rank)
        if choice == 3:
            return _ee9999(rr, rank)
        return [  # a rank process dies and ModelArts restarts the training processes
            _service_asctime(
                "INFO", f"proc-rank-{rank}-device-{rank} (pid: {RANK0_PID + rank}) has exited"
            ),
            _service_asctime("INFO", "Begin destroy training processes"),
            _service("Training end with return code: 1", capital=False),
            _service_asctime("INFO", "Begin launch training processes"),
        ]

    specs: list[UnitsSpec] = [
        # One chatter line: its body is rendered per row (the step prints).
        (Category.CHATTER, lambda _: [(NO_STAMP, "", "")], 1),
        (Category.INFO, info, 2400),
        (Category.WARNING, warning, 600),
        (Category.ERROR, error, 300),
        (Category.MULTILINE, block, 60),
    ]
    return make_pool(r, specs)


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


def generate(path: Path, target: int, seed: int) -> None:
    """Write about ``target`` bytes of worker log to ``path``."""
    pool = build_pool(seed)

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        rows = frame.height
        frame = frame.with_columns(
            loss=pl.Series(rng.integers(19_000, 26_000, size=rows)),
            gnorm=pl.Series(rng.integers(600, 1_400, size=rows)),
        )
        local_ns = pl.col("pts") + UTC_OFFSET_NS
        local = local_ns.cast(pl.Datetime("ns"))
        millis = subsecond_digits(local_ns, 3)
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
            ASCTIME_STAMP: asctime,
            ISO_STAMP: local.dt.to_string("%Y-%m-%dT%H:%M:%S"),
            CANN_STAMP: cann,
            TORCH_STAMP: local.dt.to_string("%Y-%m-%d-%H:%M:%S"),
        }
        step = FIRST_STEP + (pl.col("pts") - JOB_START_NS) // STEP_NS
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
        line = pl.when(pl.col("line") == 0).then(chatter).otherwise(stamped(pool, frame, stamps))
        return frame.select(pl.concat_str([line, pl.lit("\n")])).to_series()

    first = dt.datetime.fromtimestamp((JOB_START_NS + UTC_OFFSET_NS) // 1_000_000_000 - 60, dt.UTC)
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
            f"proc-rank-{rank}-device-{rank} (pid: {RANK0_PID + rank}) is launched"
            for rank in range(RANKS)
        ),
    ]
    head = "".join(line + "\n" for line in lines).encode()
    layout = Layout(pool, WEIGHTS, hosts=RANKS, start_ns=JOB_START_NS, unit_ns=UNIT_NS)
    fill(path, target, seed, layout, render, head)
