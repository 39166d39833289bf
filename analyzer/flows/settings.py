"""How an analysis runs, as one validated object (the command line builds it from its
options; the library's defaults are in :mod:`analyzer.defaults`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from analyzer import defaults
from analyzer.bundle import BundleLimits
from analyzer.case.inputs import ReadOptions
from analyzer.errors import UsageError


class AnalyzeSettings(BaseModel):
    """Everything :func:`analyzer.flows.analysis.analyze` can be told.

    Args:
        signatures: extra signature folders (``<family>/<name>.toml``).
        builtin_signatures: use the packaged catalogue (false: only ``signatures``; every
            verdict then rests on the template rules: leads, outliers, phase).
        baseline: a case (or analysis output holding ``case/``) of a healthy run of the
            same job: templates it logged are never leads.
        backend: matching engine: ``polars``, ``duckdb`` or ``python`` (same matches).
        redact: replace secrets in every quoted message (citations never change).
        template: the report layout (:data:`analyzer.report.registry.TEMPLATES`).
        skew_s: clock-skew tolerance between hosts, in seconds.
        silence_s: a global silence this long separates two attempts.
        read: reader options (year and zone of stamps without them, size caps).
        limits: decompression and nesting limits of the bundle.
        jobs: worker processes reading plain files (default: one per core).
        engine: ``local`` or ``ray`` (shards as Ray tasks, merged; same findings).
        address: the Ray cluster to join (default: start a local instance).
        workers: CPUs of that local Ray instance (default: every core).
        shards: pieces the work is cut into under Ray (default: one per CPU).
        html: also write the self-contained ``report.html``.
        trusted_keys: Ed25519 public keys; a handoff must be signed by one of them.
        handoff_sha256: the sha256 a handoff archive must have (given out of band).
        scratch: where remote inputs are mirrored (default: the system's temporary
            directory).
        wait_s: how long to wait for another process writing the same case (0: refuse).
        space_check: refuse an ingest before it writes when it would not fit.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    signatures: tuple[Path, ...] = ()
    builtin_signatures: bool = True
    baseline: Path | None = None
    backend: str = defaults.BACKEND
    redact: bool = True
    template: str = defaults.TEMPLATE
    skew_s: Annotated[float, Field(ge=0)] = defaults.SKEW_S
    silence_s: Annotated[float, Field(gt=0)] = defaults.SILENCE_S
    read: ReadOptions = ReadOptions()
    limits: BundleLimits = BundleLimits()
    jobs: Annotated[int, Field(ge=1)] | None = None
    engine: str = defaults.ENGINE
    address: str | None = None
    workers: Annotated[int, Field(ge=1)] | None = None
    shards: Annotated[int, Field(ge=1)] | None = None
    html: bool = False
    trusted_keys: tuple[Path, ...] = ()
    handoff_sha256: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{64}$")] | None = None
    scratch: Path | None = None
    wait_s: Annotated[float, Field(ge=0)] = defaults.LOCK_WAIT_S
    space_check: bool = defaults.SPACE_CHECK

    @field_validator("signatures", "trusted_keys", mode="before")
    @classmethod
    def _folders(cls, value: object) -> object:
        if isinstance(value, str | Path):
            return (Path(value),)
        if isinstance(value, list | tuple):
            return tuple(Path(v) for v in value)
        return value


def settings(**given: object) -> AnalyzeSettings:
    """:class:`AnalyzeSettings` from keyword values, a bad value raising :class:`UsageError`
    (one line, naming the setting) rather than pydantic's report."""
    try:
        return AnalyzeSettings.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        raise UsageError(f"{where}: {first['msg']}") from None
