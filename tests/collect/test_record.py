"""The record: ``culprit collect verify`` finds every damaged, missing or added file, and
``results.jsonl`` survives a crash in the middle of a line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.collect.record import read_results
from analyzer.errors import CollectError
from tests.collect.fakes import FakeCloud
from tests.collect.worlds import ModelArtsWorld

runner = CliRunner(env={"COLUMNS": "300"})


def test_verify_names_every_changed_missing_and_added_file(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    out = tmp_path / "b"
    assert (
        runner.invoke(app, ["collect", "modelarts", *world.args(), "-o", str(out), "-q"]).exit_code
        == 0
    )
    clean = runner.invoke(app, ["collect", "verify", str(out)])
    assert clean.exit_code == 0 and "every file matches the manifest" in clean.stdout
    folder = out / "modelarts" / world.job
    stages = folder / f"job-{world.job}-stages.json"
    stages.write_bytes(stages.read_bytes().replace(b"running", b"runnin!"))  # same size
    (folder / f"job-{world.job}-events-info.json").unlink()
    (folder / "extra.log").write_text("added later\n")

    result = runner.invoke(app, ["collect", "verify", str(out)])

    assert result.exit_code == 1
    assert (
        f"damaged: modelarts/{world.job}/job-{world.job}-stages.json does not match its sha256"
        in result.stderr
    )
    assert (
        f"damaged: modelarts/{world.job}/job-{world.job}-events-info.json is missing"
        in result.stderr
    )
    assert f"damaged: modelarts/{world.job}/extra.log is not in the record" in result.stderr


def test_verify_refuses_a_folder_that_is_not_a_collection(tmp_path: Path) -> None:
    result = runner.invoke(app, ["collect", "verify", str(tmp_path)])
    assert result.exit_code == 2
    assert "no culprit-collect/plan.json: not a collected bundle" in result.stderr


def test_a_result_line_cut_by_a_crash_is_ignored_but_a_bad_one_is_named(tmp_path: Path) -> None:
    record = tmp_path / "culprit-collect" / "results.jsonl"
    record.parent.mkdir()
    good = '{"id":"a","status":"ok","bytes":1,"sha256":"00","output":"a.json","tool":"kubectl"}'
    record.write_text(good + "\n" + '{"id":"b","status":"o')
    assert list(read_results(tmp_path)) == ["a"]
    record.write_text('{"id":"b"}\n' + good + "\n")
    with pytest.raises(
        CollectError, match=r"culprit-collect/results.jsonl:1: not a collection result"
    ):
        read_results(tmp_path)
