"""The ``diagon_api`` reader: ML Diagnostics ("Diagon") runs and hang-analyzer events as
``gcloud`` writes them (formats.md §4).

``gcloud alpha mldiagnostics machine-learning-run`` and ``monitored-events`` ``list|describe
--format=json`` output. Every ML run, every monitored event and every entry of an event's
``analyzerReports`` becomes a row that cites the line where its JSON object starts. Analyzer
reports name their culprits as numeric Compute Engine instance IDs; those are kept as IDs in
``extra`` (``instance_ids``) and never turned into a host name, because nothing in the document
says which node an ID belongs to. The daemon's own logs are read by
:mod:`analyzer.ingest.readers.diagon_daemon`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, Final

import polars as pl

from analyzer.ingest.base import ReadContext
from analyzer.ingest.blocks import BOM
from analyzer.ingest.columns.timestamps import NS, rfc3339
from analyzer.ingest.json.document import DocumentError, LocatedDict, LocatedList, load
from analyzer.schema import host_expr
from analyzer.streams import Content

#: Documents are parsed whole (:mod:`analyzer.ingest.json.document` keeps every object's
#: position); API output is small.
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
