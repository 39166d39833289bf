"""The plan as data: steps, targets, the Cloud Logging queries and the window."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from analyzer.collect import gke, logging_filter
from analyzer.collect.modelarts import ModelArtsTarget
from analyzer.collect.plan import Capture, Plan, Step, output_of, url_file_name
from analyzer.collect.window import window
from analyzer.errors import CollectError, UsageError

WINDOW = ("2026-11-29T18:00:00Z", "2026-11-29T20:00:00Z")


def _target(**changes: object) -> gke.GkeTarget:
    fields: dict[str, object] = {
        "project": "p",
        "cluster": "c",
        "location": "us-east5-a",
        "namespace": "ml",
        "jobset": "train",
        "selector": None,
        "window": WINDOW,
    }
    return gke.GkeTarget(**{**fields, **changes})  # type: ignore[arg-type]


def _pods(*pods: tuple[str, str, int]) -> bytes:
    return json.dumps(
        {
            "items": [
                {
                    "metadata": {"name": n, "namespace": "ml"},
                    "spec": {"nodeName": node, "containers": [{"name": "jax"}]},
                    "status": {"containerStatuses": [{"name": "jax", "restartCount": r}]},
                }
                for n, node, r in pods
            ]
        }
    ).encode()


def _nodes(*names: str, zone: str | None = "us-east5-a") -> bytes:
    return json.dumps(
        {
            "items": [
                {
                    "metadata": {"name": n},
                    "spec": {"providerID": f"gce://p/{zone}/{n}"} if zone else {},
                }
                for n in names
            ]
        }
    ).encode()


def _discover(answers: dict[str, bytes]) -> object:
    def discover(step: Step) -> bytes:
        if step.id not in answers:
            raise CollectError(f"{step.id} failed")
        return answers[step.id]

    return discover


def test_the_gke_plan_follows_pods_to_nodes_to_instances() -> None:
    answers = {
        "k8s-pods": _pods(("train-0-abcde", "gke-n1", 0), ("train-1-fghjk", "gke-n2", 2)),
        "k8s-nodes": _nodes("gke-n1", "gke-n2"),
    }

    plan = gke.plan(_target(), _discover(answers), cap=100, total_cap=1000)  # type: ignore[arg-type]

    ids = [s.id for s in plan.steps]
    assert ids[:4] == [
        "k8s-pods",
        "k8s-nodes",
        "k8s-diagon-gke-mldiagnostics",
        "k8s-diagon-gke-diagon",
    ]
    # Previous logs only for the container that restarted.
    assert "logs-train-1-fghjk-jax.previous" in ids and "logs-train-0-abcde-jax.previous" not in ids
    step = {s.id: s for s in plan.steps}
    assert (
        step["logs-train-1-fghjk-jax.previous"].output
        == "kubectl/gke-n2/train-1-fghjk.jax.previous.log"
    )
    assert "--previous" in step["logs-train-1-fghjk-jax.previous"].argv
    events = str(step["logging-system-events"].argv[3])
    assert 'protoPayload.resourceName=("projects/p/zones/us-east5-a/instances/gke-n1" OR' in events
    assert 'timestamp>="2026-11-29T18:00:00Z" AND timestamp<="2026-11-29T20:00:00Z"' in events
    assert 'labels."k8s-pod/jobset_sigs_k8s_io/jobset-name"="train"' in str(
        step["logging-containers"].argv[3]
    )
    assert all(s.cap == 100 for s in plan.steps) and plan.total_cap == 1000
    # No ML Diagnostics pod: no ML run listing.
    assert "mldiagnostics-runs" not in ids


def test_nodes_without_instances_are_said_and_still_queried() -> None:
    answers = {
        "k8s-pods": _pods(("train-0-abcde", "gke-n1", 0)),
        "k8s-nodes": _nodes("gke-n1", zone=None),
    }

    plan = gke.plan(_target(), _discover(answers), cap=1, total_cap=1)  # type: ignore[arg-type]

    assert "logging-system-events" not in [s.id for s in plan.steps]
    assert "logging-serial-console" in [s.id for s in plan.steps]
    assert any("providerID" in note for note in plan.notes)


def test_long_node_lists_are_split_under_the_query_limit() -> None:
    names = [f"gke-cluster-tpu-pool-{i:04d}-abcdefgh-{i:04x}" for i in range(1024)]
    groups = logging_filter.chunks(names, "resource.labels.node_name")
    assert len(groups) > 1 and sum(map(len, groups)) == 1024
    for group in groups:
        assert (
            len(logging_filter.any_of("resource.labels.node_name", group))
            < logging_filter.MAX_QUERY - 2000
        )


def test_values_are_quoted_for_the_query_language() -> None:
    assert logging_filter.quoted('a"b\\c') == '"a\\"b\\\\c"'
    assert logging_filter.log_names("p", ["cloudaudit.googleapis.com/activity"]) == (
        'logName="projects/p/logs/cloudaudit.googleapis.com%2Factivity"'
    )


@pytest.mark.parametrize(
    ("selector", "labels"),
    [
        ("app=train", [("app", "train")]),
        (
            "jobset.sigs.k8s.io/jobset-name=x,tier=a",
            [("jobset.sigs.k8s.io/jobset-name", "x"), ("tier", "a")],
        ),
    ],
)
def test_equality_selectors_become_label_filters(
    selector: str, labels: list[tuple[str, str]]
) -> None:
    assert _target(jobset=None, selector=selector).labels() == labels


@pytest.mark.parametrize("selector", ["app in (a,b)", "!app", "app!=x", "app"])
def test_other_selectors_are_refused_before_anything_runs(selector: str) -> None:
    with pytest.raises(UsageError, match="only key=value terms"):
        _target(jobset=None, selector=selector)


def test_a_target_needs_one_of_jobset_and_selector() -> None:
    with pytest.raises(UsageError, match="--jobset NAME or --selector"):
        _target(jobset=None)
    with pytest.raises(UsageError, match="--jobset NAME or --selector"):
        _target(selector="a=b")


def test_modelarts_targets_are_checked() -> None:
    with pytest.raises(UsageError, match="--job-id"):
        ModelArtsTarget("not-a-uuid", "cn-north-4")
    with pytest.raises(UsageError, match="--task-id"):
        ModelArtsTarget("95f661bd-1527-41b8-971c-eca55e513254", "cn-north-4", tasks=("worker 0",))


def test_the_window() -> None:
    now = dt.datetime(2026, 11, 29, 20, 0, 30, 123, tzinfo=dt.UTC)
    assert window("2h", None, None, now) == ("2026-11-29T18:00:30Z", "2026-11-29T20:00:30Z")
    assert window(None, "2026-11-30T02:00:00+08:00", "2026-11-29T19:00:00Z") == (
        "2026-11-29T18:00:00Z",
        "2026-11-29T19:00:00Z",
    )
    for since, start, end, message in [
        ("2h", "2026-11-29T18:00:00Z", None, "not both"),
        (None, "2026-11-29T18:00:00Z", None, "go together"),
        ("two hours", None, None, "not a duration"),
        (None, "2026-11-29T18:00:00", "2026-11-29T19:00:00Z", "needs a zone"),
        (None, "2026-11-29T19:00:00Z", "2026-11-29T18:00:00Z", "after --start"),
    ]:
        with pytest.raises(UsageError, match=message):
            window(since, start, end)


def test_output_names_from_urls() -> None:
    url = "https://b.obs.cn-north-4.myhuaweicloud.com/x/modelarts-job-j-worker-0-10.0.0.1-1.log?AccessKeyId=A&Signature=S"
    assert url_file_name(url) == "modelarts-job-j-worker-0-10.0.0.1-1.log"
    assert url_file_name("https://b/x/..%2Fescape.log?x") is None
    assert url_file_name("https://b/x/listing?x") is None
    step = Step(
        "obs",
        "obs",
        ("curl", Capture(("hcloud", "x"))),
        "m/log/fallback.log",
        "w",
        "p",
        1,
        name_from_url=True,
    )
    assert output_of(step, url) == "m/log/modelarts-job-j-worker-0-10.0.0.1-1.log"
    assert output_of(step, "https://b/?") == "m/log/fallback.log"


def test_steps_and_plans_refuse_unsafe_names() -> None:
    with pytest.raises(ValueError, match="id"):
        Step("Bad Id", "s", ("kubectl",), "a.json", "w", "p", 1)
    with pytest.raises(ValueError, match="plain path"):
        Step("ok", "s", ("kubectl",), "../a.json", "w", "p", 1)
    one = Step("a", "s", ("kubectl",), "a.json", "w", "p", 1)
    with pytest.raises(ValueError, match="written twice"):
        Plan("gke", {}, None, (one, Step("b", "s", ("kubectl",), "a.json", "w", "p", 1)), 1)
