"""Culprits that no row ties to a host: the subject a row names or was written by (a rank, a
task, a pod), said as the rows write it, and the words for an undetermined culprit."""

from __future__ import annotations

import polars as pl

from analyzer.diagnose import subjects
from analyzer.diagnose.draft import Claim, Context, CulpritDraft, message, said
from analyzer.diagnose.findings import CulpritKind, Message, SubjectKind


def undetermined() -> CulpritDraft:
    """The culprit when nothing names one."""
    return CulpritDraft(
        "undetermined",
        "not determined",
        None,
        [],
        subject_message=message("subject.undetermined"),
    )


def kind_message(kind: str) -> Message:
    """A subject kind (task, rank, pod…) as a catalogue message."""
    return message(f"kind.{kind}")


def how_of(subject: subjects.Subject) -> Message | str:
    return subject.how_message or message("how.writer")


def writer(row: dict[str, object]) -> subjects.Subject | None:
    """The subject that wrote a row without a host: its rank (torch_npu's ``RankID:3``, a
    ``[rank3]:`` prefix of a pasted log), its worker (a ModelArts task, a TPU worker of a
    Cloud Logging entry) or its pod."""
    if row.get("rank") is not None:
        return subjects.Subject(str(row["rank"]), None, "the row's writer", "rank")
    if row.get("worker") is not None:
        # Only a pasted log's worker column holds a rank (the ``[rankN]:`` prefix).
        kind: SubjectKind = "rank" if row.get("source") == "text" else "worker"
        return subjects.Subject(str(row["worker"]), None, "the row's writer", kind)
    if row.get("pod") is not None:
        return subjects.Subject(str(row["pod"]), None, "the row's writer", "pod")
    return None


def reporter(context: Context, row: dict[str, object]) -> subjects.Subject | None:
    """The rank of the line just before ``row`` in its file when that line is torch_npu's
    report of the CANN error ``row`` states (``[ERROR] … (PID:…, Device:3, RankID:3) ERR02200
    …`` then ``EJ0001: …``): the error is that rank's."""
    before = (
        context.data.rows()
        .filter(
            (pl.col("row_id") == int(str(row["row_id"])) - 1)
            & (pl.col("file_id") == row["file_id"])
            & (pl.col("reader").cast(pl.String) == "modelarts.torch_npu")
        )
        .select(pl.col("extra").str.json_path_match("$.rank").cast(pl.Int32, strict=False))
        .collect()
    )
    if before.height == 0 or before.item() is None:
        return None
    return subjects.Subject(str(before.item()), None, "the row's writer", "rank")


def named_subject(
    context: Context,
    row: dict[str, object],
    unmapped: list[subjects.Subject],
    cited: list[int],
) -> CulpritDraft:
    """The culprit when the first error names its subject (or was written by one) and no row
    of the case ties that subject to a host: the subject itself, as the row writes it."""
    first = unmapped[0]
    words = {"task": "task", "worker": "worker", "rank": "rank", "pod": "pod", "node": "node"}
    label = words.get(first.kind, "host" if first.kind == "host" else "address")
    shown = said(
        "subject.named",
        f"{label} {first.name}",
        kind=message(f"label.{label}"),
        name=first.name,
    )
    if len(unmapped) > 1:
        shown = said(
            "subject.named.more",
            f"{shown.text} (and {len(unmapped) - 1} more named on the same row)",
            **shown.message.params,
            more=len(unmapped) - 1,
        )
    kind: CulpritKind = "subject"
    return CulpritDraft(
        kind, shown.text, None, cited, None, (first.kind, first.name), shown.message
    )


def unmapped_claim(unmapped: list[subjects.Subject], row_ids: list[int]) -> Claim:
    names = ", ".join(f"{s.kind} {s.name!r}" for s in unmapped)
    params: dict[str, str | int | float | Message] = {
        "names": names,
        "kind": kind_message(unmapped[0].kind),
        "first": repr(unmapped[0].name),
        "count": len(unmapped),
    }
    if unmapped[0].how == "the row's writer":
        text = f"The row was written by {names}; no row of the case ties it to a host."
        key = "claim.unmapped_writer"
    else:
        text = f"The rows name {names} as the one at fault; no row of the case ties it to a host."
        key = "claim.unmapped_named"
    return Claim(text, "observed", None, list(dict.fromkeys(row_ids)), message(key, **params))
