"""The real-log corpus (``fixtures/real``): published excerpts, what a careful reader
concludes from each, and how a verdict is scored against it.

An excerpt is a directory holding the log file(s) exactly as published, ``source.toml``
(where they come from) and ``expected.toml`` (first-error line, failure class, the culprit the
log names). The format is described in ``fixtures/real/README.md``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.errors import UsageError
from analyzer.schema import normalize_host

EXPECTED_FILE: Final = "expected.toml"
SOURCE_FILE: Final = "source.toml"
#: Files of an excerpt directory that are not logs.
META_FILES: Final = frozenset({EXPECTED_FILE, SOURCE_FILE, "README.md"})
#: ``first_error`` of an excerpt whose log does not show the cause.
NONE: Final = "none"
#: The class of an excerpt whose log does not show the cause.
UNKNOWN: Final = "unknown"

Platform = Literal["tpu", "ascend", "kubernetes", "gpu", "cpu"]
SubjectKind = Literal["none", "host", "node", "pod", "task", "worker", "rank", "ip"]
#: Subject kinds that are an index (of a task, worker or rank) rather than a name.
INDEX_KINDS: Final = frozenset({"task", "worker", "rank"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Model):
    url: str
    title: str
    repository: str = ""
    author: str = ""
    published: str = ""
    where: str = ""
    date_read: str


class Expected(_Model):
    platform: Platform
    format: str
    failure_class: str = Field(alias="class")
    first_error: str
    alternatives: list[str] = []
    culprit_kind: SubjectKind = "none"
    culprit: str = ""
    basis: str

    @property
    def unknown(self) -> bool:
        return self.failure_class == UNKNOWN

    @property
    def lines(self) -> frozenset[str]:
        """Every acceptable first-error citation (``path:line``)."""
        if self.first_error == NONE:
            return frozenset()
        return frozenset([self.first_error, *self.alternatives])


@dataclass(frozen=True)
class Excerpt:
    path: Path
    source: Source
    expected: Expected

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def logs(self) -> list[Path]:
        """The excerpt's log files, in name order."""
        return sorted(p for p in self.path.iterdir() if p.is_file() and p.name not in META_FILES)

    def text(self) -> str:
        return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in self.logs)


def _load(model: type[_Model], file: Path) -> _Model:
    try:
        with file.open("rb") as handle:
            return model.model_validate(tomllib.load(handle))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{file.name} is not TOML: {exc}", path=str(file)) from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"{file.name} is invalid: {problems}", path=str(file)) from None


def read_excerpt(path: Path) -> Excerpt:
    """The excerpt in directory ``path``.

    Raises:
        UsageError: a file is missing or invalid, or a cited line is not in the excerpt.
    """
    for name in (EXPECTED_FILE, SOURCE_FILE):
        if not (path / name).is_file():
            raise UsageError(f"not a corpus excerpt (no {name})", path=str(path))
    source = _load(Source, path / SOURCE_FILE)
    expected = _load(Expected, path / EXPECTED_FILE)
    assert isinstance(source, Source)
    assert isinstance(expected, Expected)
    excerpt = Excerpt(path, source, expected)
    if not excerpt.logs:
        raise UsageError("the excerpt has no log file", path=str(path))
    lengths = {p.name: _line_count(p) for p in excerpt.logs}
    for cited in expected.lines:
        name, _, line = cited.rpartition(":")
        if name not in lengths or not line.isdigit() or not 1 <= int(line) <= lengths[name]:
            raise UsageError(
                f"{EXPECTED_FILE} cites {cited!r}, which is not a line of the excerpt",
                path=str(path / EXPECTED_FILE),
            )
    if expected.unknown != (expected.first_error == NONE):
        raise UsageError(
            f'{EXPECTED_FILE}: class "unknown" goes with first_error "none" and only with it',
            path=str(path / EXPECTED_FILE),
        )
    return excerpt


def _line_count(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def find_excerpts(root: Path) -> list[Excerpt]:
    """Every excerpt below ``root`` (a directory holding expected.toml and source.toml)."""
    if not root.is_dir():
        raise UsageError("no such directory", path=str(root))
    found = sorted(
        p.parent for p in root.rglob(SOURCE_FILE) if (p.parent / EXPECTED_FILE).is_file()
    )
    if not found:
        raise UsageError("no corpus excerpt (source.toml + expected.toml) below it", path=str(root))
    return [read_excerpt(p) for p in found]


# --- what a verdict said, reduced to what the corpus scores ---------------------------------


@dataclass(frozen=True)
class Said:
    """A verdict in the corpus' terms."""

    first_error: str | None
    failure_class: str
    confidence: str
    #: Subjects the verdict blames: (kind, name) pairs, the culprit host as ("host", name).
    subjects: tuple[tuple[str, str], ...]
    #: Every host or subject name the verdict puts forward (for the invented-host check).
    names: tuple[str, ...]


@dataclass(frozen=True)
class Score:
    excerpt: str
    platform: str
    failure_class: str
    first_error: bool
    failure_class_ok: bool
    #: None when the excerpt names no culprit.
    culprit: bool | None
    #: Names in the verdict that occur nowhere in the excerpt.
    invented: tuple[str, ...]
    #: None for an excerpt with a known cause.
    honest_unknown: bool | None
    baseline: bool
    said: Said | None
    error: str | None = None


def _norm(name: str) -> str:
    """A name as hosts are compared: trimmed, lower-case, without the internal domain that
    the same VM is also known by (``node.c.proj.internal``, ``host.localdomain``)."""
    return normalize_host(name.strip().strip("'\"")) or ""


def _index(name: str) -> str | None:
    numbers = re.findall(r"\d+", name)
    return numbers[-1] if numbers else None


def culprit_matches(expected: Expected, said: Said) -> bool:
    """Whether a blamed subject is the one the excerpt names: the same index for tasks,
    workers and ranks (a JAX task is its process and worker index), the same name (a pod may
    carry its namespace) for the others."""
    want = _norm(expected.culprit)
    for kind, name in said.subjects:
        if expected.culprit_kind in INDEX_KINDS:
            if kind in INDEX_KINDS and _index(name) == _index(want):
                return True
            continue
        got = _norm(name)
        if got == want or got.endswith("/" + want) or want.endswith("/" + got):
            return True
        if expected.culprit_kind == "ip" and got.split(":")[0] == want:
            return True
    return False


def invented(said: Said, text: str) -> tuple[str, ...]:
    """Names the verdict puts forward that the excerpt's text never writes."""
    lowered = text.lower()
    return tuple(sorted({n for n in said.names if n and n.lower() not in lowered}))


def score(excerpt: Excerpt, said: Said | None, *, error: str | None = None) -> Score:
    expected = excerpt.expected
    base = baseline(excerpt)
    base_ok = base is None if expected.unknown else base in expected.lines
    if said is None:
        return Score(
            excerpt.name,
            expected.platform,
            expected.failure_class,
            False,
            False,
            False if expected.culprit_kind != "none" else None,
            (),
            False if expected.unknown else None,
            base_ok,
            None,
            error,
        )
    first_ok = said.first_error is None if expected.unknown else said.first_error in expected.lines
    honest = (
        (said.failure_class == UNKNOWN and said.confidence == "LOW") if expected.unknown else None
    )
    return Score(
        excerpt=excerpt.name,
        platform=expected.platform,
        failure_class=expected.failure_class,
        first_error=first_ok,
        failure_class_ok=said.failure_class == expected.failure_class,
        culprit=culprit_matches(expected, said) if expected.culprit_kind != "none" else None,
        invented=invented(said, excerpt.text()),
        honest_unknown=honest,
        baseline=base_ok,
        said=said,
    )


# --- the naive baseline ---------------------------------------------------------------------

#: What the naive reader looks for: an error word, or a glog/klog E/F line.
BASELINE_PATTERN: Final = re.compile(
    r"(?i:\b(?:error|errors|fatal|exception|fail|failed|failure|panic|abort|aborted|critical"
    r"|traceback)\b)|^[EF]\d{4} "
)


def baseline(excerpt: Excerpt) -> str | None:
    """The naive answer: the first line of the excerpt (files in name order) with an error
    keyword, as ``path:line``; None when no line has one."""
    for log in excerpt.logs:
        for number, line in enumerate(
            log.read_text(encoding="utf-8", errors="replace").split("\n"), start=1
        ):
            if BASELINE_PATTERN.search(line):
                return f"{log.name}:{number}"
    return None


# --- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """Scores of a group of excerpts (a platform, a class, or all)."""

    group: str
    excerpts: int
    first_error: int
    failure_class: int
    named: int
    culprit: int
    invented: int
    unknown: int
    honest_unknown: int
    baseline: int

    def ratio(self, part: str) -> float | None:
        whole = {"culprit": self.named, "honest_unknown": self.unknown}.get(part, self.excerpts)
        return getattr(self, part) / whole if whole else None


def tally(group: str, scores: Iterable[Score]) -> Tally:
    rows = list(scores)
    return Tally(
        group=group,
        excerpts=len(rows),
        first_error=sum(s.first_error for s in rows),
        failure_class=sum(s.failure_class_ok for s in rows),
        named=sum(s.culprit is not None for s in rows),
        culprit=sum(bool(s.culprit) for s in rows),
        invented=sum(len(s.invented) > 0 for s in rows),
        unknown=sum(s.honest_unknown is not None for s in rows),
        honest_unknown=sum(bool(s.honest_unknown) for s in rows),
        baseline=sum(s.baseline for s in rows),
    )


def by(scores: Sequence[Score], key: str) -> list[Tally]:
    """One tally per value of ``key`` (``platform`` or ``failure_class``), largest first."""
    groups: dict[str, list[Score]] = {}
    for item in scores:
        groups.setdefault(str(getattr(item, key)), []).append(item)
    tallies = [tally(name, rows) for name, rows in groups.items()]
    return sorted(tallies, key=lambda t: (-t.excerpts, t.group))


# --- the floor ------------------------------------------------------------------------------


class Floor(_Model):
    """The lowest scores CI accepts (shares of the corpus, 0..1), and the most excerpts
    allowed to name an invented host."""

    first_error: float
    failure_class: float
    culprit: float
    honest_unknown: float
    invented: int = 0


def read_floor(path: Path) -> Floor:
    floor = _load(Floor, path)
    assert isinstance(floor, Floor)
    return floor


def below_floor(total: Tally, floor: Floor) -> list[str]:
    """Readable reasons the corpus' total is below ``floor`` (empty when it is not)."""
    problems = []
    for name in ("first_error", "failure_class", "culprit", "honest_unknown"):
        got = total.ratio(name)
        want = float(getattr(floor, name))
        if got is not None and got + 1e-9 < want:
            problems.append(f"{name}: {got:.1%} is below the floor of {want:.1%}")
    if total.invented > floor.invented:
        problems.append(
            f"invented hosts: {total.invented} excerpt(s), the floor allows {floor.invented}"
        )
    return problems
