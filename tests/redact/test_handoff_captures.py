"""A handoff's signature captures are redacted like its rows, but keep the names of the
host map: those resolve a culprit on the receiving machine, and hosts.parquet carries them."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import polars as pl
import zstandard

from analyzer import api
from analyzer.signatures.matching import ARROW_SCHEMA, META_KEY, matches_meta
from tests.conftest import EXAMPLE


def _member(archive: Path, name: str) -> bytes:
    with archive.open("rb") as raw:
        data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as members:
        handle = members.extractfile(name)
        assert handle is not None
        return handle.read()


def test_captures_keep_host_map_names_and_lose_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.analyze([EXAMPLE], out, api.AnalyzeSettings(jobs=1))
    case = out / "case"
    hosts = pl.read_parquet(case / "hosts.parquet")
    alias = hosts.head(1).with_columns(
        pl.lit("10.8.0.9").alias("alias"), pl.lit("ip").alias("kind")
    )
    pl.concat([hosts, alias]).write_parquet(case / "hosts.parquet")
    # A capture naming that alias and an address the case does not know, on a matched row;
    # the file's metadata is kept, so the case still counts as matched.
    path = case / "matches.parquet"
    meta = json.dumps(matches_meta(path))
    matches = pl.read_parquet(path)
    row = matches.filter(pl.col("signature") == "GCE-HOSTERR-001")["row_id"][0]
    planted = json.dumps({"status": "lost 10.8.0.9:8471 via 10.8.0.10 for bob@example.com"})
    edited = matches.with_columns(
        pl.when(pl.col("row_id") == row)
        .then(pl.lit(planted))
        .otherwise(pl.col("captures"))
        .alias("captures")
    )
    edited.write_parquet(path, arrow_schema=ARROW_SCHEMA, metadata={META_KEY: meta})
    archive = tmp_path / "h.tar.zst"
    api.handoff([case], archive)
    packed = pl.read_parquet(io.BytesIO(_member(archive, "case/matches.parquet")))
    status = json.loads(packed.filter(pl.col("row_id") == row)["captures"][0])["status"]
    assert status == "lost 10.8.0.9:8471 via [REDACTED:ip] for [REDACTED:email]"
