"""Infrastructure events that concern another node, or an earlier time, than the attempt's
workload are set aside as first-error candidates."""

from __future__ import annotations

import datetime as dt
import tarfile
from pathlib import Path

import polars as pl
import zstandard

from analyzer import api
from analyzer.diagnose.relevance import set_aside, unrelated_to

T0 = dt.datetime(2026, 11, 29, 18, 0, 0, tzinfo=dt.UTC)
SECOND = 1_000_000_000
REPLAY = Path(__file__).parents[2] / "fixtures" / "replay"


def _evidence(rows: list[tuple[int, str | None, str, float, str]]) -> pl.DataFrame:
    """(row_id, host, scope, seconds after T0, role) per match."""
    return pl.DataFrame(
        [
            {
                "row_id": row_id,
                "host": host,
                "signature": f"S{row_id}",
                "scope": scope,
                "ts": T0 + dt.timedelta(seconds=seconds),
                "role": role,
            }
            for row_id, host, scope, seconds, role in rows
        ],
        schema_overrides={"ts": pl.Datetime("ns", "UTC"), "host": pl.String},
    )


def _start(seconds: float) -> int:
    return int((T0 + dt.timedelta(seconds=seconds)).timestamp()) * SECOND


def test_an_event_on_a_node_without_workload_is_set_aside() -> None:
    evidence = _evidence(
        [
            (1, "node-b", "infrastructure", 10, "root"),
            (2, "node-a", "infrastructure", 20, "root"),
            (3, "node-a", "host", 30, "root"),
            (4, None, "infrastructure", 15, "root"),
        ]
    )
    aside = unrelated_to(
        evidence, workload_hosts=["node-a"], workload_start=_start(0), tolerance_ns=2 * SECOND
    )
    assert aside["row_id"].to_list() == [1]
    roles = set_aside(evidence, aside).sort("row_id")["role"].to_list()
    assert roles == ["context", "root", "root", "root"]


def test_an_event_before_the_workload_started_is_set_aside() -> None:
    evidence = _evidence(
        [(1, "node-a", "infrastructure", 0, "root"), (2, "node-a", "infrastructure", 99, "root")]
    )
    aside = unrelated_to(
        evidence, workload_hosts=["node-a"], workload_start=_start(60), tolerance_ns=2 * SECOND
    )
    assert aside["row_id"].to_list() == [1]


def test_without_workload_hosts_every_event_stays_a_candidate() -> None:
    evidence = _evidence([(1, "node-b", "infrastructure", 10, "root")])
    aside = unrelated_to(evidence, workload_hosts=[], workload_start=None, tolerance_ns=0)
    assert aside.height == 0


def _repack(source: Path, target: Path, edit: dict[str, tuple[str, str]]) -> Path:
    """The bundle ``source`` (.tar.zst) unpacked into ``target`` with text replaced in the
    named members."""
    with (
        source.open("rb") as raw,
        zstandard.ZstdDecompressor().stream_reader(raw) as stream,
        tarfile.open(fileobj=stream, mode="r|") as archive,
    ):
        archive.extractall(target, filter="data")
    for member, (old, new) in edit.items():
        path = target / member
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new), encoding="utf-8")
    return target


def test_a_preemption_of_a_node_that_ran_no_pod_does_not_win(tmp_path: Path) -> None:
    spec = REPLAY / "preemption"
    expected = (spec / "expected.toml").read_text(encoding="utf-8")
    node = expected.split('culprit_host = "', 1)[1].split('"', 1)[0]
    bundle = _repack(
        spec / "bundle.tar.zst",
        tmp_path / "bundle",
        {"gcloud/system_event.json": (node, "gke-unrelated-pool-9-00000000-zzzz")},
    )
    findings = api.analyze([bundle], tmp_path / "out").findings
    verdict = findings.verdict
    assert verdict.first_error is not None
    assert verdict.first_error.citation.path != "gcloud/system_event.json"
    notes = " ".join(verdict.negative_findings)
    assert "gke-unrelated-pool-9-00000000-zzzz" in notes
    assert "ran none of the attempt's workload" in notes
    # The untouched bundle still blames the preemption (the rule, not the bundle, changed).
    original = api.analyze([spec / "bundle.tar.zst"], tmp_path / "original").findings
    assert original.verdict.first_error is not None
    assert original.verdict.first_error.citation.path == "gcloud/system_event.json"
