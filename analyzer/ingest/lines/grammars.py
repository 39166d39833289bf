"""Line prefix grammars (absl/glog, TF tsl, Python logging, log4j, syslog …): the table.

A grammar is one anchored regex for the prefix of a line (stamp, level, logger, thread) and
how its stamp is read. This module holds the common grammars every line reader starts from,
and the wrappers other tools put in front of a line (``kubectl logs --prefix``,
``--timestamps``, CRI framing, Ray's process prefix, torchrun ``[rankN]:``);
:mod:`analyzer.ingest.lines.parse` runs them over a column of lines and
:mod:`analyzer.ingest.lines.head` over a file head. Readers add their own grammars in front.

Grammar texts follow ``../shared/reference/formats.md`` §2.1, §5.1 and §5.4.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final, Literal

StampKind = Literal["epoch", "yearless", "local", "zoned", "none"]


@dataclass(frozen=True)
class Grammar:
    """One line grammar.

    ``pattern`` is anchored, matches the line's prefix (the message is what follows it) and
    uses the named group ``lvl`` and optionally ``stamp``, ``zone``, ``logger``, ``tid`` and
    ``host``. ``family`` becomes the
    row's reader suffix (``text.absl``). ``stamp`` says how the stamp is read: ``epoch``
    seconds (exact), ``yearless`` (``fmt`` applied to the anchor's year followed by the
    stamp), ``local`` (``fmt`` applied to the stamp, a local time), ``zoned`` (an RFC 3339
    instant with its offset) or ``none``. ``normalize`` rewrites the stamp first (regex,
    replacement). A ``rank`` group fills the rank column; groups named in ``attrs`` are kept
    in the ``attrs`` JSON column. A grammar with ``after_timestamp`` only applies to lines
    whose timestamp was already peeled off as a wrapper (``journalctl -o short-iso`` puts
    the host after an RFC 3339 stamp).
    """

    name: str
    family: str
    pattern: str
    stamp: StampKind
    fmt: str = ""
    normalize: tuple[tuple[str, str], ...] = ()
    attrs: tuple[str, ...] = ()
    after_timestamp: bool = False

    @functools.cached_property
    def groups(self) -> frozenset[str]:
        """Named groups of the pattern."""
        return frozenset(re.findall(r"\(\?P<(\w+)>", self.pattern))

    @functools.cached_property
    def prefix(self) -> str:
        """The pattern with the whole prefix captured as ``all``.

        Only the prefix is captured: running the capture engine over the (long) message would
        cost three times as much.
        """
        return f"^(?P<all>{self.pattern.removeprefix('^')})"


_LOGGER_FILE: Final = r"(?P<logger>[^ :\]]+:\d+)"
_HMS: Final = r"\d{2}:\d{2}:\d{2}"
_ISO_LOCAL: Final = rf"\d{{4}}-\d{{2}}-\d{{2}}[ T]{_HMS}(?:[,.]\d{{1,9}})?"
_PY_LEVEL: Final = "DEBUG|INFO|WARNING|ERROR|CRITICAL"
_JAVA_LEVEL: Final = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE"
# asctime/log4j stamps vary (',' or '.' before the fraction, 'T' or ' '): normalized first.
ISO_FORMAT: Final = "%Y-%m-%d %H:%M:%S%.f"
ISO_NORMALIZE: Final = ((",", "."), ("T", " "))

#: An event's age in a kubectl table: ``5m2s``, ``<unknown>``, ``9h (x108 over 18h)``.
_EVENT_AGE: Final = r"(?:<\w+>|\S+)(?: \(x\d+ \w+ \S+\))?"
#: Who reported an event: ``default-scheduler``, ``kubelet``, ``kubelet, node-7`` (older
#: kubectl names the node after the component).
_EVENT_SOURCE: Final = r"(?P<source>[a-z][\w.-]*)(?:, (?P<host>[\w.-]+))?"

#: Event tables as kubectl prints them (formats.md §7): ``describe``'s ``Type Reason Age From
#: Message``, ``get events``' ``LAST SEEN TYPE REASON OBJECT MESSAGE`` and the tab-separated
#: ``FirstSeen LastSeen Count From SubObjectPath Type Reason Message`` of old releases. The
#: reason is the logger, the type the level (Warning, Normal); ages are relative, so no time.
KUBECTL_EVENTS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "kubectl_describe_event",
        "kubectl",
        rf"^\s+(?P<lvl>Normal|Warning)\s+(?P<logger>[A-Z]\w+)\s+{_EVENT_AGE}\s+{_EVENT_SOURCE}\s+",
        "none",
        attrs=("source",),
    ),
    Grammar(
        "kubectl_get_event",
        "kubectl",
        r"^\S+\s+(?P<lvl>Normal|Warning)\s+(?P<logger>[A-Z]\w+)\s+"
        r"(?:pod/(?P<pod>\S+)|node/(?P<host>\S+)|[\w.-]+/\S+)\s+",
        "none",
    ),
    Grammar(
        "kubectl_old_event",
        "kubectl",
        r"^\s*\S+\t+\S+\t+\d+\t+(?P<source>[a-z][\w.-]*)(?:, (?P<host>[^\t]+))?\t+[^\t]*\t+"
        r"(?P<lvl>Normal|Warning)\t+(?P<logger>\w+)\t+",
        "none",
        attrs=("source",),
    ),
)

#: RFC 5424 syslog (rsyslog's RSYSLOG_SyslogProtocol23Format, journald forwarders): after
#: the stamp (peeled off as a wrapper) come host, app, procid and msgid, then structured data
#: (``-`` when none): ``NodeA kubelet 24578 - -  E0207 02:49:40.738973 …``.
SYSLOG_5424: Final = Grammar(
    "syslog_5424",
    "syslog",
    r"^(?P<host>[^\s\[\]]+) (?P<logger>[^\s\[\]]+) (?P<tid>\d+|-) \S+ (?:-|\[[^\]]*\])+ *"
    r"(?P<lvl>)",
    "none",
    after_timestamp=True,
)

#: Tried in this order; the first match wins. Order matters where grammars overlap: the
#: pre-``InitializeLog`` epoch form of absl must come before the ``MMDD`` form.
GRAMMARS: Final[tuple[Grammar, ...]] = (
    Grammar(
        "absl_epoch",
        "absl",
        rf"^(?P<lvl>[IWEF])0000 00:00:(?P<stamp>\d+\.\d+) +(?P<tid>\d+) "
        rf"{_LOGGER_FILE}\] ?",
        "epoch",
    ),
    Grammar(
        "absl",
        "absl",
        rf"^(?P<lvl>[IWEF])(?P<stamp>\d{{4}} {_HMS}\.\d{{6}}) +(?P<tid>\d+) "
        rf"{_LOGGER_FILE}\] ?",
        "yearless",
        "%Y%m%d %H:%M:%S%.f",
    ),
    Grammar(
        "tsl",
        "absl",
        rf"^(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} {_HMS}\.\d{{6}}): (?P<lvl>[IWEF])(?: +(?P<tid>\d+))? "
        rf"(?P<logger>[^:\]]+:\d+)\] ?",
        "local",
        "%Y-%m-%d %H:%M:%S%.f",
    ),
    Grammar(
        "jax_debug",
        "python",
        rf"^(?P<lvl>{_PY_LEVEL}):(?P<stamp>\d{{4}}-\d{{2}}-\d{{2}} {_HMS},\d{{3}}):"
        rf"(?P<logger>[^:]+:\d+): ?",
        "local",
        "%Y-%m-%d %H:%M:%S,%3f",
    ),
    Grammar(
        "python_basic",
        "python",
        rf"^(?P<lvl>{_PY_LEVEL}):(?P<logger>[^:\s]*):",
        "none",
    ),
    Grammar(
        "asctime",
        "python",
        rf"^(?P<stamp>{_ISO_LOCAL}) - (?:(?P<logger>\S+) - )?(?P<lvl>[A-Z]+) - ",
        "local",
        ISO_FORMAT,
        ISO_NORMALIZE,
    ),
    Grammar(
        "vllm",
        "vllm",
        rf"^(?:\([^)]*\) )?(?P<lvl>{_PY_LEVEL}) (?P<stamp>\d{{2}}-\d{{2}} {_HMS}) "
        rf"\[(?P<logger>[^\]:]+:\d+)\] ",
        "yearless",
        "%Y%m-%d %H:%M:%S",
    ),
    Grammar(
        "log4j",
        "log4j",
        rf"^(?P<stamp>{_ISO_LOCAL})(?P<zone>Z|[+-]\d{{2}}:?\d{{2}})?\s+(?:(?P<tid>\d+)\s+)?"
        rf"\[?(?P<lvl>{_JAVA_LEVEL})\]?\s+",
        "local",
        ISO_FORMAT,
        ISO_NORMALIZE,
    ),
    Grammar(
        "spark",
        "log4j",
        rf"^(?P<stamp>\d{{2}}/\d{{2}}/\d{{2}} {_HMS})\s+(?P<lvl>{_JAVA_LEVEL})"
        rf"\s+(?:(?P<logger>[\w.$]+):\s)?",
        "local",
        "%y/%m/%d %H:%M:%S",
    ),
    Grammar(
        "hdfs",
        "log4j",
        rf"^(?P<stamp>\d{{6}} \d{{6}}) (?P<tid>\d+) (?P<lvl>{_JAVA_LEVEL}) "
        rf"(?P<logger>[\w.$]+): ",
        "local",
        "%y%m%d %H%M%S",
    ),
    # Blue Gene/L RAS events (as the loghub BGL dataset has them, its label column removed):
    # ``1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872
    # R02-M1-N0-C:J12-U11 RAS KERNEL INFO …`` (``NULL DISCOVERY …`` for service events). The
    # leading epoch seconds are exact UTC; the second stamp is the machine's local time (whole
    # seconds agree), so it is not used.
    Grammar(
        "bgl_ras",
        "bgl",
        r"^(?P<stamp>\d{9,11}) \d{4}\.\d{2}\.\d{2} (?P<host>\S+) "
        r"\d{4}-\d{2}-\d{2}-\d{2}\.\d{2}\.\d{2}\.\d{6} \S+ (?P<logger>\S+ \S+) "
        r"(?P<lvl>[A-Z]+) ",
        "epoch",
    ),
    Grammar(
        "syslog",
        "syslog",
        rf"^(?P<stamp>[A-Z][a-z]{{2}} +\d{{1,2}} {_HMS}(?:\.\d{{1,6}})?) (?P<host>[^\s\[\]:]+) +"
        rf"(?P<logger>[^\[:\s](?:[^\[:]*[^\[:\s])?)(?:\[(?P<tid>\d+)\])?: ?(?P<lvl>)",
        "yearless",
        "%Y%b %d %H:%M:%S%.f",
        ((r" +", " "),),
    ),
    SYSLOG_5424,
    *KUBECTL_EVENTS,
)

# Wrappers other tools add in front of a line; peeled off in the order of WRAPPERS.
KUBECTL_PREFIX: Final = r"^(?P<all>\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] )"
TIMESTAMP_PREFIX: Final = (
    r"^(?P<all>(?P<rfc>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) "
    r"(?:(?P<stream>stdout|stderr) (?P<tag>[PF]) )?)"
)
RANK_PREFIX: Final = r"^(?P<all>\[rank(?P<rank>\d+)\]: ?)"
#: Ray (and vLLM's multiprocess executor) name the process a line came from:
#: ``(TaskRunner pid=467613) ``, ``(pid=6093, ip=10.128.0.47) ``; the IP is the node's.
PROCESS_PREFIX: Final = (
    r"^(?P<all>\((?:[A-Za-z_][\w.:-]*(?: |, ))?pid=\d+"
    r"(?:, ip=(?P<ip>\d{1,3}(?:\.\d{1,3}){3}))?\) ?)"
)
ANY_WRAPPER: Final = (
    r"^(?:\[pod/|\[rank\d|\d{4}-\d{2}-\d{2}T|\((?:[A-Za-z_][\w.:-]*(?: |, ))?pid=\d)"
)
ANSI_ESCAPE: Final = r"\x1b\[[0-9;?]*[A-Za-z]"
LOG_FILE_HEADER: Final = r"^Log file created at: (\d{4})/(\d{2})/(\d{2}) "
#: The wrappers, in the order they are peeled off: kubectl's prefix, a timestamp (with CRI
#: framing), Ray's process prefix, torchrun's rank.
WRAPPERS: Final = (KUBECTL_PREFIX, TIMESTAMP_PREFIX, PROCESS_PREFIX, RANK_PREFIX)
