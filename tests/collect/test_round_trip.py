"""Scenario → fake CLIs → ``culprit collect`` → ``culprit analyze`` gives the verdict of the
scenario's own bundle, per platform, with failures on the way (a quota refused once, a
permission denied, a previous log that is gone).

Verdicts are compared attempt by attempt on what they conclude: failure mode and class, the
first error's signature, host and text, the culprit's kind and host, the confidence. The
citations name other files (``gcloud/containers.json`` where the scenario has its sink
objects), so their paths are not compared; that each cited file is in the collected bundle is.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.diagnose.findings import Findings
from tests.collect.fakes import FakeCloud, Rule
from tests.collect.worlds import GkeWorld, ModelArtsWorld
from tests.helpers import check_accounting, read_table

runner = CliRunner(env={"COLUMNS": "200"})

QUOTA = (
    "ERROR: (gcloud.logging.read) RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Read "
    "requests' and limit 'Read requests per minute' of service 'logging.googleapis.com'\n"
)


def verdict(findings: Findings) -> list[tuple[object, ...]]:
    return [
        (
            v.failure_mode,
            v.failure_class,
            None if v.first_error is None else v.first_error.signature,
            None if v.first_error is None else v.first_error.host,
            None if v.first_error is None else v.first_error.message,
            v.culprit.kind,
            v.culprit.host,
            v.confidence,
        )
        for v in findings.attempts
    ]


def same_verdict(direct: Path, collected: Path, out: Path) -> Findings:
    """Analyze both bundles; the collected one's findings (after comparing)."""
    expected = api.analyze([direct], out / "direct").findings
    got = api.analyze([collected], out / "collected").findings
    assert verdict(got) == verdict(expected)
    assert verdict(expected)[0][2] is not None  # a real verdict, not "unknown" twice
    for attempt in got.attempts:
        assert attempt.first_error is not None
        assert (collected / attempt.first_error.citation.path).is_file()
    return got


def test_gke_round_trip_gives_the_scenarios_verdict(
    gke: tuple[Path, GkeWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    bundle, world = gke
    # One pod restarted and its previous log is gone; the container query is refused for
    # quota once; the audit log is not readable.
    pods = json.loads((fake_cloud.files / "pods.json").read_text())
    restarted = pods["items"][0]["metadata"]["name"]
    pods["items"][0]["status"]["containerStatuses"][0]["restartCount"] = 1
    (fake_cloud.files / "pods.json").write_text(json.dumps(pods))
    gone = (
        f'Error from server (BadRequest): previous terminated container "{world.container}" '
        f'in pod "{restarted}" not found\n'
    )
    fake_cloud.first(Rule("kubectl", ["logs", restarted, "--previous"], exit=1, stderr=gone))
    containers = fake_cloud.find("gcloud", "logs/stdout")
    containers.fail_times, containers.fail_stderr = 1, QUOTA
    audit = fake_cloud.find("gcloud", "cloudaudit.googleapis.com%2Factivity")
    audit.stdout, audit.exit = None, 1
    audit.stderr = (
        "ERROR: (gcloud.logging.read) PERMISSION_DENIED: Permission denied for all log views.\n"
    )
    fake_cloud.save()
    out = tmp_path / "collected"

    result = runner.invoke(
        app, ["collect", "gke", *world.args(), "-o", str(out), "--backoff", "0", "-q"]
    )

    assert result.exit_code == 1, result.output  # something failed, and says so
    assert f"failed: logs-{restarted}-{world.container}.previous:" in result.stderr
    assert "previous terminated container" in result.stderr
    assert "failed: logging-audit:" in result.stderr and "PERMISSION_DENIED" in result.stderr
    results = {r.id: r for r in _results(out)}
    assert results["logging-containers"].status == "ok"
    assert results["logging-containers"].attempts == 2
    assert results["logging-audit"].status == "failed"
    assert results["logging-audit"].exit_status == 1
    assert results[f"logs-{restarted}-{world.container}.previous"].status == "failed"
    assert api.verify_collection(out).intact
    # The environment reached the CLIs untouched.
    assert {c["passed"] for c in fake_cloud.calls()} == {"passed-through"}
    same_verdict(bundle, out, tmp_path)
    case = tmp_path / "collected" / api.CASE_SUBDIR
    files = check_accounting(case)
    record = files.filter(pl.col("path").str.starts_with("culprit-collect/"))
    assert record.height > 0
    assert set(record["status"]) == {"collection"} and record["records"].sum() == 0


def _results(out: Path) -> list[api.StepResult]:
    from analyzer.collect.record import read_results

    return list(read_results(out).values())


def test_modelarts_round_trip_gives_the_scenarios_verdict(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    bundle, world = ma
    errors = fake_cloud.find("hcloud", "--level=Error")
    errors.fail_times = 2
    errors.fail_stderr = (
        '{"error_code":"APIGW.0308","error_msg":"The throttling threshold has been reached"}\n'
    )
    fake_cloud.save()
    out = tmp_path / "collected"

    result = runner.invoke(
        app, ["collect", "modelarts", *world.args(), "-o", str(out), "--backoff", "0", "-q"]
    )

    assert result.exit_code == 0, result.output
    results = {r.id: r for r in _results(out)}
    assert results["modelarts-events-error"].attempts == 3
    # Each log is named after its OBS object: the node's IP is in the name.
    for task, name in world.logs.items():
        assert results[f"obs-log-{task}"].output == f"modelarts/{world.job}/log/{name}"
    # The signed URL never reaches the bundle, the record or the messages.
    for path in out.rglob("*"):
        if path.is_file():
            assert b"Signature=" not in path.read_bytes(), path
    assert "Signature=" not in result.output
    same_verdict(bundle, out, tmp_path)
    check_accounting(tmp_path / "collected" / api.CASE_SUBDIR)
    assert read_table(tmp_path / "collected" / api.CASE_SUBDIR, "rows").height > 0
