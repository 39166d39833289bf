"""The ``modelarts`` reader: worker logs of Huawei Cloud ModelArts training jobs on Ascend NPUs
(formats.md §3).

The per-task worker logs downloaded from the console or OBS
(``modelarts-job-<uuid>-worker-N.log`` and the newer
``modelarts-job-<uuid>-<component>-worker-N-<ip>-<suffix>.log``). One file interleaves the
platform's ``[ModelArts Service Log]`` lines, the training toolkit's logrus lines, CANN plog
lines, MindSpore and torch_npu lines, CANN error-code blocks (``EI0002:``, ``EE9999: Inner
Error!``) and plain Python output. The file name gives the job (workload), the task (worker)
and, for new names, the node's IP (host). The JSON saved from the training-job APIs is read by
:mod:`analyzer.ingest.readers.modelarts_api`.

Zone-less stamps (CANN, torch_npu, MindSpore, the platform's asctime) are container-local:
the offset is learned from the logrus ``time="…+08:00"`` lines in the head of the same file
(§3.6), ``--tz`` overrides it, UTC is the last resort.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar, Final

import polars as pl

from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.blocks import BOM
from analyzer.ingest.columns.extra import Kind, append_members, members
from analyzer.ingest.columns.subset import on_rows
from analyzer.ingest.columns.timestamps import check_tz
from analyzer.ingest.lines import grammars
from analyzer.ingest.lines.grammars import ISO_FORMAT, ISO_NORMALIZE, Grammar
from analyzer.ingest.lines.head import looks_binary
from analyzer.ingest.lines.hints import FileHints, path_host, year_anchor
from analyzer.ingest.lines.reader import LineReader
from analyzer.ingest.readers.modelarts_names import ERROR_CODE, parse_worker_log_name

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
        # wrapper fills in. (Not a ``rank`` group: parse_lines cannot take one yet,
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
_REMOTE_RANK: Final = r"remote rank:? ?\[(\d+)\]"
_ABNORMAL: Final = r"serverId\[([^\]]+)\], deviceId\[(\d+)\], Heartbeat Lost"
_PROC_PID: Final = r"\bproc-rank-\d+-device-\d+ \(pid: (\d+)\)"
#: What every line :data:`_PROC_PID` matches contains.
_PROC_PID_LITERAL: Final = "proc-rank-"
#: The ``attrs`` fields ``finish`` reads.
_ATTRS: Final = ("rank_id", "device", "code", "pid", "code_name")
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
        message = pl.col("message")
        given = rows.columns
        # In steps, each value a column before it is used: an eager expression is evaluated
        # again wherever it is referenced.
        rows = rows.with_columns(
            pl.col("reader").cast(pl.String).str.strip_prefix("modelarts.").alias("_family"),
            message.str.splitn("\n", 2).struct.field("field_0").alias("_first"),
            *[pl.col("attrs").str.json_path_match(f"$.{key}").alias(f"_{key}") for key in _ATTRS],
            # The first code of the first line is the first of the message (a code never
            # spans a line end).
            message.str.extract(ERROR_CODE, 1).alias("_message_code"),
            message.str.extract(_REMOTE_RANK, 1).alias("_remote_rank"),
            message.str.extract_groups(_ABNORMAL).alias("_abnormal"),
        )
        family, first = pl.col("_family"), pl.col("_first")
        logrus = family == "logrus"
        # The costly regexes run only on the rows whose answer is used.
        quoted = message.str.extract_groups(_LOGRUS_QUOTED)
        bare = message.str.extract_groups(_LOGRUS_BARE)
        rest = pl.coalesce(quoted.struct.field("rest"), bare.struct.field("rest")).str.strip_chars()
        found = [
            *on_rows(
                rows,
                pl.col("_rank_id").is_null() & pl.col("worker").is_null(),
                [first.str.extract_groups(_RANK_IN_TEXT).alias("_text_rank")],
            ),
            *on_rows(
                rows,
                pl.col("_device").is_null(),
                [first.str.extract_groups(_DEVICE_IN_TEXT).alias("_text_device")],
            ),
            *on_rows(
                rows,
                pl.col("_pid").is_null() & message.str.contains(_PROC_PID_LITERAL, literal=True),
                [first.str.extract(_PROC_PID, 1).alias("_text_pid")],
            ),
            *on_rows(
                rows,
                family == "service",
                [
                    first.str.extract(_RETURN_CODE, 1)
                    .cast(pl.Int64, strict=False)
                    .alias("_return_code")
                ],
            ),
            *on_rows(
                rows,
                logrus,
                [
                    pl.coalesce(
                        quoted.struct.field("msg").str.replace_all(r'\\(["\\])', "${1}"),
                        bare.struct.field("msg"),
                    ).alias("_msg"),
                    rest.alias("_rest"),
                    pl.when(pl.col("logger").is_null())
                    .then(rest.str.extract(r'\bfile="([^"]*)"', 1))
                    .alias("_file"),
                ],
            ),
        ]
        rows = rows.with_columns(found)

        def attr(key: str) -> pl.Expr:
            return pl.col(f"_{key}")

        def first_group(name: str) -> pl.Expr:
            groups = pl.col(name)
            dtype = rows.schema[name]
            assert isinstance(dtype, pl.Struct)
            return pl.coalesce([groups.struct.field(field.name) for field in dtype.fields])

        # §3.7: torch_npu RankID (when >= 0), the torchrun [rankN]: prefix, HCCL rankId[N] /
        # rank[N], proc-rank-N-device-M.
        # Not strict: a digit run too long for an int64 is no rank (null), not a failed ingest.
        rank = pl.coalesce(
            attr("rank_id").cast(pl.Int64, strict=False),
            pl.col("worker").cast(pl.Int64, strict=False),
            first_group("_text_rank").cast(pl.Int64, strict=False),
        )
        device = pl.when(attr("device").is_null()).then(first_group("_text_device"))
        code = pl.when(attr("code").is_null()).then(pl.col("_message_code"))
        return_code = pl.col("_return_code")
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
            ("remote_rank", pl.col("_remote_rank"), "number"),
            ("device", device, "token"),
            ("code", code, "token"),
            ("pid", pl.col("_text_pid"), "token"),
            ("abnormal_server", pl.col("_abnormal").struct.field("1"), "text"),
            ("abnormal_device", pl.col("_abnormal").struct.field("2"), "token"),
            ("return_code", return_code, "number"),
            ("tz", pl.when(pl.col("ts_quality") == "inferred_tz").then(pl.lit(hints.tz)), "text"),
            (
                "tz_from",
                pl.when(pl.col("ts_quality") == "inferred_tz").then(pl.lit(tz_from)),
                "token",
            ),
            # logrus: the quoted msg is the message, file="…" the logger, the other fields
            # extra.
            ("fields", pl.when(pl.col("_rest") != "").then(pl.col("_rest")), "text"),
        ]
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
            pl.when(pl.col("_msg").is_not_null())
            .then(pl.col("_msg"))
            .when(cann_code & (message == ""))
            .then(pl.concat_str([code_head, pl.lit(":")]))
            .when(cann_code)
            .then(pl.concat_str([code_head, pl.lit(": "), message]))
            .when(torch_code)
            .then(pl.concat_str([attr("code"), pl.lit(" "), message]))
            .otherwise(message)
        )
        rows = rows.with_columns(
            pl.lit(task_worker, dtype=pl.Int32).alias("worker"),
            severity.alias("severity"),
            text.alias("message"),
            pl.when(logrus & pl.col("logger").is_null())
            .then(pl.col("_file"))
            .otherwise(pl.col("logger"))
            .alias("logger"),
            members(fields).alias("_more"),
        )
        return rows.with_columns(
            append_members(pl.col("extra"), pl.col("_more")).alias("extra")
        ).select(given)

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
