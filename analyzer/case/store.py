"""Open an existing case and query it with DuckDB."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    import duckdb

from analyzer.case.layout import (
    CASE_FORMAT,
    DUPLICATES_FILE,
    FILES_FILE,
    HOSTS_FILE,
    MATCHES_FILE,
    META_FILE,
    QUARANTINE_FILE,
    ROWS_DIR,
    CaseMeta,
)
from analyzer.errors import CaseError

#: The ``matches`` view: each match with the context of its row (when the case has matches).
MATCHES_VIEW: Final = (
    "SELECT m.row_id, m.signature, m.role, m.captures, r.ts, r.host::VARCHAR AS host, "
    "r.source::VARCHAR AS source, f.path, r.line, r.message "
    "FROM read_parquet({matches}) m JOIN rows r USING (row_id) "
    "LEFT JOIN files f ON f.file_id = r.file_id"
)


@dataclass(frozen=True)
class Case:
    """A complete case directory and its metadata."""

    path: Path
    meta: CaseMeta

    @property
    def rows_glob(self) -> str:
        """Glob of the row files (for DuckDB/polars scans)."""
        return str(self.path / ROWS_DIR / "*.parquet")

    def has_rows(self) -> bool:
        """Whether any row file exists (an empty bundle has none)."""
        return any((self.path / ROWS_DIR).glob("*.parquet"))

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with views ``rows``, ``files``, ``quarantine``,
        ``duplicates``, ``hosts`` (and ``matches`` when the case has been matched: row_id,
        signature, role, captures and the row's ts, host, source, file path, line, message)."""
        # Imported here: an analysis that never queries its case does not pay for DuckDB.
        import duckdb

        connection = duckdb.connect()
        if self.has_rows():
            connection.execute(
                f"CREATE VIEW rows AS SELECT * FROM read_parquet({_quote(self.rows_glob)})"
            )
        else:
            from analyzer.schema import empty_rows

            connection.register("_empty_rows", empty_rows())
            connection.execute("CREATE VIEW rows AS SELECT * FROM _empty_rows")
        for name, file in (
            ("files", FILES_FILE),
            ("quarantine", QUARANTINE_FILE),
            ("duplicates", DUPLICATES_FILE),
            ("hosts", HOSTS_FILE),
        ):
            connection.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet({_quote(str(self.path / file))})"
            )
        matches = self.path / MATCHES_FILE
        if matches.exists():
            view = MATCHES_VIEW.format(matches=_quote(str(matches)))
            connection.execute(f"CREATE VIEW matches AS {view}")
        return connection


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_Model = TypeVar("_Model", bound=BaseModel)


def read_model(file: Path, model: type[_Model], kind: str, expected_format: str) -> _Model:
    """Validate a metadata file (``case.json``, ``part.json``) written by culprit.

    Raises:
        CaseError: not valid JSON of ``model``, or of a format this culprit does not read.
    """
    try:
        meta = model.model_validate_json(file.read_text())
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        raise CaseError(f"{file.name} is not valid: {first}", path=str(file)) from None
    found = getattr(meta, "format", None)
    if found != expected_format:
        raise CaseError(
            f"{kind} format {found!r} is not supported (this culprit reads {expected_format!r})",
            path=str(file.parent),
        )
    return meta


def open_case(path: Path) -> Case:
    """Open a case directory.

    Raises:
        CaseError: the directory is missing, is not a case, is incomplete, or was written by
            an incompatible version.
    """
    if not path.is_dir():
        raise CaseError("no such case directory", path=str(path))
    meta_file = path / META_FILE
    if not meta_file.is_file():
        raise CaseError(
            "not a complete culprit case (no case.json; run `culprit ingest` first)",
            path=str(path),
        )
    meta = read_model(meta_file, CaseMeta, "case", CASE_FORMAT)
    for required in (FILES_FILE, QUARANTINE_FILE, DUPLICATES_FILE, HOSTS_FILE):
        if not (path / required).is_file():
            raise CaseError(f"case is incomplete: {required} is missing", path=str(path))
    return Case(path, meta)
