"""The library ceilings measured beside the ingest figures (benchmarks/ceilings.py)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from benchmarks import ceilings
from benchmarks.families import INGEST

_ENTRY = {
    "insertId": "a1",
    "labels": {"compute.googleapis.com/resource_name": "node-1", "other": "x"},
    "logName": "projects/p/logs/stderr",
    "resource": {"type": "k8s_container", "labels": {"pod_name": "pod-0", "extra": "y"}},
    "severity": "ERROR",
    "textPayload": "I1129 17:40:00.002299 1 train.py:211] completed step: 1\n",
    "timestamp": "2026-11-29T17:40:00.003039221Z",
    "unknownField": {"deep": [1, 2]},
}


def test_entry_schema_holds_the_fields_culprit_takes() -> None:
    schema = ceilings.entry_schema()
    assert schema["timestamp"] is None
    assert schema["labels"]["compute.googleapis.com/resource_name"] is None
    assert schema["resource"]["labels"]["pod_name"] is None
    assert schema["jsonPayload"]["involvedObject"]["kind"] is None


@pytest.mark.parametrize("name", ["polars_ndjson", "pyarrow_json"])
def test_json_lines_ceilings_read_every_entry(tmp_path: Path, name: str) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps(_ENTRY | {"insertId": str(i)}) for i in range(5)))
    out = tmp_path / "out.parquet"
    ceilings.child(
        [name, "cloud_logging", str(source), str(out), ceilings.child_spec("cloud_logging")]
    )
    frame = pl.read_parquet(out)
    assert frame.height == 5
    assert frame["textPayload"][0] == _ENTRY["textPayload"]
    assert frame["labels"].struct.field("compute.googleapis.com/resource_name")[0] == "node-1"


def test_array_ceiling_reads_a_gcloud_array(tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps([_ENTRY, _ENTRY], indent=2, sort_keys=True))
    out = tmp_path / "out.parquet"
    spec = ceilings.child_spec("cloud_logging_array")
    ceilings.child(["polars_json", "cloud_logging_array", str(source), str(out), spec])
    assert pl.read_parquet(out).height == 2


def test_lines_ceiling_parses_level_stamp_and_message(tmp_path: Path) -> None:
    source = tmp_path / "in.log"
    source.write_text(
        "I1129 17:40:00.002299 139158 train.py:211] completed step: 1000\n"
        "no prefix at all\n"
        "\n"
        "E1129 17:40:01.000000 139158 train.py:99] boom\n"
    )
    out = tmp_path / "out.parquet"
    ceilings.child(["polars_lines", "text", str(source), str(out), ceilings.child_spec("text")])
    frame = pl.read_parquet(out).sort("row")
    assert frame["level"].to_list() == ["I", None, None, "E"]
    assert frame["message"].to_list() == ["completed step: 1000", "no prefix at all", "", "boom"]
    assert str(frame["ts"][0]) == "2026-11-29 17:40:00.002299"
    assert frame["ts"].null_count() == 2


def test_kubelet_ceiling_runs_klog_over_the_journal_message(tmp_path: Path) -> None:
    source = tmp_path / "journal.log"
    source.write_text(
        "Nov 28 17:39:55.009731 node-1 kubelet[1234]: I1128 17:39:55.009731 1234 "
        'server.go:1] "Kubelet version"\n'
    )
    out = tmp_path / "out.parquet"
    spec = ceilings.child_spec("kubelet")
    ceilings.child(["polars_lines", "kubelet", str(source), str(out), spec])
    frame = pl.read_parquet(out)
    assert frame["level"].to_list() == ["I"]
    assert frame["message"].to_list() == ['"Kubelet version"']


def test_ceilings_are_measured_for_the_inputs_the_targets_judge() -> None:
    assert [c.name for c in ceilings.ceilings_for("cloud_logging")] == [
        "polars_ndjson",
        "pyarrow_json",
    ]
    assert [c.name for c in ceilings.ceilings_for("cloud_logging_array")] == ["polars_json"]
    assert [c.name for c in ceilings.ceilings_for("kubelet")] == ["polars_lines"]
    assert ceilings.ceilings_for("modelarts") == []


def test_ingest_table_shows_the_best_ceiling_beside_culprit() -> None:
    run = {"seconds": 2.0, "user_s": 1.5, "system_s": 0.5, "load_before": 1.0, "load_after": 1.0}
    slow = {"label": "slow lib", "mib_per_s": 50.0, "runs": [run]}
    fast = {"label": "fast lib", "mib_per_s": 80.0, "runs": [run]}
    result = {"ceilings": [slow, fast]}
    assert ceilings.best_ceiling(result) is fast
    assert ceilings.describe_ceilings(result) == (
        "slow lib 50.0 MiB/s (CPU 2.0 s); fast lib 80.0 MiB/s (CPU 2.0 s)"
    )
    assert ceilings.describe_ceilings({}) == ""
    header = INGEST.table([], []).splitlines()[0]
    assert "| MiB/s | best library ceiling MiB/s |" in header
