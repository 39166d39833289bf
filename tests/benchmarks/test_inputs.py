"""The ingest benchmark's inputs: the sized logs of ``fixtures/sized`` are deterministic, reach
their size and are named as their readers need, and an input ingests end to end into a result
that carries what the RESULTS.md section shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import CaseError
from benchmarks.families import INGEST
from benchmarks.ingest import case_facts, measure_input, prepare_inputs
from fixtures.sized import SIZED_LOGS

TARGET = 256 << 10


@pytest.mark.parametrize("name", ["cloud_logging", "text", "kubelet", "modelarts"])
def test_a_sized_log_is_deterministic_and_about_its_size(name: str, tmp_path: Path) -> None:
    log = SIZED_LOGS[name]
    paths = [tmp_path / run / log.place(f"{name}-stem", 0) for run in ("a", "b")]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        log.generate(path, TARGET, 0)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert 0.9 * TARGET <= paths[0].stat().st_size <= 1.1 * TARGET
    # A seed is a different log.
    other = tmp_path / "c" / log.place(f"{name}-stem", 1)
    other.parent.mkdir(parents=True)
    log.generate(other, TARGET, 1)
    assert other.read_bytes() != paths[0].read_bytes()
    if name == "modelarts":  # the reader recognizes a worker log by its name
        assert paths[0].name.startswith("modelarts-job-") and paths[0].name.endswith(
            "-worker-0.log"
        )


def test_an_input_ingests_into_a_result_of_the_section(tmp_path: Path) -> None:
    (path,) = prepare_inputs(tmp_path / "cache", 1, 0, ["kubelet_zst"])
    assert path.name == "kubelet_zst-1mb-seed0-v1s1.log.zst"
    result = measure_input("kubelet_zst", path, 1, tmp_path)
    assert result["readers"] == ["kubelet"] and result["statuses"] == ["read"]
    assert result["rows"] == result["counts"]["rows"] > 1000
    assert result["compressions"] == ["zstd"] and result["decoded_bytes"] > 0.99 * (1 << 20)
    assert len(result["runs"]) == 1 and result["median_s"] > 0
    row = INGEST.table([result]).splitlines()[2]
    assert row.startswith("| kubelet_zst | kubelet | ")
    assert not (tmp_path / "case-kubelet_zst").exists()  # the case is deleted once measured
    with pytest.raises(CaseError):
        case_facts(tmp_path / "nothing")
