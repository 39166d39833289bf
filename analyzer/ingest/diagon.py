"""The ``diagon`` readers: Google Cloud ML Diagnostics ("Diagon") dumps (formats.md §4).

Two kinds of file make up a Diagon dump:

* :class:`DiagonDaemonReader` (``diagon``): ``kubectl logs`` of the ML Diagnostics daemon and of
  the connection operator. The daemon writes glog/absl C++ lines (the common grammars parse
  them); the operator is a controller-runtime manager that logs through zap, either as JSON
  lines or in zap's tab-separated console form, with client-go's klog lines in between. Daemon
  lifecycle lines (stream, registration, heartbeat, reconnect, shutdown) are liveness evidence
  for the node the daemon runs on, so they are tagged in ``extra`` (``diagon_event``); they keep
  their own level because they are context, not errors.
* :class:`DiagonApiReader` (``diagon_api``): ``gcloud alpha mldiagnostics machine-learning-run``
  and ``monitored-events`` ``list|describe --format=json`` output. Every ML run, every monitored
  event and every entry of an event's ``analyzerReports`` becomes a row that cites the line where
  its JSON object starts. Analyzer reports name their culprits as numeric Compute Engine
  instance IDs; those are kept as IDs in ``extra`` (``instance_ids``) and never turned into a
  host name, because nothing in the document says which node an ID belongs to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import polars as pl

from analyzer.ingest import grammars
from analyzer.ingest.base import ReadContext
from analyzer.ingest.framing import BOM
from analyzer.ingest.grammars import Grammar
from analyzer.ingest.jsondoc import DocumentError, LocatedDict, LocatedList, load
from analyzer.ingest.lines import FileHints, LineReader, head_lines, looks_binary
from analyzer.ingest.timestamps import NS, epoch_seconds, rfc3339
from analyzer.schema import host_expr
from analyzer.streams import Content

# -- the daemon / operator line reader -------------------------------------------------------

_ZAP_LEVEL: Final = "DEBUG|INFO|WARN|ERROR|DPANIC|PANIC|FATAL"
_RFC3339: Final = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})"
# zap's epoch encoders: a decimal in JSON ("ts":1795975802.381234), Go's %v of a float64 in the
# console encoder (1.7959758023812342e+09).
_EPOCH: Final = r"\d+(?:\.\d*)?(?:[eE]\+?\d+)?"
# A console line has an optional logger name before the message; a name has no blanks. (A
# one-word message followed by fields is read as a logger: finish() puts it back.)
_CONSOLE_LOGGER: Final = r"(?:(?P<logger>[^\s{]+)\t)?"

#: The operator's zap output, tried before the common grammars. JSON lines keep their text
#: verbatim as the message (see :meth:`DiagonDaemonReader._mark`); epoch stamps are parsed there
#: too, because the console form writes them in scientific notation.
ZAP_GRAMMARS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "zap_json",
        "zap",
        r'^\{"level":"(?P<lvl>[A-Za-z]+)","ts":"(?P<stamp>[^"]+)"'
        r'(?:,"logger":"(?P<logger>[^"\\]*)")?',
        "zoned",
    ),
    Grammar(
        "zap_json_epoch",
        "zap",
        rf'^\{{"level":"(?P<lvl>[A-Za-z]+)","ts":{_EPOCH}(?:,"logger":"(?P<logger>[^"\\]*)")?',
        "none",
    ),
    Grammar(
        "zap_console",
        "zap",
        rf"^(?P<stamp>{_RFC3339})\t(?P<lvl>{_ZAP_LEVEL})\t{_CONSOLE_LOGGER}",
        "zoned",
    ),
    Grammar(
        "zap_console_epoch",
        "zap",
        rf"^{_EPOCH}\t(?P<lvl>{_ZAP_LEVEL})\t{_CONSOLE_LOGGER}",
        "none",
    ),
)
_ZAP_JSON: Final = ("zap_json", "zap_json_epoch")
_ZAP_EPOCH: Final = ("zap_json_epoch", "zap_console_epoch")
_ZAP_ALL: Final = tuple(g.name for g in ZAP_GRAMMARS)
# Where the epoch stamp sits in the raw line (after any kubectl/CRI wrapper).
_EPOCH_IN_LINE: Final = (
    rf'"ts":({_EPOCH})[,}}]',
    rf"(?:^|\s|\])({_EPOCH})\t(?:{_ZAP_LEVEL})\t",
)
# zap levels that Cloud Logging's scale spells differently (DPANIC is an error that only
# panics in development builds).
_ZAP_LEVELS: Final = {"DPANIC": "ERROR", "PANIC": "CRITICAL"}

#: Lifecycle events of the daemon and the SDK, first match wins (formats.md §4: the daemon
#: strings are [B], the SDK strings [V]). Shutdown and reconnect come first because their lines
#: often also mention the stream or the heartbeat they end.
DIAGON_EVENTS: Final[tuple[tuple[str, str], ...]] = (
    ("shutdown", r"(?i)SIGTERM received|\bshut ?down\b|shutting down"),
    ("reconnect", r"(?i)\breconnect"),
    ("registration", r"DaemonRegistration(?:Request|Response)|(?i:\bregist(?:ered|ration)\b)"),
    ("heartbeat", r"DaemonHeartbeat(?:Request|Response)|(?i:\bheartbeat)"),
    ("stream", r"\bStream established\b|(?i:\bstream (?:closed|broken|ended|reset|lost))"),
    ("identity", r"\bGKE_DIAGON_(?:IDENTIFIER|METADATA)\b"),
)
#: Lines about the JAX coordination service's own heartbeats and tasks are not Diagon events.
_NOT_DIAGON: Final = r"/job:|(?i:coordination service)"

# Sniffing. SDK log lines (google_cloud_mldiagnostics, GKE_DIAGON_*, "Diagon SDK") are written
# into the *workload's* stdout, so on their own they do not make a file a Diagon dump: the text
# reader is right for a JAX worker log that happens to use the SDK.
_SDK_SPANS: Final = re.compile(
    r"google[_.-]cloud[_.-]mldiagnostics|GKE_DIAGON_\w+|diagon sdk", re.I
)
_DAEMON_MARKERS: Final = re.compile(
    r"DaemonRegistration(?:Request|Response)|DaemonHeartbeat(?:Request|Response)"
    r"|\bStream established\."
)
_NAME_MARKERS: Final = re.compile(r"mldiagnostics|diagon", re.I)
_MIN_SHARE: Final = 0.5

# Pod log file names: /var/log/pods/NS_POD_UID/CONTAINER/N.log, /var/log/containers/
# POD_NS_CONTAINER-ID.log, or a file named after the pod (kubectl logs POD > POD.log). A
# generated pod name ends in a 5-character suffix from Kubernetes' vowel-less alphabet.
_POD_NAME: Final = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?-[bcdfghjklmnpqrstvwxz2456789]{5}"
_POD_DIR: Final = re.compile(
    r"(?:^|/)(?P<ns>[a-z0-9-]+)_(?P<pod>[a-z0-9.-]+)_[0-9a-f-]{36}/(?P<container>[^/]+)/\d+\.log"
)
_CONTAINER_FILE: Final = re.compile(
    r"(?:^|/)(?P<pod>[a-z0-9.-]+)_(?P<ns>[a-z0-9-]+)_(?P<container>[^/_]+)-[0-9a-f]{64}\.log$"
)
_POD_FILE: Final = re.compile(rf"^(?P<pod>{_POD_NAME})(?:\.log|\.txt)?$")
_LOG_SUFFIXES: Final = (".gz", ".zst")
_MACHINE_HEADER: Final = re.compile(r"^Running on machine: (\S+)\s*$")


@dataclass
class DiagonHints(FileHints):
    """File hints plus the namespace a kubelet log path names."""

    namespace: str | None = None


class DiagonDaemonReader(LineReader):
    """ML Diagnostics daemon and connection-operator logs (see module docstring)."""

    name: ClassVar[str] = "diagon"
    source: ClassVar[str] = "diagon"
    grammars: ClassVar[tuple[Grammar, ...]] = (*ZAP_GRAMMARS, *grammars.GRAMMARS)

    def sniff(self, head: bytes, path: str) -> float:
        """Above the text reader only when the lines parse and Diagon names them.

        A file is claimed when at least half of its head lines are log lines (glog, zap, ...)
        and the head or the path names ML Diagnostics / Diagon (daemon lifecycle strings,
        ``MLDiagnosticsConnection``, ``managed-mldiagnostics-gke``, ``diagon`` or
        ``mldiagnostics``). SDK lines alone count only when they are most of the file.
        """
        if not head or looks_binary(head):
            return 0.0
        lines = head_lines(head)
        if not lines:
            return 0.0
        # The markers are decided on the joined head (none spans a line break) before the
        # costlier grammar share: most files of a bundle are not Diagon's, and say so early.
        text = "\n".join(lines)
        lowered = text.lower()
        if (
            "diagon" not in lowered
            and "mldiagnostics" not in lowered
            and not _DAEMON_MARKERS.search(text)
            and not _NAME_MARKERS.search(path)
        ):
            return 0.0  # every marker below needs one of these (a plain substring test is fast)
        named = bool(
            _NAME_MARKERS.search(_SDK_SPANS.sub("", path))
            or _DAEMON_MARKERS.search(text)
            or _NAME_MARKERS.search(_SDK_SPANS.sub("", text))
        )
        if not named:
            if not _SDK_SPANS.search(text):
                return 0.0
            sdk = sum(1 for line in lines if _SDK_SPANS.search(line))
            if sdk * 2 < len(lines):
                return 0.0
        share = grammars.share_recognized(lines, self.grammars)
        if share < _MIN_SHARE:
            return 0.0  # not a log of lines (a JSON document such as gcloud output, a table)
        return 0.7 + 0.25 * share

    def hints(self, head: bytes, ctx: ReadContext) -> FileHints:
        """The common hints, plus pod/container/namespace from a pod log path and the host
        from a glog ``Running on machine:`` header."""
        base = super().hints(head, ctx)
        pod, container, namespace = pod_from_path(ctx.path)
        host = None
        for line in head.decode("utf-8", "replace").splitlines()[:20]:
            match = _MACHINE_HEADER.match(line)
            if match:
                host = match.group(1)
                break
        return DiagonHints(
            base.anchor,
            base.tz,
            host=host or base.host,
            pod=pod or base.pod,
            container=container or base.container,
            workload=base.workload,
            worker=base.worker,
            extra=base.extra,
            namespace=namespace,
        )

    def adjust(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """What zap needs: JSON lines keep their whole text as the message (the fields after
        ``msg`` are the evidence), epoch stamps are parsed (the console form writes them in
        scientific notation, which the grammar stamps cannot read), and zap's
        ``dpanic``/``panic`` levels are mapped onto the canonical scale."""
        grammar = pl.col("grammar")
        stamp = pl.coalesce([pl.col("text").str.extract(pattern, 1) for pattern in _EPOCH_IN_LINE])
        epoch = pl.when(grammar.is_in(list(_ZAP_EPOCH))).then(epoch_expr(stamp))
        wrapped = pl.col("ts").is_not_null()
        level = pl.col("level").str.to_uppercase()
        return lines.with_columns(
            pl.when(grammar.is_in(list(_ZAP_JSON)))
            .then(pl.col("text").str.slice(pl.col("text").str.find("{", literal=True)))
            .otherwise(pl.col("message"))
            .alias("message"),
            pl.when(wrapped).then(pl.col("ts")).otherwise(epoch).alias("ts"),
            pl.when(wrapped)
            .then(pl.col("ts_quality"))
            .when(epoch.is_not_null())
            .then(pl.lit("exact"))
            .otherwise(pl.col("ts_quality"))
            .alias("ts_quality"),
            pl.when(wrapped & epoch.is_not_null())
            .then(epoch)
            .otherwise(pl.col("payload_ts"))
            .alias("payload_ts"),
            pl.when(grammar.is_in(list(_ZAP_ALL)))
            .then(level.replace(_ZAP_LEVELS))
            .otherwise(pl.col("level"))
            .alias("level"),
        )

    def finish(self, rows: pl.DataFrame, hints: FileHints) -> pl.DataFrame:
        """Lifecycle tags in ``extra``, the namespace from the path, and console lines whose
        one-word message was taken for a logger name put back together."""
        namespace = hints.namespace if isinstance(hints, DiagonHints) else None
        # "Reconciling\t{...}": no logger, a one-word message, then fields.
        misread = (
            (pl.col("reader") == "diagon.zap")
            & pl.col("logger").is_not_null()
            & pl.col("message").str.starts_with("{")
            & ~pl.col("message").str.starts_with('{"level":')
        )
        rows = rows.with_columns(
            pl.when(misread)
            .then(pl.concat_str([pl.col("logger"), pl.lit("\t"), pl.col("message")]))
            .otherwise(pl.col("message"))
            .alias("message"),
            pl.when(misread).then(None).otherwise(pl.col("logger")).alias("logger"),
        )
        tag = pl.when(~pl.col("message").str.contains(_NOT_DIAGON)).then(
            pl.coalesce(
                [
                    pl.when(pl.col("message").str.contains(pattern)).then(pl.lit(event))
                    for event, pattern in DIAGON_EVENTS
                ]
            )
        )
        member = pl.concat_str([pl.lit('"diagon_event":"'), tag, pl.lit('"')])
        extra = pl.col("extra")
        return rows.with_columns(
            pl.when(tag.is_null())
            .then(extra)
            .when(extra.is_null())
            .then(pl.concat_str([pl.lit("{"), member, pl.lit("}")]))
            .otherwise(
                pl.concat_str(
                    [
                        extra.str.slice(0, extra.str.len_chars() - 1),
                        pl.lit(","),
                        member,
                        pl.lit("}"),
                    ]
                )
            )
            .alias("extra"),
            pl.lit(namespace, dtype=pl.String).alias("namespace"),
        )


def epoch_expr(stamp: pl.Expr) -> pl.Expr:
    """Seconds since the epoch as zap writes them (``1795975802.381234`` or
    ``1.7959758023812342e+09``) to UTC nanoseconds, by moving the decimal point in the text
    (a float would lose the last digits)."""
    parts = stamp.str.extract_groups(r"^(?P<i>\d+)(?:\.(?P<f>\d*))?(?:[eE]\+?(?P<e>\d+))?$")
    whole = parts.struct.field("i")
    digits = pl.concat_str([whole, parts.struct.field("f").fill_null("")])
    point = whole.str.len_chars() + parts.struct.field("e").fill_null("0").cast(pl.UInt32)
    seconds = digits.str.pad_end(point, "0").str.slice(0, point)
    fraction = digits.str.slice(point)
    return epoch_seconds(pl.concat_str([seconds, pl.lit("."), fraction]))


def pod_from_path(path: str) -> tuple[str | None, str | None, str | None]:
    """(pod, container, namespace) named by a pod log's path, when the path looks like one."""
    match = _POD_DIR.search(path) or _CONTAINER_FILE.search(path)
    if match:
        return match.group("pod"), match.group("container"), match.group("ns")
    parts = [p for p in re.split(r"[/\\]", path) if p]
    for index, part in enumerate(reversed(parts[-2:])):
        name = part
        if index == 0:
            for suffix in _LOG_SUFFIXES:
                name = name.removesuffix(suffix)
        match = _POD_FILE.match(name)
        if match:
            return match.group("pod"), None, None
    return None, None, None


# -- the gcloud document reader --------------------------------------------------------------

#: Documents are parsed whole (jsondoc keeps every object's position); API output is small.
DOCUMENT_LIMIT: Final = 64 << 20
_RUN_NAME: Final = re.compile(r"/machineLearningRuns/([^/]+)")
_EVENT_NAME: Final = re.compile(r"/monitoredEvents/([^/]+)")
#: The ML Diagnostics MXLA hang analyzer's codes (failure-modes.md §1.1, [S12]) and the cause
#: names of the Megascale digest behind them ([S22], unofficial).
HANG_CODES: Final = (
    "FINGERPRINT_MISMATCH",
    "DATA_INPUT_STALL",
    "PROGRAM_NOT_QUEUED",
    "UNRECOVERABLE_ERROR",
    "NETWORKING_ISSUE",
    "DIFFERENT_MODULE",
    "BAD_TPU_CHIP",
    "BAD_SC_CHIP",
    "UNKNOWN_CAUSE",
)
_CODE_IN_TEXT: Final = re.compile(r"\b(" + "|".join(HANG_CODES) + r")\b")
_CODE_FIELD: Final = re.compile(r"\b(" + "|".join((*HANG_CODES, "UNKNOWN")) + r")\b")
_UNKNOWN_TEXT: Final = "potential cause is not determined"
_CODE_KEYS: Final = frozenset({"code", "cause", "potentialCause", "reason", "type", "hangType"})
# Compute Engine instance IDs are unsigned 64-bit numbers (19-20 digits in practice): long
# digit runs that are not part of a longer token.
_INSTANCE_ID: Final = re.compile(r"(?<![\w.:/-])(\d{12,20})(?![\w-]|\.\d)")
_NODE_KEYS: Final = frozenset(
    {"node", "nodeName", "nodeNames", "nodes", "hostname", "hostName", "hostNames", "hosts"}
    | {"instanceName", "instanceNames"}
)
_SNIFF_MARKERS: Final = (
    b"/machineLearningRuns/",
    b'"analyzerReports"',
    b'"runPhase"',
    b'"machineLearningRuns"',
    b'"monitoredEvents"',
)
_WRAPPERS: Final = ("machineLearningRuns", "monitoredEvents")

_ROW_SCHEMA: Final[dict[str, pl.DataType]] = {
    "line": pl.Int32(),
    "offset": pl.Int64(),
    "reader": pl.String(),
    "_ts": pl.String(),
    "ts_quality": pl.String(),
    "severity": pl.String(),
    "host": pl.String(),
    "namespace": pl.String(),
    "workload": pl.String(),
    "logger": pl.String(),
    "message": pl.String(),
    "extra": pl.String(),
}


class DiagonApiReader:
    """``gcloud alpha mldiagnostics`` JSON output (see module docstring).

    One record is one JSON object that yields a row: an ML run, a monitored event, or one entry
    of an event's ``analyzerReports``; anything else at those places (an element that is not an
    object, an object that is neither a run nor an event) is a record that is quarantined.
    A document that is not valid JSON is one quarantined record.
    """

    name: ClassVar[str] = "diagon_api"
    source: ClassVar[str] = "diagon"

    def sniff(self, head: bytes, path: str) -> float:
        """0.95 for a JSON document with ML run / monitored event keys; 0 otherwise."""
        text = head.removeprefix(BOM).lstrip()
        if text[:1] not in (b"[", b"{"):
            return 0.0
        if b'"logName"' in text or b'"log_name"' in text:
            return 0.0  # a Cloud Logging entry (e.g. an SDK metric) mentioning a run
        if any(marker in text for marker in _SNIFF_MARKERS):
            return 0.95
        return 0.0

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Parse the document and yield its rows in one frame."""
        data = content.read_at_most(DOCUMENT_LIMIT + 1)
        if len(data) > DOCUMENT_LIMIT:
            ctx.counts.records += 1
            ctx.file_issue(f"JSON document is larger than {DOCUMENT_LIMIT:,} bytes; not parsed")
            ctx.drop(1, 0, "JSON document too large to parse", data[:4096])
            return
        if not data.removeprefix(BOM).strip():
            return
        try:
            document = load(data)
        except DocumentError as exc:
            ctx.counts.records += 1
            ctx.drop(exc.line, exc.offset, f"not valid JSON: {exc}", data[:4096])
            return
        builder = _Rows(data, ctx)
        builder.document(document)
        if builder.rows:
            frame = builder.frame()
            ctx.counts.rows += frame.height
            yield frame


def _text(value: Any) -> str | None:
    """A scalar as text (``None`` for missing, empty and structured values)."""
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if text.strip() else None


def _time(value: Any) -> str | None:
    """An RFC 3339 time, with the API's ``0001-01-01T00:00:00Z`` "unset" value as ``None``."""
    text = _text(value)
    if text is None or text.startswith("0001-01-01"):
        return None
    return text


def _plain(value: Any) -> Any:
    """A parsed value as plain dicts and lists (for ``json.dumps``)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _strings(value: Any, skip: frozenset[str] = frozenset()) -> Iterable[tuple[str, str]]:
    """(key, text) of every string and integer below ``value``, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in skip:
                continue
            if isinstance(item, str):
                yield key, item
            elif isinstance(item, int) and not isinstance(item, bool):
                yield key, str(item)
            else:
                for _, text in _strings(item, skip):
                    yield key, text
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield "", item
            elif isinstance(item, int) and not isinstance(item, bool):
                yield "", str(item)
            else:
                yield from _strings(item, skip)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def hang_codes(report: dict[str, Any]) -> list[str]:
    """The hang analyzer codes a report (or event) carries: in a code-like field (where a bare
    ``UNKNOWN`` counts too) or in its text; "cause is not determined" means ``UNKNOWN``."""
    found: list[str] = []
    for key, text in _strings(report, frozenset({"documentationUrl"})):
        pattern = _CODE_FIELD if key in _CODE_KEYS else _CODE_IN_TEXT
        found.extend(pattern.findall(text))
        if _UNKNOWN_TEXT in text:
            found.append("UNKNOWN")
    return _unique(found)


def instance_ids(report: dict[str, Any]) -> list[str]:
    """Numeric Compute Engine instance IDs named anywhere in a report (details, recommended
    actions, list fields), as strings, in order of first mention."""
    found = [
        match
        for _, text in _strings(report, frozenset({"documentationUrl"}))
        for match in _INSTANCE_ID.findall(text)
    ]
    return _unique(found)


def node_names(report: dict[str, Any]) -> list[str]:
    """Node or instance *names* a report gives in fields made for them (never from free text,
    never a numeric ID)."""
    names: list[str] = []
    for key, value in report.items():
        if key not in _NODE_KEYS:
            continue
        for _, text in _strings({key: value}):
            if text.strip() and not text.strip().isdigit():
                names.append(text.strip())
    return _unique(names)


class _Rows:
    """Collects rows (as plain Python values) while walking a document."""

    def __init__(self, data: bytes, ctx: ReadContext) -> None:
        self.data = data
        self.ctx = ctx
        self.rows: list[dict[str, Any]] = []

    # -- walking -----------------------------------------------------------------------------

    def document(self, document: Any) -> None:
        if isinstance(document, LocatedList):
            for item in document:
                self.item(item, document)
        elif isinstance(document, LocatedDict):
            wrapped = [key for key in _WRAPPERS if isinstance(document.get(key), LocatedList)]
            if wrapped and _kind(document) is None:
                # A raw API list response: {"machineLearningRuns": [...], "nextPageToken": ...}
                for key in wrapped:
                    for item in document[key]:
                        self.item(item, document[key])
            else:
                self.item(document, None)
        else:
            line, offset = self._start()
            self.ctx.counts.records += 1
            self.ctx.drop(line, offset, "JSON document is not an object or an array of objects")

    def item(self, item: Any, parent: LocatedList | None) -> None:
        self.ctx.counts.records += 1
        if not isinstance(item, LocatedDict):
            # Scalars carry no position: cite the array that holds them.
            line, offset = (parent.line, parent.offset) if parent is not None else self._start()
            self.ctx.drop(
                line,
                offset,
                "array element is not a JSON object (ML run or monitored event)",
                json.dumps(_plain(item))[:4096].encode(),
            )
            return
        kind = _kind(item)
        if kind == "ml_run":
            self.run(item)
        elif kind == "monitored_event":
            self.event(item)
        else:
            self.ctx.drop(
                item.line,
                item.offset,
                "JSON object is neither an ML run nor a monitored event",
                self._raw(item.offset),
            )

    def _start(self) -> tuple[int, int]:
        """Line and offset of the document's first value."""
        body = self.data.removeprefix(BOM)
        skipped = len(self.data) - len(body)
        offset = skipped + len(body) - len(body.lstrip())
        return self.data[:offset].count(b"\n") + 1, offset

    def _raw(self, offset: int) -> bytes:
        """The bytes of the JSON value starting at ``offset`` (at most 4 KiB)."""
        text = self.data[offset : offset + (1 << 20)].decode("utf-8", "replace")
        try:
            _, end = json.JSONDecoder().raw_decode(text)
        except ValueError:
            return self.data[offset : offset + 4096]
        return text[:end].encode()[:4096]

    # -- rows --------------------------------------------------------------------------------

    def add(self, obj: LocatedDict, kind: str, **columns: Any) -> None:
        extra = columns.pop("extra")
        self.rows.append(
            {
                "line": obj.line,
                "offset": obj.offset,
                "reader": f"{DiagonApiReader.name}.{kind}",
                **columns,
                "extra": json.dumps(_plain(extra), ensure_ascii=False, separators=(",", ":")),
            }
        )

    def run(self, run: LocatedDict) -> None:
        """One ML run: its phase and times; the workload from ``workloadDetails.gke``."""
        name = _text(run.get("name"))
        run_id = _run_id(name)
        gke = _dict(_dict(run.get("workloadDetails")).get("gke"))
        phase = _text(run.get("runPhase"))
        created = _time(run.get("createTime"))
        updated = _time(run.get("updateTime"))
        error = _text(run.get("errorDetails"))
        extra = _with_times(run, ("createTime", "updateTime", "endTime"))
        extra.update(
            run_id=run_id,
            cluster=_text(gke.get("cluster")),
            workload_kind=_text(gke.get("kind")),
        )
        words = ["ML run", name or run_id or "(unnamed)"]
        display = _text(run.get("displayName"))
        if display:
            words.append(f"({display})")
        words.append(f"runPhase {phase or 'unknown'}")
        message = " ".join(words)
        if error:
            message += f"\nerrorDetails: {error}"
        failed = phase is not None and "FAIL" in phase.upper()
        self.add(
            run,
            "ml_run",
            _ts=created or updated,
            ts_quality="exact",
            severity="ERROR" if failed else "INFO",
            host=None,
            namespace=_text(gke.get("namespace")),
            workload=_text(gke.get("id")) or run_id,
            logger=None,
            message=message,
            extra=_clean(extra),
        )

    def event(self, event: LocatedDict) -> None:
        """One monitored event, then one row per analyzer report it carries."""
        name = _text(event.get("name"))
        run_id = _run_id(name)
        event_type = _text(event.get("type"))
        started = _time(event.get("startTime"))
        reports = event.get("analyzerReports")
        extra = _with_times(event, ("startTime", "endTime"))
        extra.pop("analyzerReports", None)
        codes = hang_codes({"type": event_type}) if event_type else []
        extra.update(
            run_id=run_id,
            event_id=_event_id(name),
            code=codes[0] if codes else None,
            analyzer_reports=len(reports) if isinstance(reports, list) else None,
        )
        display = _text(event.get("displayName"))
        message = ": ".join(part for part in (event_type, display) if part) or (
            f"monitored event {name or '(unnamed)'}"
        )
        # Workload monitoring only records an event for an anomaly (degradation, hang,
        # interruption, termination): WARNING; the verdicts are the report rows' own.
        self.add(
            event,
            "monitored_event",
            _ts=started,
            ts_quality="exact",
            severity="WARNING",
            host=None,
            namespace=None,
            workload=run_id,
            logger=event_type,
            message=message,
            extra=_clean(extra),
        )
        if reports is None:
            return
        if not isinstance(reports, LocatedList):
            self.ctx.repaired(
                event.line, event.offset, "analyzerReports is not a list; no report rows"
            )
            return
        for report in reports:
            self.ctx.counts.records += 1
            if not isinstance(report, LocatedDict):
                self.ctx.drop(
                    reports.line,
                    reports.offset,
                    "analyzerReports entry is not a JSON object",
                    json.dumps(_plain(report))[:4096].encode(),
                )
                continue
            self.report(report, event, started, run_id, name, event_type)

    def report(
        self,
        report: LocatedDict,
        event: LocatedDict,
        started: str | None,
        run_id: str | None,
        event_name: str | None,
        event_type: str | None,
    ) -> None:
        """One analyzer verdict: its own text verbatim, its codes and culprit instance IDs."""
        analyzer = _text(report.get("analyzer"))
        state = _text(report.get("detectionState"))
        details = _text(report.get("details"))
        actions = report.get("recommendedActions")
        codes = hang_codes(report)
        ids = instance_ids(report)
        nodes = node_names(report)
        lines = [details] if details else [": ".join(p for p in (analyzer, state) if p)]
        for action in actions if isinstance(actions, list) else []:
            description = _text(action.get("description")) if isinstance(action, dict) else None
            if description:
                lines.append(f"Recommended action: {description}")
        message = "\n".join(line for line in lines if line) or "analyzer report"
        extra: dict[str, Any] = dict(report)
        extra.update(
            event_name=event_name,
            event_type=event_type,
            run_id=run_id,
            code=codes[0] if codes else None,
            codes=codes if len(codes) > 1 else None,
            instance_ids=ids or None,
            node_names=nodes or None,
        )
        self.add(
            report,
            "analyzer_report",
            _ts=started,
            ts_quality="inherited",
            severity="ERROR" if state == "DETECTED" else "INFO",
            host=nodes[0] if len(nodes) == 1 else None,
            namespace=None,
            workload=run_id,
            logger=analyzer,
            message=message,
            extra=_clean(extra),
        )

    # -- frame -------------------------------------------------------------------------------

    def frame(self) -> pl.DataFrame:
        """The rows with canonical columns; times parsed, unparseable ones noted."""
        frame = pl.DataFrame(self.rows, schema=_ROW_SCHEMA)
        frame = frame.with_columns(rfc3339(pl.col("_ts")).alias("ts"))
        bad = frame.filter(pl.col("_ts").is_not_null() & pl.col("ts").is_null())
        for line, offset, value in bad.select("line", "offset", "_ts").iter_rows():
            self.ctx.repaired(
                line,
                offset,
                f"time {value[:64]!r} is not an RFC 3339 time; the row has no time from it",
            )
        return frame.select(
            pl.col("line"),
            pl.col("offset"),
            pl.lit(DiagonApiReader.source).alias("source"),
            pl.col("reader"),
            pl.col("ts").cast(NS),
            pl.col("ts_quality"),
            pl.col("severity"),
            host_expr(pl.col("host")).alias("host"),
            pl.col("namespace"),
            pl.col("workload"),
            pl.col("logger"),
            pl.col("message"),
            pl.col("extra"),
        )


def _kind(obj: dict[str, Any]) -> str | None:
    """``ml_run``, ``monitored_event`` or ``None`` for an object of neither shape."""
    name = _text(obj.get("name")) or ""
    if "/monitoredEvents/" in name or "analyzerReports" in obj or "analyzerInsightFound" in obj:
        return "monitored_event"
    if "/machineLearningRuns/" in name or "runPhase" in obj or "workloadDetails" in obj:
        return "ml_run"
    return None


def _with_times(obj: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The object's members, with the time members it has normalized (unset → ``None``)."""
    members = dict(obj)
    for key in keys:
        if key in members:
            members[key] = _time(members[key])
    return members


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _run_id(name: str | None) -> str | None:
    match = _RUN_NAME.search(name or "")
    return match.group(1) if match else None


def _event_id(name: str | None) -> str | None:
    match = _EVENT_NAME.search(name or "")
    return match.group(1) if match else None


def _clean(extra: dict[str, Any]) -> dict[str, Any]:
    """Drop derived keys that came out empty; members copied from the document stay, and the
    document's unset times stay as explicit nulls so "unset" is visible."""
    derived = {
        "run_id",
        "event_id",
        "cluster",
        "workload_kind",
        "code",
        "codes",
        "instance_ids",
        "node_names",
        "event_name",
        "event_type",
        "analyzer_reports",
    }
    return {key: value for key, value in extra.items() if key not in derived or value is not None}
