"""Inputs made from another input's cached file: a gcloud array and compressed copies.

These inputs measure a reader family or a decoder on the *same entries* as an input that is
already measured, so their figures compare with that input's directly (same rows, same
messages); only the framing or the compression differs:

* ``cloud_logging_array``: the ``cloud_logging`` entries as one ``gcloud logging read
  --format=json`` array (formats.md §1.1): newest first (by ``timestamp``, ties by
  ``insertId``, as :func:`fixtures.writers.cloud_logging.write_array` orders them), keys
  sorted, pretty-printed with a two-space indent, each element indented by two spaces and
  followed by a comma except the last, then ``]`` and a newline. Every entry of the source is
  kept, so the array is larger than the source (the indentation and line breaks add about
  15 %); its figures are over its own bytes.
* ``cloud_logging_gz``: the ``cloud_logging`` file compressed by gzip at level 6 (the
  ``gzip`` command's default), with no name and a zero modification time in the header so the
  bytes depend only on the source.
* ``kubelet_zst``: the ``kubelet`` file compressed by zstd at level 3 (the ``zstd`` command's
  default), with the content size in the frame header.

Their file names end in ``.gz`` / ``.zst`` so ``culprit ingest`` decodes them (it goes by the
name). Each is written under a ``.partial`` name and renamed when complete, so an interrupted
run never leaves a truncated input in the cache.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Final

import polars as pl

#: gzip's and zstd's command-line default levels: what a user's ``gzip FILE`` / ``zstd FILE``
#: writes.
GZIP_LEVEL: Final = 6
ZSTD_LEVEL: Final = 3
#: Bytes copied per read while compressing.
COPY_BLOCK: Final = 16 << 20
#: Entries converted per batch when writing the array (bounds the Python objects alive).
ARRAY_BATCH: Final = 20_000


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def gzip_file(source: Path, path: Path) -> None:
    """Write ``source`` gzip-compressed to ``path`` (level :data:`GZIP_LEVEL`, one member)."""
    partial = _partial(path)
    # filename="" and mtime=0: the header carries nothing that varies between runs.
    with (
        source.open("rb") as plain,
        partial.open("wb") as raw,
        gzip.GzipFile(
            filename="", mode="wb", compresslevel=GZIP_LEVEL, fileobj=raw, mtime=0
        ) as out,
    ):
        shutil.copyfileobj(plain, out, COPY_BLOCK)
    partial.replace(path)


def zstd_file(source: Path, path: Path) -> None:
    """Write ``source`` zstd-compressed to ``path`` (level :data:`ZSTD_LEVEL`, one frame with
    its content size)."""
    import zstandard

    partial = _partial(path)
    size = source.stat().st_size
    compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=True)
    with source.open("rb") as plain, partial.open("wb") as raw:
        compressor.copy_stream(plain, raw, size=size, read_size=COPY_BLOCK, write_size=COPY_BLOCK)
    partial.replace(path)


def _element(line: str) -> str:
    """One JSON-lines entry as a gcloud array element: keys sorted, two-space indent, the
    whole element indented by two more spaces (no trailing comma or newline)."""
    text = json.dumps(json.loads(line), indent=2, sort_keys=True, ensure_ascii=False)
    return "  " + text.replace("\n", "\n  ")


def array_from_lines(source: Path, path: Path) -> None:
    """Write the entries of the JSON-lines file ``source`` to ``path`` as a gcloud array.

    Only the lines and their sort keys are held in memory (as one polars frame), never a
    parsed entry per line: the order is found first, then the entries are parsed and
    pretty-printed in batches of :data:`ARRAY_BATCH`, in that order.
    """
    lines = pl.read_csv(
        source,
        has_header=False,
        new_columns=["line"],
        separator="\x1f",
        quote_char=None,
        schema_overrides={"line": pl.String},
    )["line"]
    # Every entry's "timestamp" is an RFC 3339 UTC stamp with nine fractional digits, so
    # the strings sort as the times do.
    order = (
        pl.DataFrame({"line": lines})
        .with_columns(
            ts=pl.col("line").str.extract(r'"timestamp":"([^"]+)"'),
            iid=pl.col("line").str.extract(r'"insertId":"([^"]+)"'),
        )
        .sort(["ts", "iid"], descending=[True, False])
        .get_column("line")
    )
    partial = _partial(path)
    with partial.open("w", encoding="utf-8", newline="\n") as out:
        out.write("[\n")
        for start in range(0, len(order), ARRAY_BATCH):
            batch = order.slice(start, ARRAY_BATCH).to_list()
            last = start + len(batch) >= len(order)
            elements = [_element(line) for line in batch]
            out.write(",\n".join(elements) + ("\n" if last else ",\n"))
        out.write("]\n")
    partial.replace(path)
