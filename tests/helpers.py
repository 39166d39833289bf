"""Helpers shared by tests (plain functions; fixtures live in conftest.py)."""

from __future__ import annotations

import calendar
import gzip
import io
import re
import tarfile
from pathlib import Path

import polars as pl

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
