"""Every failure gives a result line in the record, a line on stderr naming the command and
why, and the rest is collected: a 404 OBS URL, a permission refused for the URL, a quota that
never lets up, a command out of time; a discovery that cannot run stops with one line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.collect.record import read_results
from tests.collect.fakes import FakeCloud, Rule
from tests.collect.worlds import ModelArtsWorld, gke_target_args

runner = CliRunner(env={"COLUMNS": "300"})


def test_each_failure_is_recorded_and_said_and_the_rest_is_collected(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    not_found = fake_cloud.find("curl", world.logs["worker-1"])
    not_found.stdout, not_found.exit = None, 22
    not_found.stderr = "curl: (22) The requested URL returned error: 404\n"
    refused = fake_cloud.find("hcloud", "ShowObsUrlOfTrainingJobLogs", "--task_id=worker-2")
    refused.text, refused.exit = "", 1
    refused.stderr = '{"error_code":"ModelArts.0104","error_msg":"Permission denied."}\n'
    quota = fake_cloud.find("hcloud", "ListTrainingJobStages")
    quota.stdout, quota.exit = None, 1
    quota.stderr = "RESOURCE_EXHAUSTED: Quota exceeded\n"
    slow = fake_cloud.find("hcloud", "ShowTrainingJobLogsPreview", "--task_id=worker-3")
    slow.sleep = 5.0
    fake_cloud.save()
    out = tmp_path / "b"

    result = runner.invoke(
        app,
        [
            "collect",
            "modelarts",
            *world.args(),
            "-o",
            str(out),
            "--backoff",
            "0",
            "--attempts",
            "3",
            "--timeout",
            "1",
            "-q",
        ],
    )

    assert result.exit_code == 1, result.output
    results = read_results(out)
    expected = {
        "obs-log-worker-1": "returned error: 404",
        "obs-log-worker-2": "ShowObsUrlOfTrainingJobLogs",
        "modelarts-stages": "RESOURCE_EXHAUSTED",
        "modelarts-preview-worker-3": "ran out of time (1 s)",
    }
    for step, why in expected.items():
        assert results[step].status == "failed", step
        assert why in (results[step].error or ""), results[step]
        assert f"failed: {step}: " in result.stderr and why in result.stderr
    assert "Permission denied" in (results["obs-log-worker-2"].error or "")
    assert results["modelarts-stages"].attempts == 3
    assert results["obs-log-worker-1"].exit_status == 22
    # Everything else is there, and the record says what is not.
    assert {r.id for r in results.values() if r.status == "ok"} == {
        r.id for r in results.values()
    } - set(expected)
    verified = api.verify_collection(out)
    assert verified.intact
    assert verified.complete  # every command ran; four of them failed
    assert sorted(line.split(":")[0] for line in verified.failed) == sorted(expected)
    manifest = (out / "culprit-collect" / "manifest.json").read_text()
    assert all(f'"{step}"' in manifest for step in expected)


def test_a_discovery_that_cannot_run_stops_with_one_line_and_a_record(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    (fake_cloud.bin / "hcloud").unlink()  # KooCLI is not installed
    out = tmp_path / "b"

    result = runner.invoke(app, ["collect", "modelarts", *world.args(), "-o", str(out), "-q"])

    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "modelarts-details failed: hcloud: command not found on PATH" in result.stderr
    assert read_results(out)["modelarts-details"].status == "failed"
    assert (out / "culprit-collect" / "plan.json").is_file()
    assert '"complete": false' in (out / "culprit-collect" / "manifest.json").read_text()


def test_no_pod_matching_is_an_error_that_says_where_to_look(
    fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    fake_cloud.add(Rule("kubectl", ["get", "pods"], text='{"items": []}'))
    args = [*gke_target_args("gone"), "-o", str(tmp_path / "b"), "-q"]

    result = runner.invoke(app, ["collect", "gke", *args])

    assert result.exit_code == 2
    assert "no pod in namespace ml matches jobset.sigs.k8s.io/jobset-name=gone" in result.stderr
