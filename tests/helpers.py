"""Helpers shared by tests (plain functions; fixtures live in conftest.py)."""

from __future__ import annotations

import calendar
import codecs
import gzip
import hashlib
import io
import json
import os
import re
import stat
import tarfile
from collections.abc import Mapping
from pathlib import Path

import polars as pl
import pytest

SAMPLES = Path(__file__).parent / "samples"


def read_table(case: Path, name: str) -> pl.DataFrame:
    """One of the case's Parquet tables (``rows`` reads every part)."""
    if name == "rows":
        parts = sorted((case / "rows").glob("*.parquet"))
        if not parts:
            return pl.DataFrame()
        return pl.concat([pl.read_parquet(p) for p in parts])
    return pl.read_parquet(case / f"{name}.parquet")


def ns(stamp: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 time (``Z``, ``±HH:MM`` or `` UTC``),
    computed by hand so the tests do not rely on the parsers they check."""
    match = re.fullmatch(
        r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
        r"(Z| UTC|([+-])(\d{2}):(\d{2}))",
        stamp,
    )
    assert match, stamp
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if match.group(9):
        sign = 1 if match.group(9) == "+" else -1
        seconds -= sign * (int(match.group(10)) * 3600 + int(match.group(11)) * 60)
    return seconds * 1_000_000_000 + int((match.group(7) or "").ljust(9, "0"))


def mixed_bundle(root: Path) -> Path:
    """Plain files around an archive, a truncated gzip, invalid UTF-8 and a binary file."""
    bundle = root / "bundle"
    bundle.mkdir()
    kubelet = (SAMPLES / "kubelet" / "journal-short.txt").read_bytes()
    (bundle / "a-node.log").write_bytes(kubelet)
    with tarfile.open(bundle / "b-more.tar", "w") as tar:
        for name in ("inner/kubelet.log", "inner/again.log"):
            info = tarfile.TarInfo(name)
            info.size = len(kubelet)
            tar.addfile(info, io.BytesIO(kubelet))
    whole = gzip.compress(b"I1129 18:00:00.000000    1 main.go:1] hello\n" * 5000)
    (bundle / "c-truncated.log.gz").write_bytes(whole[: len(whole) // 2])
    (bundle / "d-latin1.log").write_bytes(
        b"E1129 18:00:01.000000    1 x.go:2] caf\xe9 failed\n" * 3
    )
    (bundle / "e-binary.bin").write_bytes(b"\x00\x01\x02" * 100)
    (bundle / "f-stderr.log").write_text(
        'Traceback (most recent call last):\n  File "train.py", line 1, in <module>\n'
        "RuntimeError: boom\n"
    )
    return bundle


def decoded_text(data: bytes) -> bytes:
    """The UTF-8 text a file decodes to, computed without culprit's code: UTF-16 with a BOM
    re-encoded (unless the bytes after the BOM are plainly UTF-8: no NUL, valid UTF-8 in the
    first 64 KiB), then NUL bytes at the start and a UTF-8 BOM dropped."""
    codec = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}.get(data[:2])
    if codec is not None:
        probe = data[2:65536]
        try:
            codecs.getincrementaldecoder("utf-8")().decode(probe, False)
            plainly_utf8 = b"\x00" not in probe
        except UnicodeDecodeError:
            plainly_utf8 = False
        if not plainly_utf8:
            body = data[2:]
            even = len(body) - len(body) % 2
            text = body[:even].decode(codec, "surrogatepass").encode("utf-8", "surrogatepass")
            data = text + (b"\xff" if len(body) % 2 else b"")
    return data.lstrip(b"\x00").removeprefix(b"\xef\xbb\xbf")


def lone_cr_ends_lines(text: bytes) -> bool:
    """Whether a text's lone ``\\r`` end its lines, decided from its first 64 KiB: there is a
    lone ``\\r`` and no ``\\n``, or ten lone ``\\r`` for every ``\\n`` and no ``\\n\\r`` (a
    progress bar's redraw) nor a ``\\r`` first."""
    window = text[:65536]
    lone = len(re.findall(rb"\r(?!\n)", window))
    newlines = window.count(b"\n")
    if not lone:
        return False
    if not newlines:
        return True
    return lone >= 10 * newlines and b"\n\r" not in window and not window.startswith(b"\r")


def line_records(data: bytes) -> int:
    """Records of a line-oriented file counted without culprit's code: the lines of the text
    it decodes to (:func:`decoded_text`), the last one counted even without a final newline.
    Only ``\\n`` ends a line (a lone ``\\r`` stays inside its line), unless lone ``\\r`` are the
    file's line ends (:func:`lone_cr_ends_lines`): then ``\\r\\n``, ``\\r`` and ``\\n`` each do."""
    body = decoded_text(data)
    if lone_cr_ends_lines(body):
        body = re.sub(rb"\r(?!\n)", b"\n", body)
    return body.count(b"\n") + (1 if body and not body.endswith(b"\n") else 0)


def check_accounting(case: Path) -> pl.DataFrame:
    """Assert that nothing was lost in the case and return its inventory (``files``).

    Per file: ``records == rows + folded + blank + quarantined + duplicates``; its rows in
    ``rows/*.parquet``, its ``dropped`` quarantine entries, its ``kept`` (repaired) entries,
    its entries in duplicates.parquet and its rows without a placeable time (``out_of_range``,
    their ``ts`` null) are exactly as many as the inventory says; row ids are unique, and the
    totals of ``case.json`` are the sums of the inventory.
    """
    files = read_table(case, "files")
    for record in files.iter_rows(named=True):
        accounted = (
            record["rows"]
            + record["folded"]
            + record["blank"]
            + record["quarantined"]
            + record["duplicates"]
        )
        assert record["records"] == accounted, record
    rows = read_table(case, "rows")
    assert rows.height == files["rows"].sum()

    def per_file(table: pl.DataFrame) -> list[tuple[int, int]]:
        if table.height == 0:
            return []
        return sorted(table.group_by("file_id").len().rows())

    def expected(column: str) -> list[tuple[int, int]]:
        return sorted(files.select("file_id", column).filter(pl.col(column) > 0).rows())

    assert per_file(rows) == expected("rows")
    assert rows.height == 0 or rows["row_id"].n_unique() == rows.height
    quarantine = read_table(case, "quarantine")
    assert per_file(quarantine.filter(pl.col("kind") == "dropped")) == expected("quarantined")
    assert per_file(quarantine.filter(pl.col("kind") == "kept")) == expected("repaired")
    assert per_file(read_table(case, "duplicates")) == expected("duplicates")
    if rows.height:
        out_of_range = rows.filter(pl.col("ts_quality") == "out_of_range")
        assert out_of_range["ts"].null_count() == out_of_range.height
        assert per_file(out_of_range) == expected("out_of_range")
    counts = json.loads((case / "case.json").read_text())["counts"]
    # Every total but the file counts is the sum of its files.parquet column; the expected keys
    # are not imported from analyzer.case.meta, so that a column dropped there fails here.
    summed = {key for key in counts if not key.startswith("files")}
    assert len(summed) == 8, sorted(summed)
    for column in sorted(summed):
        assert counts[column] == files[column].sum(), column
    return files


#: One entry of :func:`tree_state`: st_mode, st_size, st_mtime_ns and the sha256 of a regular
#: file's content (``None`` for other entries, or when content is not hashed).
EntryState = tuple[int, int, int, str | None]


def tree_state(*roots: Path, content: bool = True) -> dict[str, EntryState]:
    """Every entry under ``roots`` (the roots included) by path, without following links:
    mode, size, modification time and, with ``content``, the sha256 of each regular file.
    Names that are not valid UTF-8 are keys with surrogate escapes, as ``os`` gives them."""
    state: dict[str, EntryState] = {}
    for root in roots:
        if not os.path.lexists(root):
            continue
        entries = [root]
        if root.is_dir() and not root.is_symlink():
            for dirpath, dirnames, filenames in os.walk(root):
                entries += [Path(dirpath) / name for name in (*dirnames, *filenames)]
        for entry in entries:
            st = entry.lstat()
            digest = None
            if content and stat.S_ISREG(st.st_mode):
                with entry.open("rb") as handle:
                    digest = hashlib.file_digest(handle, "sha256").hexdigest()
            state[str(entry)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return state


def changed_paths(before: Mapping[str, EntryState], after: Mapping[str, EntryState]) -> list[str]:
    """The paths added, removed or changed between two :func:`tree_state` snapshots."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def force_workers(patch: pytest.MonkeyPatch) -> list[int]:
    """Make an ingest with ``jobs > 1`` start its worker pool however small the bundle (the
    decision is made in this process); the list returned gets each started pool's size."""
    from analyzer.ingest.pipeline import run
    from analyzer.ingest.pipeline.workers import WorkerPool

    started: list[int] = []

    class Counted(WorkerPool):
        def __init__(self, jobs: int, rows_dir: Path) -> None:
            started.append(jobs)
            super().__init__(jobs, rows_dir)

    patch.setattr(run, "MIN_PARALLEL_BYTES", 0)
    patch.setattr(run, "WorkerPool", Counted)
    return started
