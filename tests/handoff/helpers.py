"""Taking a handoff apart and putting it back together the ways a person (or an attacker)
might: another member order, tar dialect or compression, members edited, the manifest
recomputed, re-signed."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Literal

import polars as pl
import zstandard
from typer.testing import CliRunner, Result

from analyzer.provenance.archive import decode, members_of
from analyzer.provenance.layout import FINDINGS, MANIFEST, SIGNATURE

Dialect = Literal["pax", "gnu", "ustar"]
_FORMATS = {"pax": tarfile.PAX_FORMAT, "gnu": tarfile.GNU_FORMAT, "ustar": tarfile.USTAR_FORMAT}


def members(path: Path) -> dict[str, bytes]:
    """Every member of the archive ``path``, in archive order (nothing verified)."""
    tar, _ = decode(path.read_bytes(), str(path))
    return members_of(tar, str(path))[0]


def tar_of(entries: dict[str, bytes], dialect: Dialect = "pax", prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=_FORMATS[dialect]) as archive:
        for name, data in entries.items():
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def compress(tar: bytes, how: str) -> bytes:
    if how == "zstd":
        return zstandard.ZstdCompressor(write_checksum=True).compress(tar)
    if how == "gzip":
        return gzip.compress(tar, mtime=0)
    assert how == "none"
    return tar


def write(
    path: Path,
    entries: dict[str, bytes],
    *,
    how: str = "zstd",
    dialect: Dialect = "pax",
    prefix: str = "",
) -> Path:
    path.write_bytes(compress(tar_of(entries, dialect, prefix), how))
    return path


def manifest_last(entries: dict[str, bytes]) -> dict[str, bytes]:
    rest = {k: v for k, v in entries.items() if k != MANIFEST}
    return {**rest, MANIFEST: entries[MANIFEST]}


def recompute(entries: dict[str, bytes]) -> dict[str, bytes]:
    """``entries`` with a manifest that lists their sha256s and sizes anew (what anyone can
    do to an unsigned handoff); the signature, if any, is kept as it was (now stale)."""
    from analyzer.provenance.manifest import Manifest, manifest_bytes
    from analyzer.provenance.manifest import entries as listing

    old = Manifest.model_validate_json(entries[MANIFEST])
    listed = {k: v for k, v in entries.items() if k not in (MANIFEST, SIGNATURE)}
    new = old.model_copy(update={"members": listing(listed)})
    return {**entries, MANIFEST: manifest_bytes(new)}


def edit_json(entries: dict[str, bytes], name: str, change: dict[str, object]) -> dict[str, bytes]:
    """``entries`` with top-level or dotted fields of the JSON member ``name`` changed."""
    document = json.loads(entries[name])
    for dotted, value in change.items():
        *path, last = dotted.split(".")
        target = document
        for part in path:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[last] = value
    return {**entries, name: (json.dumps(document, indent=2) + "\n").encode()}


def move_culprit(entries: dict[str, bytes], to: str) -> dict[str, bytes]:
    """Packed findings that blame host ``to`` instead (a forged verdict)."""
    culprit = json.loads(entries[FINDINGS])["verdict"]["culprit"]["host"]
    assert culprit is not None and culprit != to
    return edit_json(entries, FINDINGS, {"verdict.culprit.host": to, "attempts.0.culprit.host": to})


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    sink = io.BytesIO()
    frame.write_parquet(sink)
    return sink.getvalue()


def cli(*args: str | Path) -> Result:
    """``culprit ARGS`` in-process (stdout and stderr apart)."""
    from analyzer.cli import app

    return CliRunner(env={"COLUMNS": "200"}).invoke(app, [str(a) for a in args])


def refused(result: Result, *said: str) -> None:
    """``result`` is culprit refusing on purpose (exit 2, one line), saying each of ``said``."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert "internal error" not in result.stderr
    line = result.stderr.strip()
    assert line.startswith("culprit: error: ") and "\n" not in line, line
    for words in said:
        assert words in line, line
