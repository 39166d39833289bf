"""Match a catalogue over a whole case and write ``CASE/matches.parquet``.

The backend reads the case's row files itself (a slice, a batch or one SQL query at a time,
so memory stays bounded by the slice and the matches, not by the case). The matches table
is :data:`~analyzer.signatures.compile.MATCHES_SCHEMA`, sorted by row_id and signature, and
the same for every backend; the Parquet file's key-value metadata (``culprit.matches``)
records how it was made: backend, catalogue digest, signature count, rows scanned, matches.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from analyzer import __version__
from analyzer.case.layout import MATCHES_FILE, ROWS_DIR
from analyzer.case.space import is_disk_full
from analyzer.case.store import Case
from analyzer.errors import CaseError, DiskSpaceError
from analyzer.signatures.backends import Backend
from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.compile import compile_catalogue, empty_matches

MATCHES_FORMAT: Final = "culprit-matches/1"
#: The key of the Parquet key-value metadata that describes a matches file.
META_KEY: Final = "culprit.matches"
ARROW_SCHEMA: Final = pa.schema(
    [
        pa.field("row_id", pa.int64(), nullable=False),
        pa.field("signature", pa.large_string(), nullable=False),
        pa.field("role", pa.large_string(), nullable=False),
        pa.field("captures", pa.large_string(), nullable=False),
    ]
)


@dataclass(frozen=True)
class MatchResult:
    """What :func:`match_case` did (``seconds`` is wall time of the matching itself)."""

    case: Path
    path: Path
    backend: str
    catalogue_digest: str
    signatures: int
    rows_scanned: int
    matches: int
    matched_signatures: int
    seconds: float


def catalogue_digest(catalogue: Catalogue) -> str:
    """sha256 over the bytes of the catalogue's signature files, in catalogue order (the same
    as ``cat`` of those files piped to ``sha256sum``): :attr:`Catalogue.digest`."""
    return catalogue.digest


def row_files(case: Case) -> list[Path]:
    """The case's canonical row files, in name order."""
    return sorted((case.path / ROWS_DIR).glob("*.parquet"))


def match_case(case: Case, catalogue: Catalogue, backend: Backend) -> MatchResult:
    """Run ``catalogue`` over every row of ``case`` with ``backend``; write matches.parquet.

    Raises:
        SignatureError: a regex does not compile in the backend's engine.
        CaseError: the matches file cannot be written.
    """
    # The log templates are not made here: they depend on the rows alone, not on the
    # catalogue, and cost several times the matching itself (13 s against 2.7 s at 4,096
    # hosts, 20 M rows). An analysis makes them once, right after matching
    # (:func:`analyzer.diagnose.patterns.make_patterns`), and the case keeps them.
    return match_files(case, row_files(case), catalogue, backend, case.path / MATCHES_FILE)


def match_files(
    case: Case, files: list[Path], catalogue: Catalogue, backend: Backend, path: Path
) -> MatchResult:
    """Run ``catalogue`` over the rows of ``files`` (row files of ``case``); write the
    matches to ``path``."""
    rows = sum(pq.read_metadata(file).num_rows for file in files)
    compiled = compile_catalogue(catalogue)
    started = time.perf_counter()
    parts = list(backend.match_files(compiled, files))
    # Each part comes sorted (the backends' contract): one part, the usual case, is the table.
    if len(parts) == 1:
        found = parts[0]
    else:
        found = pl.concat(parts).sort("row_id", "signature") if parts else empty_matches()
    seconds = time.perf_counter() - started
    meta = matches_file_meta(
        backend.name, catalogue_digest(catalogue), len(catalogue), rows, found.height
    )
    write_matches(found, path, meta)
    return MatchResult(
        case=case.path,
        path=path,
        backend=backend.name,
        catalogue_digest=meta["catalogue_digest"],
        signatures=len(catalogue),
        rows_scanned=rows,
        matches=found.height,
        matched_signatures=found["signature"].n_unique(),
        seconds=seconds,
    )


def matches_file_meta(
    backend: str, digest: str, signatures: int, rows: int, matches: int
) -> dict[str, Any]:
    """The ``culprit.matches`` metadata of a matches file."""
    return {
        "format": MATCHES_FORMAT,
        "tool_version": __version__,
        "backend": backend,
        "catalogue_digest": digest,
        "signatures": signatures,
        "rows_scanned": rows,
        "matches": matches,
    }


def write_matches(found: pl.DataFrame, path: Path, meta: dict[str, Any]) -> None:
    """Write atomically: a reader never sees half a file, or a file from another run."""
    temporary = path.with_name(f".{path.name}.partial")
    try:
        # polars' writer: a third of pyarrow's time on a million matches.
        found.write_parquet(
            temporary,
            compression="zstd",
            compression_level=1,
            arrow_schema=ARROW_SCHEMA,
            metadata={META_KEY: json.dumps(meta)},
        )
        temporary.replace(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        # polars reports a full disk as a ComputeError, not an OSError.
        with contextlib.suppress(OSError):
            temporary.unlink()
        if is_disk_full(exc):
            raise DiskSpaceError(
                f"no space left on device; cannot write {path.name}", path=str(path.parent)
            ) from None
        if not isinstance(exc, OSError):
            raise
        raise CaseError(f"cannot write {path.name}: {exc}", path=str(path.parent)) from None


def matches_meta(path: Path) -> dict[str, Any]:
    """The metadata a matches file was written with (empty if it has none)."""
    raw = pl.read_parquet_metadata(path).get(META_KEY)
    return json.loads(raw) if raw else {}
