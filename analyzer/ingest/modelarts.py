"""The ``modelarts`` readers: Huawei Cloud ModelArts training jobs on Ascend NPUs (formats.md §3).

Two readers, because a ModelArts dump holds two kinds of files:

* :class:`ModelArtsLogReader` (``modelarts.<family>``): the per-task worker logs downloaded
  from the console or OBS (``modelarts-job-<uuid>-worker-N.log`` and the newer
  ``modelarts-job-<uuid>-<component>-worker-N-<ip>-<suffix>.log``). One file interleaves the
  platform's ``[ModelArts Service Log]`` lines, the training toolkit's logrus lines, CANN
  plog lines, MindSpore and torch_npu lines, CANN error-code blocks (``EI0002:``,
  ``EE9999: Inner Error!``) and plain Python output. The file name gives the job (workload),
  the task (worker) and, for new names, the node's IP (host).
* :class:`ModelArtsApiReader` (``modelarts_api.<kind>``): JSON saved from the training-job
  APIs (ShowTrainingJobDetails, ListTrainingJobEvents, ListTrainingJobStages), one row per
  object that says something happened: the job, each task status, each running record and
  each recover record inside it, each event, each stage.

Zone-less stamps (CANN, torch_npu, MindSpore, the platform's asctime) are container-local:
the offset is learned from the logrus ``time="…+08:00"`` lines in the head of the same file
(§3.6), ``--tz`` overrides it, UTC is the last resort.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import polars as pl

from analyzer.ingest import grammars, jsondoc
from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.extra import Kind, append_json
from analyzer.ingest.framing import BOM
from analyzer.ingest.grammars import ISO_FORMAT, ISO_NORMALIZE, Grammar
from analyzer.ingest.lines import FileHints, LineReader, looks_binary, path_host, year_anchor
from analyzer.ingest.timestamps import NS, check_tz, local_time, rfc3339
from analyzer.schema import severity_expr
from analyzer.streams import Content

# -- file names ---------------------------------------------------------------------------------

#: formats.md §3.4, plus the compression suffix a bundle may keep.
_WORKER_LOG_NAME: Final = re.compile(
    r"^modelarts-job-(?P<job>[0-9a-f-]{36})-(?:(?P<comp>.+?)-)?(?P<task>worker-(?P<n>\d+))"
    r"(?:-(?P<ip>\d{1,3}(?:\.\d{1,3}){3})-(?P<sfx>\w+))?\.log(?:\.gz|\.zst)?$"
)
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TASK: Final = re.compile(r"^worker-(\d+)$")


@dataclass(frozen=True)
class WorkerLogName:
    """What a worker log's file name says: the job, the task, and (new names) the node."""

    job: str
    task: str
    worker: int
    component: str | None = None
    ip: str | None = None
    suffix: str | None = None


def parse_worker_log_name(path: str) -> WorkerLogName | None:
    """The parts of a ModelArts worker log name, or ``None`` for any other file name.

    The file name is the only place the job, task and node IP appear: the lines themselves
    name none of them.
    """
    match = _WORKER_LOG_NAME.match(path.rsplit("/", 1)[-1])
    if match is None:
        return None
    return WorkerLogName(
        job=match["job"],
        task=match["task"],
        worker=int(match["n"]),
        component=match["comp"],
        ip=match["ip"],
        suffix=match["sfx"],
    )


def _job_id_in_path(path: str) -> str | None:
    """The last job UUID in a path (API JSON saved as ``<job id>-events.json`` and the like)."""
    for text in (path.rsplit("/", 1)[-1], path):
        found = _UUID.findall(text.lower())
        if found:
            return str(found[-1])
    return None


# -- worker log grammars ------------------------------------------------------------------------

_CANN_LEVEL: Final = "TRACE|DEBUG|INFO|WARNING|ERROR|EVENT|EXCEPTION|CRITICAL"
_CANN_STAMP: Final = r"\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3}"
#: ``2025-10-24-11:18:29.499.235`` (ms and µs groups) -> ``2025-10-24 11:18:29.499235``.
_CANN_NORMALIZE: Final = (
    (r"^(\d{4}-\d{2}-\d{2})-", "${1} "),
    (r"\.(\d{3})\.(\d{3})$", ".${1}${2}"),
)
#: ``[LEVEL] MODULE(pid,proc):`` (the HCCL guide also prints ``[ERROR]HCCL(…``, no space).
_CANN_HEAD: Final = (
    rf"^\[(?P<lvl>{_CANN_LEVEL})\] ?(?P<module>[A-Z][A-Z0-9_]*)\((?P<pid>\d+),(?P<proc>[^)]*)\):"
)
_SERVICE: Final = r"^\[Model[Aa]rts Service Log\](?:\[(?P<tag>[a-z][\w-]*)\])?"

#: ModelArts/Ascend grammars first (formats.md §3.4, §3.5), then the common ones (§5.1).
MODELARTS_GRAMMARS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "service_asctime",
        "service",
        rf"{_SERVICE}(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}[,.]\d{{3}}) - "
        r"(?P<lvl>[A-Z]+) - ",
        "local",
        ISO_FORMAT,
        ISO_NORMALIZE,
        attrs=("tag",),
    ),
    Grammar(
        "service_bracket",
        "service",
        rf"{_SERVICE}\[(?P<lvl>[A-Z]+)\]"
        r"\[(?P<stamp>\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}[,.]\d{3})\]: ?",
        "local",
        "%Y/%m/%d %H:%M:%S%.f",
        ((",", "."),),
        attrs=("tag",),
    ),
    Grammar(
        "service_level",
        "service",
        rf"{_SERVICE}(?P<lvl>DEBUG|INFO|WARN|WARNING|ERROR): ",
        "none",
        attrs=("tag",),
    ),
    Grammar("service", "service", rf"{_SERVICE} ?", "none", attrs=("tag",)),
    Grammar(
        "logrus",
        "logrus",
        r'^time="(?P<stamp>[^"]+)" level=(?P<lvl>[a-z]+) msg=',
        "zoned",
    ),
    Grammar(
        # C++ side ``DEVICE(pid,hex tid,proc)`` with ``Func]`` (lambdas print ``operator()]``);
        # Python side ``ME(pid:tid,proc)``.
        "mindspore",
        "mindspore",
        rf"^\[(?P<lvl>{_CANN_LEVEL})\] ?(?P<module>[A-Z][A-Z0-9_]*)"
        r"\((?P<pid>\d+)[,:](?P<tid>[0-9a-fA-F]+),(?P<proc>[^)]*)\):"
        rf"(?P<stamp>{_CANN_STAMP}) \[(?P<logger>[^\]\s]+:\d+)\] ?"
        r"(?:(?P<func>[A-Za-z_]\w*(?:\(\))?)\] )?",
        "local",
        ISO_FORMAT,
        _CANN_NORMALIZE,
        attrs=("module", "pid", "proc", "func"),
    ),
    Grammar(
        # RUNTIME/ASCENDCL glue the thread id to the file: ``[engine.cc:914]150900 Report…``.
        "cann_glued",
        "cann",
        _CANN_HEAD + rf"(?P<stamp>{_CANN_STAMP}) (?:\[(?P<status>[a-z]+:[a-z]+)\] )?"
        r"\[(?P<logger>[^\]\s]+:\d+)\](?P<tid>\d+) ",
        "local",
        ISO_FORMAT,
        _CANN_NORMALIZE,
        attrs=("module", "pid", "proc", "status"),
    ),
    Grammar(
        # HCCL puts ``[TID]`` after the file; TRACE status lines start with ``[status:stop]``.
        "cann",
        "cann",
        _CANN_HEAD + rf"(?P<stamp>{_CANN_STAMP}) (?:\[(?P<status>[a-z]+:[a-z]+)\] )?"
        r"\[(?P<logger>[^\]\s]+:\d+)\](?: ?\[(?P<tid>\d+)\])? ?",
        "local",
        ISO_FORMAT,
        _CANN_NORMALIZE,
        attrs=("module", "pid", "proc", "status"),
    ),
    Grammar(
        # The driver has no ``[file:line]``: ``[ERROR] DRV(pid,proc):<stamp> [ascend][curpid:
        # pid, tid][drv][devdrv]…`` (the ``[drv]…`` tags and function stay in the message).
        "cann_drv",
        "cann",
        _CANN_HEAD + rf"(?P<stamp>{_CANN_STAMP}) \[ascend\]\[curpid: ?\d+, ?(?P<tid>\d+)\]",
        "local",
        ISO_FORMAT,
        _CANN_NORMALIZE,
        attrs=("module", "pid", "proc"),
    ),
    Grammar(
        # ``RankID:-1`` (no process group yet) leaves ``rank_id`` empty: the ``[rankN]:``
        # wrapper fills in. (Not a ``rank`` group: grammars.parse_lines cannot take one yet,
        # the group collides with the wrapper's rank column.)
        "torch_npu",
        "torch_npu",
        r"^\[(?P<lvl>ERROR|WARN|WARNING|INFO|DEBUG)\] "
        r"(?P<stamp>\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}) "
        r"\(PID:(?P<pid>\d+), Device:(?P<device>-?\d+), RankID:(?:-\d+|(?P<rank_id>\d+))\) "
        r"(?:(?P<code>ERR\d{5}) )?",
        "local",
        "%Y-%m-%d %H:%M:%S",
        ((r"^(\d{4}-\d{2}-\d{2})-", "${1} "),),
        attrs=("pid", "device", "rank_id", "code"),
    ),
    Grammar(
        # ``EI0002: …``, ``EE9999: Inner Error!``, ``EJ0001: <stamp> …``,
        # ``EL0006: [PID: 12066] 2025-07-31-01:25:19.967.079 …``
        "cann_code",
        "cann_code",
        r"^(?P<code>E[0-9A-Z]\d{4}):(?: +|$)(?:\[PID: (?P<pid>\d+)\] +)?"
        rf"(?:(?P<stamp>{_CANN_STAMP}) +)?",
        "local",
        ISO_FORMAT,
        _CANN_NORMALIZE,
        attrs=("code", "pid"),
    ),
    Grammar(
        # Newer CANN names the code: ``[PID: n] <stamp> Communication_Error_Ranktable_Detect(
        # EI0015): …``; the name and code stay in the message (``finish``), as users quote them.
        "cann_code_named",
        "cann_code",
        rf"^(?:\[PID: (?P<pid>\d+)\] +(?P<stamp>{_CANN_STAMP}) +)?"
        r"(?P<code_name>[A-Z][A-Za-z0-9_]*(?: [A-Za-z0-9_]+)*)"
        r"\((?P<code>E[0-9A-Z]\d{4})\):(?: +|$)",
        "local",
        ISO_FORMAT,
        _CANN_NORMALIZE,
        attrs=("code", "code_name", "pid"),
    ),
    *grammars.GRAMMARS,
)

#: Lines that only an Ascend / ModelArts process writes (for ``sniff``).
_ASCEND_LINE: Final = re.compile(
    # A Ray or vLLM process prefix ``(TaskRunner pid=123) `` may come first.
    r"^(?:\((?:[A-Za-z_][\w.:-]*(?: |, ))?pid=\d+[^)]*\) ?)?"
    r"(?:\[rank\d+\]: ?)?(?:\[Model[Aa]rts Service Log\]"
    r"|time=\"[^\"]*\" level=\w+ msg=.*\bPlatform=ModelArts-Service\b"
    rf"|\[(?:{_CANN_LEVEL})\] ?[A-Z][A-Z0-9_]*\(\d+[,:][^)]*\):{_CANN_STAMP} \["
    r"|\[(?:ERROR|WARN|WARNING|INFO|DEBUG)\] \d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2} "
    r"\(PID:\d+, Device:-?\d+, RankID:-?\d+\))",
    re.MULTILINE,
)
_LOGRUS_ZONE: Final = re.compile(
    r'^(?:\[rank\d+\]: ?)?time="\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?'
    r'(?P<zone>Z|[+-]\d{2}:\d{2})" level='
)
_ANSI: Final = re.compile(grammars.ANSI_ESCAPE)

# Unindented lines that CANN writes inside an error block (the EI0002 list of abnormal
# devices, formats.md §3.5): they belong to the block even though they are not indented.
_BLOCK_LINE: Final = r"^(?:there are\(is\) \d+ abnormal device\(s\):\s*|\]\s*)$"

#: Grammars of lines written by native code (CANN, MindSpore C++, torch_npu's C++ suffix).
_NATIVE_GRAMMARS: Final = (
    "mindspore",
    "cann_glued",
    "cann",
    "cann_drv",
    "torch_npu",
    "cann_code",
    "cann_code_named",
)
#: Grammars of the lines that start a CANN error-code block.
_CODE_GRAMMARS: Final = ("cann_code", "cann_code_named")

# Fields read from the first line of a record (a folded block may quote other devices/ranks).
_RANK_IN_TEXT: Final = r"\brankId\[(\d+)|\brank\[(\d+)\]|\bproc-rank-(\d+)-device-\d+"
_DEVICE_IN_TEXT: Final = (
    r"\bdeviceId\[(\d+)\]|\bdeviceLogicId\[(\d+)\]|\bdevice_id[=:] ?(\d+)"
    r"|\bproc-rank-\d+-device-(\d+)|\bchipId:(\d+)"
)
_CODE_IN_TEXT: Final = r"\b(ERR\d{5}|E[0-9A-Z]\d{4})\b"
_REMOTE_RANK: Final = r"remote rank:? ?\[(\d+)\]"
_ABNORMAL: Final = r"serverId\[([^\]]+)\], deviceId\[(\d+)\], Heartbeat Lost"
_PROC_PID: Final = r"\bproc-rank-\d+-device-\d+ \(pid: (\d+)\)"
_RETURN_CODE: Final = r"^(?:Training end with return code:|exit with) (-?\d+)\s*$"
#: logrus ``msg="…" file="upload.go:46" Component=…`` (the grammar stops after ``msg=``).
_LOGRUS_QUOTED: Final = r'^"(?P<msg>(?:[^"\\]|\\.)*)"(?P<rest>.*)$'
_LOGRUS_BARE: Final = r'^(?P<msg>[^\s"]*)(?P<rest>(?: .*)?)$'


@dataclass
class ModelArtsHints(FileHints):
    """File hints plus what the worker log's name and head say beyond the common fields.

    ``task_worker`` is the N of ``worker-N`` (the worker column of every row, while ranks go
    to ``extra``); ``tz_from`` says where the zone of local stamps came from (``option``,
    ``file`` or ``default``).
    """

    task_worker: int | None = None
    tz_from: str = "default"


def learn_offset(head: bytes) -> str | None:
    """The UTC offset of the container, from the logrus lines in a file head.

    ModelArts' training toolkit logs with logrus and an explicit offset (``+08:00``), while
    CANN, torch_npu and MindSpore print container-local time without one (formats.md §3.6).
    The most frequent offset wins (ties: the earliest), so a stray UTC (``Z``) line from a
    process with another ``TZ`` does not decide alone. ``None`` when the head has no such line
    (or only an offset that is not a whole number of hours).
    """
    lines = head.decode("utf-8", "replace").splitlines()
    if len(head) >= SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    zones: Counter[str] = Counter()
    for line in lines:
        match = _LOGRUS_ZONE.match(_ANSI.sub("", line))
        if match:
            zone = match["zone"]
            zones["UTC" if zone in ("Z", "+00:00", "-00:00") else zone] += 1
    if not zones:
        return None
    zone = zones.most_common(1)[0][0]  # most_common keeps first-seen order among ties
    # polars takes fixed offsets in whole hours only: a +05:30 container stays unknown
    # rather than breaking the read.
    return zone if zone == "UTC" or zone.endswith(":00") else None


class ModelArtsLogReader(LineReader):
    """ModelArts worker logs (see module docstring)."""

    name: ClassVar[str] = "modelarts"
    source: ClassVar[str] = "modelarts"
    grammars: ClassVar[tuple[Grammar, ...]] = MODELARTS_GRAMMARS

    def sniff(self, head: bytes, path: str) -> float:
        """High for ModelArts worker log names and for heads with platform or Ascend lines.

        Nothing else counts: plain absl/Python logs belong to the text reader.
        """
        if not head or looks_binary(head):
            return 0.0
        text = _ANSI.sub("", head.removeprefix(BOM).decode("utf-8", "replace"))
        marked = _ASCEND_LINE.search(text) is not None
        if parse_worker_log_name(path) is not None:
            return 0.95 if marked else 0.9
        return 0.85 if marked else 0.0

    def hints(self, head: bytes, ctx: ReadContext) -> FileHints:
        """Zone (``--tz``, else learned from logrus lines, else UTC), job, task and node."""
        if ctx.options.tz is not None:
            tz, tz_from = check_tz(ctx.options.tz), "option"
        else:
            learned = learn_offset(head)
            tz, tz_from = (check_tz(learned), "file") if learned else ("UTC", "default")
        name = parse_worker_log_name(ctx.path)
        extra: dict[str, str] = {}
        if name is not None:
            extra["job_id"] = name.job
            extra["task"] = name.task
            if name.component:
                extra["component"] = name.component
        return ModelArtsHints(
            year_anchor(head, ctx, tz, self.grammars),
            tz,
            # §3.7: the node's IP from a new-style name; else a node named in the bundle
            # path; else the task (worker-N).
            host=(name.ip if name else None)
            or path_host(ctx.path)
            or (name.task if name else None),
            workload=name.job if name else None,
            extra=extra,
            task_worker=name.worker if name else None,
            tz_from=tz_from,
        )

    def finish(self, rows: pl.DataFrame, hints: FileHints) -> pl.DataFrame:
        """Worker from the file name; rank, device, codes and culprit hints into ``extra``.

        Rows arrive with the line's rank in ``worker`` (the hints carry no worker on purpose):
        a node runs many ranks, so the rank goes to ``extra`` and ``worker`` is the task.
        """
        task_worker = hints.task_worker if isinstance(hints, ModelArtsHints) else None
        tz_from = hints.tz_from if isinstance(hints, ModelArtsHints) else "default"
        family = pl.col("reader").cast(pl.String).str.strip_prefix("modelarts.")
        message = pl.col("message")
        first = message.str.splitn("\n", 2).struct.field("field_0")

        def attr(key: str) -> pl.Expr:
            return pl.col("attrs").str.json_path_match(f"$.{key}")

        def first_group(text: pl.Expr, pattern: str) -> pl.Expr:
            groups = re.compile(pattern).groups
            return pl.coalesce([text.str.extract(pattern, i) for i in range(1, groups + 1)])

        # §3.7: torch_npu RankID (when >= 0), the torchrun [rankN]: prefix, HCCL rankId[N] /
        # rank[N], proc-rank-N-device-M.
        rank = pl.coalesce(
            attr("rank_id").cast(pl.Int64),
            pl.col("worker").cast(pl.Int64),
            first_group(first, _RANK_IN_TEXT).cast(pl.Int64),
        )
        device = pl.when(attr("device").is_null()).then(first_group(first, _DEVICE_IN_TEXT))
        code = pl.when(attr("code").is_null()).then(
            pl.coalesce(first.str.extract(_CODE_IN_TEXT, 1), message.str.extract(_CODE_IN_TEXT, 1))
        )
        pid = pl.when(attr("pid").is_null()).then(first.str.extract(_PROC_PID, 1))
        return_code = (
            pl.when(family == "service").then(first.str.extract(_RETURN_CODE, 1)).cast(pl.Int64)
        )
        severity = (
            pl.when(pl.col("severity").is_not_null())
            .then(pl.col("severity"))
            .when(family == "cann_code")
            .then(pl.lit("ERROR"))
            .when(return_code.is_not_null())
            .then(pl.when(return_code == 0).then(pl.lit("INFO")).otherwise(pl.lit("ERROR")))
        )
        fields: list[tuple[str, pl.Expr, Kind]] = [
            ("rank", rank, "number"),
            ("remote_rank", message.str.extract(_REMOTE_RANK, 1), "number"),
            ("device", device, "token"),
            ("code", code, "token"),
            ("pid", pid, "token"),
            ("abnormal_server", message.str.extract(_ABNORMAL, 1), "text"),
            ("abnormal_device", message.str.extract(_ABNORMAL, 2), "token"),
            ("return_code", return_code, "number"),
            ("tz", pl.when(pl.col("ts_quality") == "inferred_tz").then(pl.lit(hints.tz)), "text"),
            (
                "tz_from",
                pl.when(pl.col("ts_quality") == "inferred_tz").then(pl.lit(tz_from)),
                "token",
            ),
        ]
        # logrus: the quoted msg is the message, file="…" the logger, the other fields extra.
        logrus = family == "logrus"
        quoted = message.str.extract_groups(_LOGRUS_QUOTED)
        bare = message.str.extract_groups(_LOGRUS_BARE)
        msg = pl.coalesce(
            quoted.struct.field("msg").str.replace_all(r'\\(["\\])', "${1}"),
            bare.struct.field("msg"),
        )
        rest = pl.coalesce(quoted.struct.field("rest"), bare.struct.field("rest")).str.strip_chars()
        fields.append(("fields", pl.when(logrus & (rest != "")).then(rest), "text"))
        # Error codes are how users quote and search these lines (``EI0002: The wait …``,
        # ``ERR02200 DIST call hccl api failed.``): the code stays in the message.
        cann_code = (family == "cann_code") & attr("code").is_not_null()
        # ``Name(EI0015): …`` keeps its name; ``EI0015: …`` is just the code.
        code_head = pl.coalesce(
            pl.concat_str([attr("code_name"), pl.lit("("), attr("code"), pl.lit(")")]),
            attr("code"),
        )
        torch_code = (family == "torch_npu") & attr("code").is_not_null()
        text = (
            pl.when(logrus & msg.is_not_null())
            .then(msg)
            .when(cann_code & (message == ""))
            .then(pl.concat_str([code_head, pl.lit(":")]))
            .when(cann_code)
            .then(pl.concat_str([code_head, pl.lit(": "), message]))
            .when(torch_code)
            .then(pl.concat_str([attr("code"), pl.lit(" "), message]))
            .otherwise(message)
        )
        # Lazy, so that the shared subexpressions (the first line, attrs fields, the logrus
        # split) are computed once per chunk rather than once per use.
        return (
            rows.lazy()
            .with_columns(
                pl.lit(task_worker, dtype=pl.Int32).alias("worker"),
                severity.alias("severity"),
                text.alias("message"),
                pl.when(logrus & pl.col("logger").is_null())
                .then(rest.str.extract(r'\bfile="([^"]*)"', 1))
                .otherwise(pl.col("logger"))
                .alias("logger"),
                append_json(pl.col("extra"), fields).alias("extra"),
            )
            .collect()
        )

    def adjust(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """What the folding rules see, with two Ascend-specific changes.

        * CANN's unindented block lines (``there are(is) N abnormal device(s):``, ``]``) stay
          inside their error-code block: the shared rules (§5.3) only continue unindented
          lines after a ``:`` header, so such a line is shown indented to the folding step.
        * A Python traceback does not fold into a CANN/MindSpore/torch_npu error line before
          it: those are written by native code, not by the Python logger whose exception the
          traceback belongs to (§5.3 rule 3 is about absl-py). Their level is hidden from the
          folding step, so the traceback is a record of its own, as in the text reader.
        """
        grammar = pl.col("grammar")
        in_block = (
            pl.when(grammar.is_null())
            .then(None)
            .otherwise(grammar.is_in(_CODE_GRAMMARS))
            .forward_fill()
            .fill_null(False)
        )
        block_line = grammar.is_null() & in_block & pl.col("message").str.contains(_BLOCK_LINE)
        return lines.with_columns(
            pl.when(block_line)
            .then(pl.concat_str([pl.lit(" "), pl.col("message")]))
            .otherwise(pl.col("message"))
            .alias("fold_message"),
            pl.when(grammar.is_in(_NATIVE_GRAMMARS))
            .then(None)
            .otherwise(pl.col("level"))
            .alias("fold_level"),
        )


# -- API documents ------------------------------------------------------------------------------

#: Larger API responses are not read (they are pages of at most a few MB).
_MAX_DOCUMENT: Final = 256 << 20
_FAILED_PHASES: Final = frozenset({"Failed", "Abnormal"})
_FAILED_SECONDARY: Final = frozenset({"Failed", "CreateFailed", "TerminatedFailed"})
_TIME_TEXT: Final = "%Y-%m-%dT%H:%M:%S%.f"


@dataclass
class _Row:
    """One API row before it becomes a frame row.

    ``node`` is the object the row cites; ``ts_ns`` a time already in nanoseconds, ``when`` a
    raw API time (ISO text or an epoch number, parsed with all the others at once), and
    ``inherited_ns`` the time of the record it belongs to, for rows with no time of their own.
    """

    node: jsondoc.LocatedDict
    kind: str
    message: str
    severity: str
    ts_ns: int | None = None
    when: object = None
    inherited_ns: int | None = None
    worker: int | None = None
    workload: str | None = None
    attempt: int | None = None
    logger: str | None = None
    extra: dict[str, Any] | None = None


class ModelArtsApiReader:
    """ModelArts training-job API responses saved as JSON (see module docstring).

    One record is one JSON object that becomes a row: the job object itself, each
    ``task_statuses[]`` element, each ``running_records[]`` element and each
    ``recover_records[]`` element inside it (ShowTrainingJobDetails), each ``events[]``
    element (ListTrainingJobEvents), each ``stages[]`` element of each running record
    (ListTrainingJobStages). An element that is not an object is a dropped record; a
    document that is not valid JSON (or not one of these responses) is one dropped record.

    Rows name tasks (``worker`` = N of ``worker-N``, ``workload`` = job id), never a host:
    the API does not say which node ran a task, and the case's host map resolves a job's
    worker to the node its worker logs name.
    """

    name: ClassVar[str] = "modelarts_api"
    source: ClassVar[str] = "modelarts"

    def sniff(self, head: bytes, path: str) -> float:
        """High for the three response shapes (by their keys), 0 for anything else."""
        body = head.removeprefix(BOM).lstrip()
        if not body.startswith(b"{"):
            return 0.0
        window = body[:SNIFF_BYTES]

        def has(key: bytes) -> bool:
            return b'"' + key + b'"' in window

        if has(b"logName") or has(b"insertId") or has(b"log_name"):
            return 0.0  # a Cloud Logging entry
        job_keys = has(b"task_statuses") or has(b"running_records") or has(b"secondary_phase")
        if has(b"metadata") and has(b"status") and job_keys:
            return 0.95
        if has(b"metadata") and has(b"workspace_id") and (has(b"algorithm") or has(b"spec")):
            return 0.9  # a job without a status yet
        if has(b"events") and has(b"level") and has(b"source"):
            return 0.95
        if has(b"running_records") and has(b"stages"):
            return 0.95
        return 0.0

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Parse the whole document (with positions) and emit one row per record."""
        data = content.read_at_most(_MAX_DOCUMENT + 1)
        if len(data) > _MAX_DOCUMENT:
            ctx.counts.records += 1
            ctx.drop(1, 0, f"JSON document larger than {_MAX_DOCUMENT:,} bytes; not read")
            return
        try:
            document = jsondoc.load(data)
        except jsondoc.DocumentError as exc:
            ctx.counts.records += 1
            ctx.drop(exc.line, exc.offset, f"not valid JSON: {exc}", _line_at(data, exc.offset))
            return
        if not isinstance(document, jsondoc.LocatedDict):
            ctx.counts.records += 1
            ctx.drop(1, 0, "JSON document is not an object (ModelArts API response)", data[:4096])
            return
        job_id = _job_id_in_path(ctx.path)
        rows: list[_Row] = []
        if _is_job(document):
            rows = _job_rows(document, ctx, job_id)
        elif isinstance(document.get("events"), list):
            rows = _event_rows(document, ctx, job_id)
        elif isinstance(document.get("running_records"), list):
            rows = _stage_rows(document, ctx, job_id)
        else:
            ctx.counts.records += 1
            ctx.drop(
                document.line,
                document.offset,
                "JSON document is not a ModelArts training-job, events or stages response",
                data[:4096],
            )
            return
        ctx.counts.records += len(rows)
        ctx.counts.rows += len(rows)
        if rows:
            rows.sort(key=lambda row: row.node.offset)
            yield _frame(rows, check_tz(ctx.options.tz))


def _is_job(document: jsondoc.LocatedDict) -> bool:
    status = document.get("status")
    if isinstance(document.get("metadata"), dict):
        return True
    return isinstance(status, dict) and ("phase" in status or "task_statuses" in status)


def _line_at(data: bytes, offset: int) -> bytes:
    """The input line holding ``offset`` (for the quarantine entry)."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    return data[start : end if end >= 0 else len(data)][:4096]


def _str(value: object) -> str | None:
    """A non-empty string field, or ``None``."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _int(value: object) -> int | None:
    """An integer field that fits 64 bits, or ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _fits(value, 64)
    if isinstance(value, float) and value.is_integer():
        return _fits(int(value), 64)
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,19}", value.strip()):
        return _fits(int(value), 64)
    return None


def _fits(value: int | None, bits: int) -> int | None:
    """``value`` when a signed integer column of ``bits`` bits can hold it, else ``None``."""
    limit = 1 << (bits - 1)
    return value if value is not None and -limit <= value < limit else None


def _epoch_ns(value: object) -> int | None:
    """Nanoseconds of an epoch number (or a string of digits) whose unit is told by its size.

    The APIs mix seconds (running records) and milliseconds (create_time, duration) and do
    not always say which (formats.md §3.6); times near the present are unambiguous.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        match = re.fullmatch(r"(\d{1,19})(?:\.(\d+))?", value.strip())
        if match is None:
            return None
        number = int(match.group(1))
        scale = _unit(number)
        fraction = match.group(2) or ""
        return number * scale + int((fraction + "0" * 9)[:9]) * scale // 1_000_000_000
    if isinstance(value, int):
        return value * _unit(value) if value >= 0 else None
    if isinstance(value, float) and 0 <= value < 2.0**63:  # not NaN nor infinite
        return round(value * _unit(int(value)))
    return None


def _unit(number: int) -> int:
    """Nanoseconds per unit of an epoch count of this size (ns, µs, ms or s)."""
    for limit, scale in ((10**17, 1), (10**14, 1_000), (10**11, 1_000_000)):
        if number >= limit:
            return scale
    return 1_000_000_000


def _worker_of(task: object) -> int | None:
    match = _TASK.match(task) if isinstance(task, str) else None
    return int(match.group(1)) if match else None


def _code_in(text: str | None) -> str | None:
    match = re.search(_CODE_IN_TEXT, text) if text else None
    return match.group(1) if match else None


def _drop_element(ctx: ReadContext, parent: jsondoc.LocatedList, what: str) -> None:
    """An array element that is not an object: no row; cited at its array."""
    ctx.counts.records += 1
    ctx.drop(parent.line, parent.offset, f"{what} element is not a JSON object")


def _objects(
    value: object, ctx: ReadContext, what: str
) -> Iterator[tuple[int, jsondoc.LocatedDict]]:
    """The object elements of an array field (others are dropped records)."""
    if not isinstance(value, jsondoc.LocatedList):
        return
    for index, item in enumerate(value):
        if isinstance(item, jsondoc.LocatedDict):
            yield index, item
        else:
            _drop_element(ctx, value, what)


def _job_rows(document: jsondoc.LocatedDict, ctx: ReadContext, path_job: str | None) -> list[_Row]:
    """ShowTrainingJobDetails: the job, its task statuses, running and recover records."""
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    status = document.get("status")
    status = status if isinstance(status, dict) else {}
    job_id = _str(metadata.get("id")) or path_job
    name = _str(metadata.get("name"))
    phase, secondary = _str(status.get("phase")), _str(status.get("secondary_phase"))
    start_ns = _epoch_ns(status.get("start_time"))
    duration_ms = _int(status.get("duration"))
    created_ns = _epoch_ns(metadata.get("create_time"))
    # The job row reports the job's phase, so it is stamped when that phase was reached:
    # the end (start + duration) where known, else the start, else the creation.
    end_ns = start_ns + duration_ms * 1_000_000 if start_ns and duration_ms is not None else None
    job_ns = end_ns or start_ns or created_ns

    title = f"Training job {name}" if name else "Training job"
    if job_id:
        title += f" ({job_id})" if name else f" {job_id}"
    if not status:
        sentence = f"{title} has no status in this document"
    else:
        sentence = f"{title} phase {phase or 'unknown'}"
        if secondary:
            sentence += f" (secondary phase {secondary})"
        if duration_ms is not None:
            sentence += f" after {duration_ms / 1000:g} s"
    own = [
        f"{key}: {status[key]}"
        for key in ("message", "reason", "failure_reason", "error_msg")
        if _str(status.get(key))
    ]
    failed = phase in _FAILED_PHASES or secondary in _FAILED_SECONDARY
    job_extra: dict[str, Any] = {
        "job_id": job_id,
        "kind": document.get("kind"),
        "metadata": dict(metadata) or None,
        "status": {k: v for k, v in status.items() if k not in ("task_statuses", "running_records")}
        or None,
    }
    rows = [
        _Row(
            document,
            "job",
            "; ".join([sentence, *own]),
            "ERROR" if failed else "INFO",
            ts_ns=job_ns,
            workload=job_id,
            extra=job_extra,
        )
    ]
    for _, task in _objects(status.get("task_statuses"), ctx, "task_statuses"):
        task_name = _str(task.get("task"))
        exit_code = _int(task.get("exit_code"))
        text = _str(task.get("message"))
        who = f"Task {task_name}" if task_name else "A task"
        sentence = (
            f"{who} exited with code {exit_code}" if exit_code is not None else f"{who} status"
        )
        rows.append(
            _Row(
                task,
                "task_status",
                f"{sentence}: {text}" if text else sentence,
                "ERROR" if exit_code not in (None, 0) else "INFO",
                inherited_ns=job_ns,
                worker=_worker_of(task_name),
                workload=job_id,
                extra={
                    "job_id": job_id,
                    "task": task_name,
                    "exit_code": task.get("exit_code"),
                    "code": _code_in(text),
                },
            )
        )
    records = status.get("running_records")
    total = len(records) if isinstance(records, list) else 0
    for index, record in _objects(records, ctx, "running_records"):
        rows.extend(_running_rows(record, index, total, ctx, job_id))
    return rows


def _running_rows(
    record: jsondoc.LocatedDict, index: int, total: int, ctx: ReadContext, job_id: str | None
) -> list[_Row]:
    """One running record (an attempt: a start and how it ended) and its recover records."""
    start_type = _str(record.get("start_type"))
    end_reason = _str(record.get("end_reason"))
    task = _str(record.get("end_related_task"))
    recover = _str(record.get("end_recover"))
    parts = [f"Running record {index + 1} of {total}" + (f" ({start_type})" if start_type else "")]
    if end_reason:
        parts.append(f"ended: {end_reason}")
    elif record.get("end_at") is None:
        parts.append("has no end")
    else:
        parts.append("ended")
    if task:
        parts.append(f"related task {task}")
    if recover:
        parts.append(f"recovery {recover}")
    start_ns, end_ns = _epoch_ns(record.get("start_at")), _epoch_ns(record.get("end_at"))
    scalars = {k: v for k, v in record.items() if not isinstance(v, list | dict)}
    recovers = record.get("recover_records")
    rows = [
        _Row(
            record,
            "running_record",
            "; ".join(parts),
            "INFO",
            # The record reports how the attempt ended: stamped at its end where known.
            ts_ns=end_ns or start_ns,
            worker=_worker_of(task),
            workload=job_id,
            attempt=index,
            extra={
                "job_id": job_id,
                **scalars,
                "recover_records": len(recovers) if isinstance(recovers, list) else None,
                "code": _code_in(end_reason),
            },
        )
    ]
    for _, item in _objects(recovers, ctx, "recover_records"):
        how = _str(item.get("recover"))
        scenario = _str(item.get("fault_scenario"))
        related = _str(item.get("related_task"))
        result = _str(item.get("recover_result"))
        reason = _str(item.get("reason"))
        sentence = f"Recovery {how}" if how else "Recovery"
        if scenario:
            sentence += f" after {scenario}"
        if related:
            sentence += f" on {related}"
        sentence += f": {result}" if result else ": no result"
        rows.append(
            _Row(
                item,
                "recover_record",
                f"{sentence}; reason: {reason}" if reason else sentence,
                "ERROR" if (result or "").lower() == "failed" else "INFO",
                # recover_start_at is "also the fault time" (formats.md §3.1).
                ts_ns=_epoch_ns(item.get("recover_start_at"))
                or _epoch_ns(item.get("recover_end_at")),
                inherited_ns=end_ns,
                worker=_worker_of(related),
                workload=job_id,
                attempt=index,
                extra={
                    "job_id": job_id,
                    "running_record": index,
                    **{k: v for k, v in item.items() if not isinstance(v, list | dict)},
                    "code": _code_in(reason),
                },
            )
        )
    return rows


def _event_rows(document: jsondoc.LocatedDict, ctx: ReadContext, job_id: str | None) -> list[_Row]:
    """ListTrainingJobEvents: one row per event, its message verbatim."""
    rows = []
    for _, event in _objects(document.get("events"), ctx, "events"):
        level = _str(event.get("level"))
        text = _str(event.get("message"))
        source = _str(event.get("source"))
        named = re.search(r"\bworker-(\d+)\b", text or "")
        rows.append(
            _Row(
                event,
                "event",
                text or f"{source or 'ModelArts'} event without a message",
                level or "INFO",
                when=event.get("time"),
                worker=int(named.group(1)) if named else None,
                workload=job_id,
                logger=source,
                extra={
                    "job_id": job_id,
                    **{
                        k: v
                        for k, v in event.items()
                        if k != "message" and not isinstance(v, list | dict)
                    },
                    "code": _code_in(text),
                },
            )
        )
    return rows


def _stage_rows(document: jsondoc.LocatedDict, ctx: ReadContext, job_id: str | None) -> list[_Row]:
    """ListTrainingJobStages: one row per stage of each running record (an attempt)."""
    records = list(_objects(document.get("running_records"), ctx, "running_records"))
    orders = sorted({o for _, r in records if (o := _int(r.get("record_order"))) is not None})
    rows = []
    for index, record in records:
        order = _int(record.get("record_order"))
        attempt = orders.index(order) if order is not None else index
        for _, stage in _objects(record.get("stages"), ctx, "stages"):
            name = _str(stage.get("name")) or "unnamed"
            stage_order = _int(stage.get("stage_order"))
            text = _str(stage.get("en_message"))
            head = f"Stage {name}"
            if stage_order is not None:
                head += f" ({stage_order}/4)"
            head += f" of running record {order if order is not None else index + 1}"
            subs = stage.get("sub_stages")
            sub_names = (
                [_str(s.get("name")) for s in subs if isinstance(s, dict)]
                if isinstance(subs, list)
                else []
            )
            stage_job = _str(stage.get("job_id")) or job_id
            rows.append(
                _Row(
                    stage,
                    "stage",
                    f"{head}: {text}" if text else head,
                    "INFO",
                    when=stage.get("start_time") or stage.get("end_time"),
                    workload=stage_job,
                    attempt=attempt,
                    extra={
                        "job_id": stage_job,
                        "record_order": order,
                        **{k: v for k, v in stage.items() if not isinstance(v, list | dict)},
                        "sub_stages": sub_names or None,
                    },
                )
            )
    return rows


def _frame(rows: list[_Row], tz: str) -> pl.DataFrame:
    """Canonical columns for the rows; times parsed in one vectorized pass."""
    epoch: list[int | None] = []
    texts: list[str | None] = []
    for row in rows:
        ns = row.ts_ns if row.ts_ns is not None else _epoch_ns(row.when)
        ns = _fits(ns, 64)  # a time beyond the year 2262 is no time
        epoch.append(ns)
        texts.append(row.when.strip() if ns is None and isinstance(row.when, str) else None)
    frame = pl.DataFrame(
        {
            "line": [row.node.line for row in rows],
            "offset": [row.node.offset for row in rows],
            "reader": [f"modelarts_api.{row.kind}" for row in rows],
            "_epoch": epoch,
            "_text": texts,
            "_inherited": [_fits(row.inherited_ns, 64) for row in rows],
            "_level": [row.severity for row in rows],
            "workload": [row.workload for row in rows],
            "worker": [_fits(row.worker, 32) for row in rows],
            "attempt": [row.attempt for row in rows],
            "logger": [row.logger for row in rows],
            "message": [row.message for row in rows],
            "extra": [_compact(row.extra) for row in rows],
        },
        schema_overrides={
            "line": pl.Int32,
            "offset": pl.Int64,
            "_epoch": pl.Int64,
            "_text": pl.String,
            "_inherited": pl.Int64,
            "workload": pl.String,
            "worker": pl.Int32,
            "attempt": pl.Int32,
            "logger": pl.String,
            "extra": pl.String,
        },
    )
    text = pl.col("_text")
    zoned = rfc3339(text)
    local = local_time(text.str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T"), _TIME_TEXT, tz)
    own = pl.coalesce(pl.col("_epoch").cast(NS), zoned, local)
    return frame.select(
        "line",
        "offset",
        pl.lit("modelarts").alias("source"),
        "reader",
        pl.coalesce(own, pl.col("_inherited").cast(NS)).alias("ts"),
        pl.when(pl.col("_epoch").is_not_null() | zoned.is_not_null())
        .then(pl.lit("exact"))
        .when(local.is_not_null())
        .then(pl.lit("inferred_tz"))
        .when(pl.col("_inherited").is_not_null())
        .then(pl.lit("inherited"))
        .alias("ts_quality"),
        pl.coalesce(severity_expr(pl.col("_level")), pl.lit("INFO")).alias("severity"),
        "workload",
        "worker",
        "attempt",
        "logger",
        "message",
        "extra",
    )


def _compact(fields: dict[str, Any] | None) -> str | None:
    """``extra`` as compact JSON without null members; ``None`` when nothing is left."""
    kept = {k: v for k, v in (fields or {}).items() if v is not None}
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":")) if kept else None
