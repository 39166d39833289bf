"""A replay *case spec*: a directory holding ``expected.toml`` (and usually the incident's
bundle): what culprit concluded, or must conclude, about a past incident.

``expected.toml``::

    description = "one host's TPU chip failed; the others timed out"
    input = "bundle.tar.zst"        # relative to the spec directory, or absolute
    skew_s = 2.0                    # optional analysis settings
    silence_s = 600.0
    baseline = "healthy.tar.zst"    # optional: a healthy run of the same job (case or bundle)

    [[attempts]]
    index = 0
    failure_mode = "tpu_hw_fatal"
    first_error = "gcs/stderr/2026/11/29/18:00:00_18:59:59_S0.json:3486"   # or "none"
    culprit_kind = "host"           # host | program | infrastructure | undetermined
    culprit_host = "gke-tpu-…"      # optional
    must_mention = ["FATAL ERROR"]  # optional: strings the report must contain
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, ValidationError

from analyzer.errors import UsageError

EXPECTED_FILE: Final = "expected.toml"
#: ``first_error`` of an attempt that has none.
NO_FIRST_ERROR: Final = "none"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectedAttempt(_Model):
    index: int
    failure_mode: str
    first_error: str
    culprit_kind: Literal["host", "program", "infrastructure", "subject", "undetermined"]
    culprit_host: str | None = None
    must_mention: list[str] = []


class Expected(_Model):
    description: str = ""
    input: str
    skew_s: float | None = None
    silence_s: float | None = None
    #: A healthy run of the same job (a case, an analysis output or a bundle): no template it
    #: logged becomes a lead (``analyze --baseline``).
    baseline: str | None = None
    attempts: list[ExpectedAttempt]


@dataclass(frozen=True)
class Spec:
    """A spec directory and what it expects."""

    path: Path
    expected: Expected

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def input(self) -> Path:
        given = Path(self.expected.input)
        return given if given.is_absolute() else (self.path / given)

    @property
    def baseline(self) -> Path | None:
        if self.expected.baseline is None:
            return None
        given = Path(self.expected.baseline)
        return given if given.is_absolute() else (self.path / given)


def read_spec(path: Path) -> Spec:
    """The spec in directory ``path``.

    Raises:
        UsageError: no expected.toml, or it does not parse or validate, or its input is missing.
    """
    file = path / EXPECTED_FILE
    if not file.is_file():
        raise UsageError(f"not a replay spec (no {EXPECTED_FILE})", path=str(path))
    try:
        with file.open("rb") as handle:
            expected = Expected.model_validate(tomllib.load(handle))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{EXPECTED_FILE} is not TOML: {exc}", path=str(file)) from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"{EXPECTED_FILE} is invalid: {problems}", path=str(file)) from None
    spec = Spec(path, expected)
    if not spec.input.exists():
        raise UsageError(f"the spec's input {expected.input!r} does not exist", path=str(file))
    if spec.baseline is not None and not spec.baseline.exists():
        raise UsageError(
            f"the spec's baseline {expected.baseline!r} does not exist", path=str(file)
        )
    return spec


def find_specs(paths: Sequence[Path]) -> list[Spec]:
    """Every spec in ``paths``: a spec directory itself, or any directory below a given one
    that holds an expected.toml; sorted by path, each once.

    Raises:
        UsageError: a path is missing, or holds no spec at all.
    """
    found: dict[Path, None] = {}
    for path in paths:
        if not path.is_dir():
            raise UsageError("no such directory", path=str(path))
        candidates: Iterable[Path] = (
            [path]
            if (path / EXPECTED_FILE).is_file()
            else sorted(p.parent for p in path.rglob(EXPECTED_FILE))
        )
        before = len(found)
        for candidate in candidates:
            found[candidate.resolve()] = None
        if len(found) == before and not (path / EXPECTED_FILE).is_file():
            raise UsageError(f"no replay spec ({EXPECTED_FILE}) in or below it", path=str(path))
    return [read_spec(p) for p in sorted(found)]


def write_expected(spec_dir: Path, expected: Expected) -> Path:
    """Write ``expected.toml`` (atomically)."""
    file = spec_dir / EXPECTED_FILE
    temporary = file.with_name(f".{file.name}.partial")
    temporary.write_text(
        tomli_w.dumps(expected.model_dump(exclude_none=True, exclude_defaults=False)),
        encoding="utf-8",
    )
    temporary.replace(file)
    return file
