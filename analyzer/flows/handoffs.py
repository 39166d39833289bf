"""Handoffs: pack an analysis into a redacted, checksummed (optionally signed) archive that
another machine can verify and re-diagnose; verify one; analyze one; make a signing key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer import defaults
from analyzer import handoff as handoff_mod
from analyzer.diagnose.findings import Findings
from analyzer.errors import UsageError
from analyzer.flows.analysis import analyze
from analyzer.flows.cases import load_case
from analyzer.flows.received import reanalyze
from analyzer.flows.settings import AnalyzeSettings
from analyzer.provenance import signing
from analyzer.provenance.compare import differences
from analyzer.provenance.verify import Trust, Verification, verify_blob, verify_path
from analyzer.report.timeline import TIMELINE_FILE
from analyzer.signatures.catalog import load as load_catalogue


@dataclass(frozen=True)
class HandoffResult:
    """What :func:`handoff` wrote."""

    path: Path
    case_id: str
    members: int
    bytes: int
    rows: int
    findings: Findings
    #: Whether re-diagnosing the packed evidence gave the same verdicts (checked on creation).
    reproduces: bool
    #: sha256 of the archive (give it to the receiver out of band: ``verify --sha256``).
    sha256: str
    #: Fingerprint of the signing key (``--sign``), or ``None``.
    signed_by: str | None = None


def handoff(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    case_id: str | None = None,
    context: int = defaults.HANDOFF_CONTEXT,
    settings: AnalyzeSettings | None = None,
    sign: str | Path | None = None,
) -> HandoffResult:
    """Analyze a case (or a bundle, ingested into a scratch directory) and pack the handoff
    archive ``out`` (``.tar.zst``): redacted report and findings, the rows behind them, the
    host map, the attempts, extra signature folders and a manifest of sha256s, signed with
    the Ed25519 private key file ``sign`` when given. Of ``settings`` the signature folders,
    skew and silence apply (a handoff is always redacted). The archive is verified as a
    receiver would before it is written.

    Raises:
        UsageError: ``out`` does not end in .tar.zst, ``context`` is negative, or the key
            cannot be used.
        BundleError, CaseError, SignatureError: as for :func:`analyze`.
    """
    from analyzer.diagnose import attempts as attempts_mod
    from analyzer.diagnose.evidence import load as load_evidence
    from analyzer.redact.case import for_case

    given = settings or AnalyzeSettings()
    target = Path(out)
    if not target.name.endswith(".tar.zst"):
        raise UsageError("the handoff file name must end in .tar.zst", path=str(target))
    if context < 0:
        raise UsageError("--context must be >= 0")
    key = signing.load_private_key(Path(sign)) if sign is not None else None
    folders = list(given.signatures)
    chosen = AnalyzeSettings(
        signatures=given.signatures, skew_s=given.skew_s, silence_s=given.silence_s
    )
    with handoff_mod.scratch() as scratch:
        result = analyze(inputs, Path(scratch) / "out", chosen)
        opened = load_case(result.case)
        catalogue = load_catalogue(folders)
        activity = load_evidence(opened, catalogue).activity()
        attempts = attempts_mod.split(activity, silence_s=chosen.silence_s)
        chosen_id = case_id or result.findings.bundle.id[:12]
        archive, manifest, ids = handoff_mod.build(
            opened,
            result.findings,
            result.report_path.read_text(encoding="utf-8"),
            attempts,
            redact=for_case(opened),
            case_id=chosen_id,
            signature_folders=folders,
            context=context,
            signer=None if key is None else (lambda data: signing.sign(data, key)),
            timeline=(result.report_path.parent / TIMELINE_FILE).read_text(encoding="utf-8"),
        )
        check = verify_blob(archive, str(target))
        again = reanalyze(
            check.members,
            Path(scratch) / "check",
            chosen.skew_s,
            chosen.silence_s,
            manifest.signature_folders,
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_bytes(target, archive)
    except OSError as exc:
        raise UsageError(f"cannot write the handoff: {exc}", path=str(target)) from None
    return HandoffResult(
        path=target,
        case_id=chosen_id,
        members=len(manifest.members) + 1 + (key is not None),
        bytes=len(archive),
        rows=len(ids),
        findings=result.findings,
        reproduces=not differences(result.findings, again),
        sha256=check.sha256 or "",
        signed_by=None if key is None else signing.fingerprint(key.public_key()),
    )


def _write_bytes(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.partial")
    temporary.write_bytes(data)
    temporary.replace(path)


def verify_handoff(
    path: str | Path, trusted_keys: Sequence[str | Path] = (), sha256: str | None = None
) -> Verification:
    """Check a handoff archive (any name, member order, tar dialect, compression) or an
    unpacked handoff directory: its sha256 when given, its compression's checksums, every
    member against the manifest, every manifest field against the members, and its
    signature (by one of ``trusted_keys`` when given; unsigned is then refused).

    Raises:
        HandoffError: damaged, tampered with, not signed by a trusted key, or not a handoff.
        UsageError: a trusted key cannot be read, or ``sha256`` is not 64 hex digits.
    """
    return verify_path(Path(path), Trust(tuple(Path(k) for k in trusted_keys), sha256))


def keygen(out: str | Path) -> tuple[Path, Path, str]:
    """Write an Ed25519 key pair for ``handoff --sign``: ``out`` (private, PEM, mode 0600)
    and ``out.pub`` (public, PEM, for ``--trusted-key``); their paths and fingerprint.

    Raises:
        UsageError: either file exists or cannot be written.
    """
    return signing.keygen(Path(out))
