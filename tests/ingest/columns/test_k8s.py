"""Lines of ``kubectl describe`` output name the pod or node of their block."""

from __future__ import annotations

import polars as pl

from analyzer.ingest.columns.k8s import describe_subjects

POD = """Name:           ebaogi-bff-app-955968dbb-ktnnx
Namespace:      ebaogi
Node:           xen15-142/10.0.0.7
Status:         Failed
Reason:         Evicted
Message:        The node was low on resource: ephemeral-storage.

Name:         operate
Roles:        master
Taints:       <none>
Conditions:
  OutOfDisk  Unknown  NodeStatusUnknown  Kubelet stopped posting node status.
Name:          torch
Version:       2.3.0
Summary:       Tensors and Dynamic neural networks in Python"""


def _subjects(text: str, **given: list[str | None]) -> pl.DataFrame:
    lines = text.split("\n")
    frame = pl.DataFrame(
        {
            "text": lines,
            "grammar": given.get("grammar", [None] * len(lines)),
            "pod": given.get("pod", [None] * len(lines)),
            "host": given.get("host", [None] * len(lines)),
            "batch_file": [0] * len(lines),
        },
        schema={
            "text": pl.String,
            "grammar": pl.String,
            "pod": pl.String,
            "host": pl.String,
            "batch_file": pl.Int32,
        },
    )
    return describe_subjects(frame.lazy()).collect()


def test_a_pod_block_names_its_pod_and_node_a_node_block_its_node() -> None:
    rows = _subjects(POD).with_row_index("n")
    evicted = rows.filter(pl.col("text").str.starts_with("Reason:")).row(0, named=True)
    assert (evicted["pod"], evicted["host"]) == ("ebaogi-bff-app-955968dbb-ktnnx", "xen15-142")
    condition = rows.filter(pl.col("text").str.contains("OutOfDisk")).row(0, named=True)
    assert (condition["pod"], condition["host"]) == (None, "operate")


def test_a_name_line_of_something_else_names_nothing() -> None:
    rows = _subjects(POD)
    pip = rows.filter(pl.col("text").str.starts_with("Summary:")).row(0, named=True)
    assert (pip["pod"], pip["host"]) == (None, None)


def test_a_line_that_names_its_own_subject_keeps_it() -> None:
    lines = POD.split("\n")
    own: list[str | None] = [None] * len(lines)
    own[4] = "node-from-the-event"
    rows = _subjects(POD, host=own)
    assert rows["host"][4] == "node-from-the-event"
    assert rows["host"][3] == "xen15-142"


def test_blocks_do_not_run_from_one_file_into_the_next() -> None:
    lines = [*POD.split("\n")[:3], "  Warning  Failed  5m  kubelet  Error: ErrImagePull"]
    frame = pl.DataFrame(
        {
            "text": lines,
            "grammar": [None] * 4,
            "pod": [None] * 4,
            "host": [None] * 4,
            "batch_file": [0, 0, 0, 1],
        },
        schema={
            "text": pl.String,
            "grammar": pl.String,
            "pod": pl.String,
            "host": pl.String,
            "batch_file": pl.Int32,
        },
    )
    rows = describe_subjects(frame.lazy()).collect()
    assert rows["pod"].to_list()[:3] == ["ebaogi-bff-app-955968dbb-ktnnx"] * 3
    assert rows["pod"][3] is None


def test_an_event_table_takes_its_pod_and_node_from_the_scheduled_event() -> None:
    table = [
        "Events:",
        "  Type     Reason     Age   From               Message",
        "  Normal   Scheduled  18m   default-scheduler  Successfully assigned ns/web-7c8f to node-4",
        "  Warning  BackOff    4m    kubelet            Back-off restarting failed container",
        "some other line that mentions nothing",
    ]
    grammar: list[str | None] = [
        None,
        None,
        "kubectl_describe_event",
        "kubectl_describe_event",
        None,
    ]
    rows = _subjects("\n".join(table), grammar=grammar)
    assert rows["pod"].to_list() == [None, None, "web-7c8f", "web-7c8f", None]
    assert rows["host"].to_list() == [None, None, "node-4", "node-4", None]


def test_text_without_blocks_or_event_tables_is_left_as_it_is() -> None:
    given = {"pod": [None, "p-0"], "host": ["h", None], "grammar": ["absl", None]}
    rows = _subjects("I1129 17:40:00.050537 1 train.py:211] step\nName: x y", **given)
    assert rows["pod"].to_list() == given["pod"]
    assert rows["host"].to_list() == given["host"]
    assert rows.columns == ["text", "grammar", "pod", "host", "batch_file"]
