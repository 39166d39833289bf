"""What a signature is: the pydantic model of one TOML file under ``signatures/<family>/``.

A signature names one recognisable log line (or multi-line record) of a failure mode. It is
data: the engine (:mod:`analyzer.signatures.compile` and the backends) matches every
signature over the ``message`` column of a case's rows; diagnosis reads the role, scope and
culprit rule of what matched. The regex must stay in the common subset of RE2 (DuckDB),
Rust's ``regex`` (polars) and Python's ``regex`` (the reference backend): no look-around, no
back-references, no possessive or atomic groups, named groups as ``(?P<name>…)``.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from analyzer.schema import SOURCES

#: Families and the code prefix of each: a signature's code is ``<prefix>-<three digits>``,
#: its file lives in ``signatures/<family>/``. The order is the catalogue's reading order.
FAMILIES: Final[dict[str, str]] = {
    "coordination": "COORD",
    "megascale": "MXLA",
    "sflag": "SFLAG",
    "tpu-runtime": "TPU",
    "ici": "ICI",
    "slice": "SLICE",
    "xla": "XLA",
    "libtpu-init": "INIT",
    "python": "PY",
    "checkpoint": "CKPT",
    "gke": "GKE",
    "gce": "GCE",
    "kubelet": "KUBE",
    "node": "NODE",
    "ascend": "ASC",
    "modelarts": "MA",
    "cuda": "CUDA",
    "torch": "TORCH",
    "ray": "RAY",
    "kubernetes": "K8S",
    "diagnostics": "DIAG",
    "noise": "NOISE",
}

Role = Literal["root", "secondary", "context", "noise"]
Scope = Literal["host", "link", "program", "infrastructure"]
Severity = Literal["critical", "error", "warning", "info"]
Status = Literal["stable", "preview"]
Source = Literal["cloud_logging", "kubelet", "modelarts", "diagon", "text"]

CODE_PATTERN: Final = r"^[A-Z][A-Z0-9]*-[A-Z0-9]+-\d{3}$"
NAME_PATTERN: Final = r"^[a-z0-9]+(-[a-z0-9]+)*$"
GROUP_NAME_PATTERN: Final = r"^[a-z][a-z0-9_]*$"
#: Constructs outside the common subset of the three regex engines.
UNPORTABLE: Final = (
    (re.compile(r"\(\?<?[=!]"), "look-around"),
    (re.compile(r"\\[1-9]"), "back-reference"),
    (re.compile(r"\(\?>"), "atomic group"),
    (re.compile(r"[*+?}]\+"), "possessive quantifier"),
    (re.compile(r"\(\?<(?![=!])"), "named group written (?<name>...): write (?P<name>...)"),
    (re.compile(r"\\[AZz]"), "\\A, \\Z or \\z (engines disagree): use ^ and $"),
    (re.compile(r"\(\?[a-z]*x"), "verbose flag (?x)"),
    (re.compile(r"\\[pP]\{"), "Unicode property class"),
)
#: A capture group name and its pattern, in the regex text.
NAMED_GROUP: Final = re.compile(r"\(\?P<([^>]*)>")

Text = Annotated[str, StringConstraints(min_length=1)]


class Example(BaseModel):
    """A line that must match, with the captures it must give (all named groups that take
    part in the match; ``captures`` omits groups that do not)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: Text
    captures: dict[str, str] = Field(default_factory=dict)


class CounterExample(BaseModel):
    """A near-miss line that must not match, and why it is a near miss."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: Text
    why: str = ""


class Signature(BaseModel):
    """One signature file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: Annotated[str, StringConstraints(pattern=CODE_PATTERN)]
    name: Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=80)]
    title: Text
    family: str
    knowledge: Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
    sources: tuple[Source, ...] = Field(min_length=1)
    role: Role
    scope: Scope
    culprit: str
    severity: Severity
    status: Status = "stable"
    #: Among roots that tie on time (within the skew tolerance), the higher wins.
    precedence: int = Field(default=0, ge=-100, le=100)
    anchors: tuple[Text, ...] = Field(min_length=1)
    regex: Text
    #: The capture group whose line a citation points at, when the match spans several lines
    #: of a folded record (a traceback's final exception line); by default the line where the
    #: match starts.
    cite: str | None = None
    description: str = ""
    #: Where the literal text comes from (a reference document, an issue, a source file).
    references: tuple[str, ...] = ()
    examples: tuple[Example, ...] = Field(min_length=1)
    counter_examples: tuple[CounterExample, ...] = Field(min_length=1)

    @field_validator("family")
    @classmethod
    def _known_family(cls, family: str) -> str:
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")
        return family

    @field_validator("sources")
    @classmethod
    def _distinct_sources(cls, sources: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(sources)) != len(sources):
            raise ValueError("a source is listed twice")
        assert set(sources) <= set(SOURCES)
        return sources

    @field_validator("culprit")
    @classmethod
    def _culprit_rule(cls, rule: str) -> str:
        if rule in ("emitter", "pod", "none"):
            return rule
        if rule.startswith("capture:") and re.match(GROUP_NAME_PATTERN, rule[8:]):
            return rule
        raise ValueError("culprit is 'emitter', 'pod', 'none' or 'capture:<group>'")

    @field_validator("regex")
    @classmethod
    def _portable(cls, regex: str) -> str:
        problems = [what for pattern, what in UNPORTABLE if pattern.search(regex)]
        if problems:
            raise ValueError("not in the common regex subset: " + "; ".join(problems))
        for group in NAMED_GROUP.findall(regex):
            if not re.match(GROUP_NAME_PATTERN, group):
                raise ValueError(f"capture group name {group!r} is not snake_case")
        return regex

    @model_validator(mode="after")
    def _groups_agree(self) -> Signature:
        groups = self.groups
        if len(set(groups)) != len(groups):
            raise ValueError("a capture group name is used twice")
        if self.culprit_group is not None and self.culprit_group not in groups:
            raise ValueError(f"culprit names capture {self.culprit_group!r}, not in the regex")
        if self.cite is not None and self.cite not in groups:
            raise ValueError(f"cite names capture {self.cite!r}, not in the regex")
        for example in self.examples:
            unknown = sorted(set(example.captures) - set(groups))
            if unknown:
                raise ValueError(f"example captures {unknown} are not groups of the regex")
        return self

    @property
    def groups(self) -> tuple[str, ...]:
        """The named capture groups, in the order they open."""
        return tuple(NAMED_GROUP.findall(self.regex))

    @property
    def culprit_group(self) -> str | None:
        """The capture group naming the culprit, for a ``capture:<group>`` rule."""
        return self.culprit[8:] if self.culprit.startswith("capture:") else None
