"""What the verdict rules share: the attempt's context, and statements and verdicts while
their citations are still row ids."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from analyzer.diagnose.attempts import Attempt
from analyzer.diagnose.evidence import CaseData
from analyzer.diagnose.findings import Confidence, CulpritKind, Message, SubjectKind
from analyzer.diagnose.outliers import Outlier
from analyzer.hosts import HostMap


def workload_rows() -> pl.Expr:
    """Rows the workload itself wrote (a silent host stops writing them; its node journal and
    the control plane go on): its own log files, and of a Cloud Logging export only
    the container logs (a row with a pod), not the node, audit and event entries beside them."""
    return pl.col("source").is_in(["modelarts", "text"]) | (
        (pl.col("source") == "cloud_logging") & pl.col("pod").is_not_null()
    )


#: Families whose rows say what happened to a node (corroboration of a host culprit).
NODE_FAMILIES = ("gce", "gke", "kubelet", "node")
#: At most this many rows are cited for one statement (the count is given in words).
MAX_CITED = 5


def message(key: str, **params: str | int | float | Message) -> Message:
    """The catalogue key ``key`` with its parameters (see :class:`Message`)."""
    return Message(key=key, params=params)


@dataclass(frozen=True)
class Said:
    """A sentence in English (what findings.json states) and as a catalogue message."""

    text: str
    message: Message


def said(key: str, text: str, **params: str | int | float | Message) -> Said:
    return Said(text, message(key, **params))


@dataclass
class Claim:
    """A statement before its citations are turned into quoted rows."""

    text: str
    basis: str
    rule: str | None
    row_ids: list[int]
    message: Message | None = None


@dataclass
class CulpritDraft:
    kind: CulpritKind
    subject: str
    host: str | None = None
    row_ids: list[int] = field(default_factory=list)
    support: str | None = None
    #: (kind, name) of the subject the cited rows name, as they write it.
    named: tuple[SubjectKind, str] | None = None
    subject_message: Message | None = None
    support_message: Message | None = None


@dataclass
class PhaseDraft:
    """The training phase an attempt failed in, with row ids for citations."""

    phase: str
    step: int | None
    text: str
    row_ids: list[int]
    #: (host, step, row id) of each host's last step line.
    last_steps: list[tuple[str | None, int, int]] = field(default_factory=list)
    message: Message | None = None


@dataclass
class VerdictDraft:
    """A verdict whose citations are still row ids (the caller quotes them)."""

    attempt: Attempt
    failure_mode: str
    failure_class: str
    summary: Said
    confidence: Confidence
    confidence_reason: Said
    first_error: dict[str, object] | None
    culprit: CulpritDraft
    claims: list[Claim]
    conflicts: list[Claim]
    negative: list[Said]
    next_steps: list[Said]
    lead_ids: list[int]
    timeline_ids: list[int] = field(default_factory=list)
    lead_rule: str | None = None
    outliers: list[Outlier] = field(default_factory=list)
    phase: PhaseDraft | None = None


def when(value: object) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    return "an unknown time"


def when_message(value: object) -> str | Message:
    """:func:`when` as a message parameter (a time reads alike in every language)."""
    return when(value) if isinstance(value, dt.datetime) else message("time.unknown")


def host_message(value: object, unnamed: str = "host.unnamed") -> str | Message:
    """A host name as a message parameter, or the words for a missing one."""
    return str(value) if value is not None else message(unnamed)


def as_int(value: object) -> int | None:
    return int(value) if isinstance(value, int) else None


@dataclass(frozen=True)
class Context:
    data: CaseData
    attempt: Attempt
    evidence: pl.DataFrame
    #: host -> (time in ns, row id) of the last row of its workload's own output here.
    last_seen: dict[str, tuple[int, int]]
    tolerance_ns: int
    #: Time in ns of the attempt's first workload row with a host (None when there is none).
    workload_start: int | None = None
    #: One row per template x host of the attempt (analyzer.diagnose.patterns).
    templates: pl.DataFrame | None = None
    #: The template of every row of the case (row_id, template_id, ts, host), lazily.
    template_rows: pl.LazyFrame | None = None
    #: The attempt's hosts ranked by how their templates differ from their peers'.
    outliers: list[Outlier] = field(default_factory=list)
    #: Template texts of a healthy baseline run (never leads).
    known_templates: frozenset[str] = frozenset()

    @property
    def host_map(self) -> HostMap:
        return self.data.host_map


def as_str(value: object) -> str | None:
    return None if value is None else str(value)
