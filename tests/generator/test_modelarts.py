"""The ModelArts world of the generator: worker-log names and stamps as ModelArts writes them,
API JSON whose citations point at the right objects, nothing of the GKE world, and first
errors that come first once culprit has read the bundle."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from fixtures.generate import generate
from fixtures.modelarts import node_count
from fixtures.modelarts.worker_logs import local_stamp, stamp
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR, Truth

#: formats.md §3.4.
WORKER_LOG = re.compile(
    r"^modelarts-job-(?P<job>[0-9a-f-]{36})-(?:(?P<comp>.+?)-)?(?P<task>worker-\d+)"
    r"(?:-(?P<ip>\d{1,3}(?:\.\d{1,3}){3})-(?P<sfx>\w+))?\.log$"
)
CANN_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2})\.(\d{3})\.(\d{3})")
#: The toolkit's recurring benign ERROR (background noise, not a root cause).
NOISE = "report training progress to ModelArts failed"


def _options(hosts: int = 8) -> Options:
    return Options(hosts=hosts, seed=5, minutes=10.0, rate=12.0)


@pytest.fixture(scope="module")
def hccl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    out = tmp_path_factory.mktemp("hccl")
    return out, generate("hccl-timeout-modelarts", _options(), out)


@pytest.fixture(scope="module")
def npu(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    out = tmp_path_factory.mktemp("npu")
    return out, generate("npu-in-use-modelarts", _options(), out)


def _logs(out: Path) -> list[Path]:
    return sorted((out / BUNDLE_DIR).rglob("*.log"))


def test_a_node_holds_the_npus_of_two_tpu_hosts() -> None:
    assert [node_count(h) for h in (8, 64, 4096)] == [4, 32, 2048]


@pytest.mark.parametrize("form", ["asctime", "slash", "cann", "torch", "isozone"])
def test_stamps_are_utc_plus_8_and_agree_between_writer_and_messages(form: str) -> None:
    ns = int(datetime(2026, 11, 29, 18, 35, 20, tzinfo=UTC).timestamp()) * 10**9 + 114_205_123
    frame = pl.DataFrame({"form": [form]}).with_columns(
        stamp(pl.lit(ns + 8 * 3600 * 10**9)).alias("s")
    )
    expected = {
        "asctime": "2026-11-30 02:35:20,114",
        "slash": "2026/11/30 02:35:20,114",
        "cann": "2026-11-30-02:35:20.114.205",
        "torch": "2026-11-30-02:35:20",
        "isozone": "2026-11-30T02:35:20+08:00",
    }[form]
    assert frame["s"][0] == expected == local_stamp(ns, form)


@pytest.mark.parametrize("name", ["hccl", "npu"])
def test_worker_logs_are_named_as_modelarts_names_them(
    name: str, request: pytest.FixtureRequest
) -> None:
    out, truth = request.getfixturevalue(name)
    logs = _logs(out)
    assert truth.nodes == len(logs) == 4
    matches = [WORKER_LOG.match(p.name) for p in logs]
    assert all(matches)
    assert sorted(m["task"] for m in matches if m) == [f"worker-{n}" for n in range(4)]
    jobs = {m["job"] for m in matches if m}
    assert len(jobs) == 1 and all(p.parent.parent.name in jobs for p in logs)
    ips = [m["ip"] for m in matches if m]
    host = truth.attempts[0].culprit.host
    if name == "hccl":  # OBS names carry the node's IP: the culprit host is one of them
        assert host in ips and all(m["sfx"] for m in matches if m)
    else:  # console names: the culprit is a task
        assert ips == [None] * 4 and host is not None and host.startswith("worker-")


@pytest.mark.parametrize("name", ["hccl", "npu"])
def test_no_gke_artefacts(name: str, request: pytest.FixtureRequest) -> None:
    out, _ = request.getfixturevalue(name)
    assert [p.name for p in (out / BUNDLE_DIR).iterdir()] == ["modelarts"]


@pytest.mark.parametrize("name", ["hccl", "npu"])
def test_every_log_learns_its_zone_from_its_head(name: str, request: pytest.FixtureRequest) -> None:
    out, _ = request.getfixturevalue(name)
    for log in _logs(out):
        head = log.read_text().splitlines()[:5]
        assert any(line.startswith('time="') and '+08:00" level=' in line for line in head)


def test_ei0002_names_the_culprit_rank_on_its_node(hccl: tuple[Path, Truth]) -> None:
    out, truth = hccl
    text = "\n".join(p.read_text() for p in _logs(out))
    remote = set(re.findall(r"remote rank \[(\d+)\]", text))
    servers = set(re.findall(r"serverId\[([^\]]+)\]", text))
    assert len(remote) == 1 and servers == {truth.attempts[0].culprit.host}
    ranks = {int(r) for r in re.findall(r"\bproc-rank-(\d+)-device-\d+", text)}
    assert ranks == set(range(32))
    (rank,) = remote
    host = truth.attempts[0].culprit.host
    assert host is not None
    culprit_log = next(p for p in _logs(out) if host in p.name)
    assert f"proc-rank-{rank}-device-" in culprit_log.read_text()


def test_job_json_cites_the_culprits_task_status(npu: tuple[Path, Truth]) -> None:
    out, truth = npu
    attempt = truth.attempts[0]
    (cited,) = [e for e in attempt.evidence if e.path.endswith("-details.json")]
    path = out / BUNDLE_DIR / cited.path
    lines = path.read_text().split("\n")
    assert lines[cited.line - 1].strip() == "{"
    body = json.loads(path.read_text())
    statuses = body["status"]["task_statuses"]
    assert json.loads(cited.text) in statuses
    culprit = json.loads(cited.text)
    assert culprit == {"task": attempt.culprit.host, "exit_code": 1, "message": ""}
    others = [s["exit_code"] for s in statuses if s["task"] != culprit["task"]]
    assert others == [137] * 3
    assert body["status"]["phase"] == "Failed"
    assert body["metadata"]["id"] in cited.path
    events = json.loads(next(path.parent.glob("*-events.json")).read_text())["events"]
    times = [e["time"] for e in events]
    assert times == sorted(times, reverse=True) and all(t.endswith("+08:00") for t in times)


@pytest.mark.parametrize("name", ["hccl", "npu"])
def test_first_error_is_first_and_in_utc(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    out, truth = request.getfixturevalue(name)
    api.ingest([out / BUNDLE_DIR], tmp_path / "case")
    rows = pl.from_arrow(
        api.query(
            tmp_path / "case",
            "SELECT f.path, r.line, r.ts, r.host, r.message FROM rows r JOIN files f "
            "USING (file_id) WHERE r.severity IN ('ERROR', 'CRITICAL') ORDER BY r.ts, r.line",
        )
    )
    assert isinstance(rows, pl.DataFrame)
    rows = rows.filter(~pl.col("message").str.contains(NOISE, literal=True))
    first = truth.attempts[0].first_error
    assert (rows["path"][0], rows["line"][0]) == (first.path, first.line)
    assert rows["host"][0] == truth.attempts[0].culprit.host
    # The CANN stamp is UTC+8 container time: culprit's ts is eight hours earlier.
    found = CANN_STAMP.search(first.text)
    assert found is not None
    local = datetime.strptime(found[1], "%Y-%m-%d-%H:%M:%S").replace(tzinfo=UTC)
    local += timedelta(microseconds=int(found[2]) * 1000 + int(found[3]))
    assert rows["ts"][0] == local - timedelta(hours=8)
    # Nothing on another host comes close (clock skew cannot reorder them).
    others = rows.filter(pl.col("host") != truth.attempts[0].culprit.host)
    gap = timedelta(seconds=2 * truth.max_skew_s + 3)
    assert others["ts"].min() - rows["ts"][0] >= gap
