"""``findings.json``: the diagnosis as data, every claim tied to the rows behind it.

The model is versioned (:data:`SCHEMA_VERSION`) and its JSON Schema is published by
``culprit schema findings``. Nothing in it depends on when or where the analysis ran: the same
bundle and tool version give byte-identical findings.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

SCHEMA_VERSION: Final = "culprit-findings/1"

Confidence = Literal["HIGH", "MEDIUM", "LOW"]
#: ``subject``: a task, rank, pod, node or address that the rows name as the one at fault
#: but that no row of the case ties to a host (the name is the culprit, as written).
CulpritKind = Literal["host", "program", "infrastructure", "subject", "undetermined"]
SubjectKind = Literal["task", "worker", "rank", "pod", "node", "host", "ip"]
Basis = Literal["observed", "inferred"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Message(_Model):
    """A sentence as a key of the report's message catalogue (``analyzer/report/messages.toml``)
    and its parameters, so a report can say it in another language. A parameter whose name
    ends in ``_en`` is English text from the catalogue or a knowledge page (a signature's
    title, a knowledge page's step) that has no translation; a parameter may be a message."""

    key: str
    params: dict[str, str | int | float | Message] = {}


class Citation(_Model):
    """One input row: its bundle-relative path, 1-based line and the case's row id.

    For a record folded from several lines (a traceback), ``line`` is the physical line that
    states what the signature matched and ``record_line`` the record's first line (None when
    they are the same line)."""

    path: str
    line: int
    row_id: int
    record_line: int | None = None


class EvidenceRow(_Model):
    """A cited row as a report quotes it (``message`` verbatim, redacted when asked)."""

    citation: Citation
    ts: dt.datetime | None
    host: str | None
    signature: str | None
    role: str | None
    message: str


class Statement(_Model):
    """One sentence of the verdict: *observed* when a cited row says it, *inferred* when the
    named ``rule`` concluded it from the cited rows."""

    text: str
    basis: Basis
    rule: str | None = None
    citations: list[Citation]
    message: Message | None = None


class FirstError(_Model):
    signature: str
    title: str
    knowledge: str
    citation: Citation
    ts: dt.datetime | None
    host: str | None
    message: str


class NamedSubject(_Model):
    """The subject a row names as the one at fault, as the row writes it."""

    kind: SubjectKind
    name: str


class Culprit(_Model):
    kind: CulpritKind
    #: The canonical host (node name where known) for ``host`` and single-node
    #: ``infrastructure`` culprits; None otherwise.
    host: str | None = None
    #: Other names of that host found in the case (pod, pod hostname, task, worker, IP…).
    aliases: list[str] = []
    #: What the verdict blames in words ("the program", "task 7 of llm-pretrain", …).
    subject: str
    evidence: list[Citation]
    #: How many distinct hosts' rows name the culprit, e.g. "named by 63 of 64 hosts".
    support: str | None = None
    #: The task, worker, rank, pod, node, host or address the cited rows name (a host
    #: culprit's own name when it is the writer of the first error).
    named: NamedSubject | None = None
    #: ``subject`` and ``support`` as messages.
    subject_message: Message | None = None
    support_message: Message | None = None


class Coverage(_Model):
    """ML Diagnostics / Diagon daemon state of one node around the incident (context only)."""

    host: str
    registered: bool
    last_seen: dt.datetime | None
    stopped_before_incident: bool
    citations: list[Citation]


class Verdict(_Model):
    """The verdict of one restart attempt."""

    attempt: int
    start: dt.datetime | None
    end: dt.datetime | None
    #: How the attempt was told apart from the others (restart label, pod generation, …).
    boundary: str
    hosts: int
    failure_mode: str
    #: The coarse class of the failure mode ("accelerator-oom", "preemption", …; "unknown"
    #: when no cause is named): the words of ``fixtures/real`` and its score.
    failure_class: str
    summary: str
    confidence: Confidence
    confidence_reason: str
    first_error: FirstError | None
    culprit: Culprit
    statements: list[Statement]
    #: Evidence that points elsewhere than the verdict; shown, never hidden.
    conflicts: list[Statement]
    #: What was looked for and not found, and what to collect when something is missing.
    negative_findings: list[str]
    next_steps: list[str]
    evidence: list[EvidenceRow]
    #: Each host's first signature rows around the first error, in time order.
    timeline: list[EvidenceRow]
    #: The rows to read first when no known signature explains the attempt: the earliest
    #: rare error-level lines, from the most outlying host first (``lead_rule``).
    leads: list[EvidenceRow]
    #: The rule that ranked the leads (None when there are none).
    lead_rule: str | None = None
    #: Hosts whose templates differ most from their peers', best first (at most 5).
    outliers: list[Outlier] = []
    #: The training phase the attempt failed in, and the last step of each host.
    phase: Phase | None = None
    #: ``summary``, ``confidence_reason``, ``negative_findings`` and ``next_steps`` as
    #: messages (the same order).
    summary_message: Message | None = None
    confidence_message: Message | None = None
    negative_messages: list[Message] = []
    next_step_messages: list[Message] = []


class Outlier(_Model):
    """A host whose templates differ from its peers' (rule ``spatial-outlier``, inferred):
    its rank and score in the attempt, why, and the rows that show it."""

    host: str
    rank: int
    score: float
    reasons: list[str]
    citations: list[Citation]
    rule: str = "spatial-outlier"
    basis: Basis = "inferred"
    #: ``reasons`` as messages (the same order).
    reason_messages: list[Message] = []


class HostStep(_Model):
    """The last training step a host logged in the attempt, and the row that says so."""

    host: str | None
    step: int
    citation: Citation


class Phase(_Model):
    """Where in training the attempt failed (rule ``training-phase``, inferred): launch,
    init, compile, data, step, checkpoint or teardown, from the progress lines before the
    failure."""

    phase: str
    #: The last step any host completed (None when no step line was logged).
    step: int | None
    text: str
    citations: list[Citation]
    last_steps: list[HostStep]
    rule: str = "training-phase"
    basis: Basis = "inferred"
    #: ``text`` as a message.
    message: Message | None = None


class BundleFile(_Model):
    path: str
    sha256: str | None
    rows: int
    quarantined: int
    #: Rows whose time the case could not place (``ts_quality = out_of_range``); not written
    #: when there are none, so findings of clean bundles stay as they were.
    out_of_range: int = 0

    @model_serializer(mode="wrap")
    def _omit_zero(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.out_of_range:
            data.pop("out_of_range", None)
        return data


class BundleSummary(_Model):
    #: sha256 over every input file (the case's content hash).
    id: str
    files: list[BundleFile]
    rows: int
    hosts: int


class Findings(_Model):
    schema_version: str = SCHEMA_VERSION
    tool_version: str
    catalogue_digest: str
    bundle: BundleSummary
    #: The attempt that ended the workload: the latest with a first error, else the latest.
    verdict: Verdict
    attempts: list[Verdict]
    coverage: list[Coverage]
    settings: dict[str, float | int | str | bool]
