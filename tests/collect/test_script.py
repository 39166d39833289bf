"""``--print-commands``: a bash script that bash runs, that holds exactly the plan's commands
(each word quoted so that bash gives the command the plan's argv), and that writes the bundle
culprit would write: the same files, the same record, read the same by ``culprit ingest``."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from tests.collect.fakes import FakeCloud, Rule
from tests.collect.worlds import GkeWorld, ModelArtsWorld, gke_target_args
from tests.helpers import read_table

runner = CliRunner(env={"COLUMNS": "200"})


def _files(bundle: Path) -> dict[str, bytes]:
    return {
        p.relative_to(bundle).as_posix(): p.read_bytes()
        for p in bundle.rglob("*")
        if p.is_file() and not p.relative_to(bundle).as_posix().startswith("culprit-collect/")
    }


def _plan(script: str) -> dict[str, Any]:
    lines = script.splitlines()
    plan: dict[str, Any] = json.loads(
        lines[lines.index("cat > \"$B/culprit-collect/plan.json\" <<'CULPRIT_PLAN_JSON'") + 1]
    )
    return plan


def test_the_gke_script_holds_the_plans_exact_commands_and_runs(
    gke: tuple[Path, GkeWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = gke
    result = runner.invoke(app, ["collect", "gke", *world.args(), "--print-commands"])
    assert result.exit_code == 0, result.output
    script = result.stdout
    assert script.startswith("#!/usr/bin/env bash\n")
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    # Only the listing ran (pods, nodes, the ML Diagnostics namespaces): no log was read.
    tools = {(c["tool"], c["argv"][0]) for c in fake_cloud.calls()}
    assert tools <= {("kubectl", "get"), ("kubectl", "version")}
    # Bash gives every command exactly the plan's argv: the Cloud Logging queries' quotes
    # and parentheses survive.
    plan = _plan(script)
    commands = [line for line in script.splitlines() if line.startswith("run ")]
    probe = "run() { shift 5; printf '%s\\0' \"$@\"; printf '\\n\\0'; }\n" + "\n".join(commands)
    words = subprocess.run(["bash", "-c", probe], capture_output=True, check=True).stdout
    argvs = [c.split("\0")[:-1] for c in words.decode().split("\n\0") if c]
    assert argvs == [s["argv"] for s in plan["steps"]]
    queries = [a[3] for a in argvs if a[:3] == ["gcloud", "logging", "read"]]
    assert any('labels."k8s-pod/jobset_sigs_k8s_io/jobset-name"="' in q for q in queries)
    # Every command says why and what it needs.
    for step in plan["steps"]:
        assert f"# Needs: {step['permission']}." in script
        assert shlex.join(["run", step["id"]]) in script
    # And bash runs it into the bundle culprit collects.
    (tmp_path / "collect.sh").write_text(script)
    done = subprocess.run(
        ["bash", str(tmp_path / "collect.sh"), str(tmp_path / "scripted")],
        capture_output=True,
        text=True,
        env=fake_cloud.environ(),
    )
    assert done.returncode == 0, done.stderr
    ran = runner.invoke(app, ["collect", "gke", *world.args(), "-o", str(tmp_path / "ran"), "-q"])
    assert ran.exit_code == 0, ran.output
    assert _files(tmp_path / "scripted") == _files(tmp_path / "ran")
    verified = api.verify_collection(tmp_path / "scripted")
    assert verified.intact and verified.complete and verified.failed == []


def test_the_modelarts_script_writes_the_bundle_culprit_would(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    tasks = ["--task-id", "worker-0", "--task-id", "worker-3"]
    ran = runner.invoke(
        app, ["collect", "modelarts", *world.args(), *tasks, "-o", str(tmp_path / "ran"), "-q"]
    )
    assert ran.exit_code == 0, ran.output
    printed = runner.invoke(
        app, ["collect", "modelarts", *world.args(), *tasks, "--print-commands"]
    )
    assert printed.exit_code == 0, printed.output
    (tmp_path / "collect.sh").write_text(printed.stdout)

    done = subprocess.run(
        ["bash", str(tmp_path / "collect.sh"), str(tmp_path / "scripted")],
        capture_output=True,
        text=True,
        env=fake_cloud.environ(),
    )

    assert done.returncode == 0, done.stderr
    assert _files(tmp_path / "scripted") == _files(tmp_path / "ran")
    verified = api.verify_collection(tmp_path / "scripted")
    assert verified.intact and verified.complete and verified.members == 9
    for line in (
        (tmp_path / "scripted" / "culprit-collect" / "results.jsonl").read_text().splitlines()
    ):
        result = api.StepResult.model_validate_json(line)
        assert result.status == "ok" and result.version and "fake" in result.version
    # culprit reads the script's folder as it reads its own: the files are the same bytes,
    # and the record (its own stderr files and all) adds nothing to the case.
    case = api.ingest([tmp_path / "scripted"], tmp_path / "case")
    files = read_table(tmp_path / "case", "files")
    record = files.filter(pl.col("path").str.starts_with("culprit-collect/"))
    assert set(record["status"]) == {"collection"} and record["records"].sum() == 0
    assert (record.height, files.height - record.height) == (16, 7)
    assert case.meta.counts.rows > 0
    # Run again: everything is complete, nothing runs.
    fake_cloud.forget_calls()
    again = subprocess.run(
        ["bash", str(tmp_path / "collect.sh"), str(tmp_path / "scripted")],
        capture_output=True,
        text=True,
        env=fake_cloud.environ(),
    )
    assert again.returncode == 0
    assert [c for c in fake_cloud.calls() if c["argv"][-1] != "version"] == []


def test_printing_needs_the_listing_and_says_so_when_it_fails(
    fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    fake_cloud.add(
        Rule(
            "kubectl",
            ["get", "pods"],
            exit=1,
            stderr='Error from server (Forbidden): pods is forbidden: User "x" cannot list resource "pods"\n',
        )
    )
    args = [*gke_target_args("j"), "--print-commands"]

    result = runner.invoke(app, ["collect", "gke", *args])

    assert result.exit_code == 2
    assert (
        "k8s-pods (`kubectl get pods --namespace …`) is needed to write the commands"
        in result.stderr
    )
    assert "pods is forbidden" in result.stderr


def test_a_modelarts_script_for_given_tasks_needs_no_access(
    fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    job = "95f661bd-1527-41b8-971c-eca55e513254"
    args = ["--job-id", job, "--region", "cn-north-4", "--task-id", "worker-0", "--print-commands"]

    result = runner.invoke(app, ["collect", "modelarts", *args])

    assert result.exit_code == 0, result.output
    assert fake_cloud.calls() == []
    assert f"--training_job_id={job}" in result.stdout
    assert "ShowObsUrlOfTrainingJobLogs" in result.stdout
