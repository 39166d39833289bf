"""Running a plan: resuming, Ctrl-C, byte caps, the concurrency limit, redaction of what the
commands print, the environment passed through and no credential file opened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.collect.record import read_results
from tests.collect.fakes import FakeCloud
from tests.collect.worlds import ModelArtsWorld

runner = CliRunner(env={"COLUMNS": "200"})


def _collect(world: ModelArtsWorld, out: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(
        app, ["collect", "modelarts", *world.args(), "-o", str(out), "-q", *extra]
    )
    return result.exit_code, result.output


def _data_calls(cloud: FakeCloud) -> list[list[str]]:
    return [
        c["argv"]
        for c in cloud.calls()
        if c["argv"][-1] not in ("version", "--version", "--client")
    ]


def test_a_second_run_skips_what_is_complete_and_redoes_the_rest(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    broken = fake_cloud.find("curl", world.logs["worker-0"])
    broken.exit, broken.stderr = 22, "curl: (22) The requested URL returned error: 503\n"
    fake_cloud.save()
    out = tmp_path / "b"
    assert _collect(world, out)[0] == 1
    first = read_results(out)
    # Fixed on the server; a file of the bundle damaged on the way.
    broken.exit, broken.stderr = 0, ""
    fake_cloud.save()
    stages = out / first["modelarts-stages"].output  # type: ignore[operator]
    stages.write_text("{}")
    fake_cloud.forget_calls()

    code, output = _collect(world, out)

    assert code == 0, output
    ran = _data_calls(fake_cloud)
    # Only the failed download (its URL asked again) and the damaged file ran again.
    assert sorted(a[1] for a in ran if a[0] == "ModelArts") == [
        "ListTrainingJobStages",
        "ShowObsUrlOfTrainingJobLogs",
    ]
    assert sum(a[0] == "--fail" for a in ran) == 1
    again = read_results(out)
    assert again["obs-log-worker-0"].status == "ok"
    assert again["modelarts-stages"].sha256 == first["modelarts-stages"].sha256
    assert all(
        again[i] == first[i] for i in first if i not in ("obs-log-worker-0", "modelarts-stages")
    )
    assert api.verify_collection(out).intact
    fake_cloud.forget_calls()
    assert _collect(world, out)[0] == 0
    assert _data_calls(fake_cloud) == []


def test_ctrl_c_leaves_a_valid_partial_bundle_that_resumes(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    slow = fake_cloud.find("curl", world.logs["worker-3"])
    slow.sleep = 60.0
    fake_cloud.save()
    out = tmp_path / "b"
    command = [
        sys.executable,
        "-m",
        "analyzer",
        "collect",
        "modelarts",
        *world.args(),
        "-o",
        str(out),
        "-q",
        "--concurrency",
        "1",  # worker-3's log is the last command: everything before it is complete
    ]
    child = subprocess.Popen(command, env=fake_cloud.environ(), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (fake_cloud.root / "running").is_dir() or not any(
        (fake_cloud.root / "running").iterdir()
    ):
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.05)

    child.send_signal(signal.SIGINT)

    _, stderr = child.communicate(timeout=30)
    assert child.returncode == 130, stderr
    assert "interrupted" in stderr
    verified = api.verify_collection(out)
    assert verified.intact and not verified.complete
    assert "obs-log-worker-3: not run" in verified.failed
    assert not (out / "culprit-collect" / "partial").exists()
    assert list(out.rglob("*worker-3*.log")) == []
    # The fake that was running is gone too (it ran in a session of its own: culprit
    # stopped it, the terminal's Ctrl-C did not reach it).
    for marker in (fake_cloud.root / "running").iterdir():
        with pytest.raises(ProcessLookupError):
            os.kill(int(marker.name), 0)
        marker.unlink()
    slow.sleep = 0.0
    fake_cloud.save()
    fake_cloud.forget_calls()
    assert _collect(world, out)[0] == 0
    assert sum(a[0] == "--fail" for a in _data_calls(fake_cloud)) == 1
    assert api.verify_collection(out).complete


def test_byte_caps_cut_a_source_and_skip_past_the_total(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    out = tmp_path / "b"

    code, output = _collect(
        world, out, "--source-cap", "3000", "--total-cap", "20000", "--concurrency", "1"
    )

    assert code == 1  # a command was skipped
    results = list(read_results(out).values())
    by_source = [r for r in results if "its byte cap (3,000 bytes)" in (r.error or "")]
    assert len(by_source) == 2 and all(
        r.status == "truncated" and r.bytes == 3000 for r in by_source
    )
    by_total = [r for r in results if "cut at the total byte cap (20,000 bytes)" in (r.error or "")]
    assert len(by_total) == 1 and by_total[0].status == "truncated"
    skipped = [r for r in results if r.status == "skipped"]
    assert len(skipped) == 1 and "total byte cap (20,000 bytes) is reached" in (
        skipped[0].error or ""
    )
    assert sum(r.bytes for r in results) == 20000
    assert "skipped: obs-log-worker-3" in output and "truncated: obs-log-worker-0" in output
    assert api.verify_collection(out).intact


def test_no_more_commands_run_at_once_than_the_limit(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    for task in world.tasks:
        fake_cloud.find("hcloud", "ShowTrainingJobLogsPreview", f"--task_id={task}").sleep = 0.3
    fake_cloud.save()

    assert _collect(world, tmp_path / "b", "--concurrency", "2")[0] == 0

    assert fake_cloud.most_at_once() == 2


def test_tokens_are_redacted_and_addresses_kept(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    log = fake_cloud.files / "obs" / world.logs["worker-0"]
    secret = "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
    log.write_text(log.read_text() + f"export HF_TOKEN={secret} from 172.16.0.9\n")

    assert _collect(world, tmp_path / "b")[0] == 0
    assert _collect(world, tmp_path / "raw", "--no-redact")[0] == 0

    written = next((tmp_path / "b").rglob(world.logs["worker-0"])).read_text()
    assert secret not in written
    assert "[REDACTED:hf-token] from 172.16.0.9" in written
    raw = next((tmp_path / "raw").rglob(world.logs["worker-0"])).read_text()
    assert secret in raw
    assert api.verify_collection(tmp_path / "b").intact


def test_no_credential_file_is_opened_and_no_shell_runs(
    ma: tuple[Path, ModelArtsWorld],
    fake_cloud: FakeCloud,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, world = ma
    home = tmp_path / "home"
    for name in (".config/gcloud/credentials.db", ".kube/config", ".hcloud/config.json"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("secret")
    monkeypatch.setenv("HOME", str(home))
    opened: list[str] = []
    shells: list[object] = []

    def watch(event: str, args: tuple[object, ...]) -> None:
        if not watching:
            return
        if event == "open" and isinstance(args[0], str | Path):
            opened.append(os.fspath(args[0]))
        if event == "subprocess.Popen" and Path(str(args[0])).name in ("sh", "bash"):
            shells.append(args)

    watching = True
    sys.addaudithook(watch)
    try:
        result = api.collect_modelarts(api.ModelArtsTarget(world.job, world.region), tmp_path / "b")
    finally:
        watching = False

    assert result.collected == 13
    assert opened and not [p for p in opened if p.startswith(str(home))]
    assert shells == []
    assert {c["passed"] for c in fake_cloud.calls()} == {"passed-through"}


def test_two_collections_cannot_write_into_one_folder(tmp_path: Path) -> None:
    from analyzer.collect.runner import Runner
    from analyzer.errors import CollectError

    with (
        Runner(tmp_path / "b", api.RunSettings()),
        pytest.raises(CollectError, match="another culprit collect is writing"),
    ):
        Runner(tmp_path / "b", api.RunSettings())
    with Runner(tmp_path / "b", api.RunSettings()):
        pass  # free again


def test_a_folder_holding_another_collection_is_refused(
    ma: tuple[Path, ModelArtsWorld], fake_cloud: FakeCloud, tmp_path: Path
) -> None:
    _, world = ma
    out = tmp_path / "b"
    assert _collect(world, out)[0] == 0
    other = ["--job-id", "0f2ccdbb-4f34-4d53-afb9-d526f3be8c68", "--region", world.region]

    result = runner.invoke(app, ["collect", "modelarts", *other, "-o", str(out), "-q"])

    assert result.exit_code == 2
    assert "the folder holds another collection" in result.stderr
    assert api.verify_collection(out).intact
