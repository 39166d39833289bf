"""The ``diagon`` reader: logs of the Google Cloud ML Diagnostics ("Diagon") daemon and its
connection operator (formats.md §4).

``kubectl logs`` of the ML Diagnostics daemon and of the connection operator. The daemon writes
glog/absl C++ lines (the common grammars parse them); the operator is a controller-runtime
manager that logs through zap, either as JSON lines or in zap's tab-separated console form,
with client-go's klog lines in between. Daemon lifecycle lines (stream, registration,
heartbeat, reconnect, shutdown) are liveness evidence for the node the daemon runs on, so they
are tagged in ``extra`` (``diagon_event``); they keep their own level because they are context,
not errors. The ``gcloud`` JSON of ML runs and hang-analyzer events in the same dumps is read
by :mod:`analyzer.ingest.readers.diagon_api`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Final

import polars as pl

from analyzer.ingest.base import ReadContext
from analyzer.ingest.columns.timestamps import epoch_seconds
from analyzer.ingest.lines import grammars
from analyzer.ingest.lines.grammars import Grammar
from analyzer.ingest.lines.head import head_lines, looks_binary, share_recognized
from analyzer.ingest.lines.hints import FileHints
from analyzer.ingest.lines.reader import LineReader

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
        share = share_recognized(lines, self.grammars)
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
