"""Inputs the reader fuzzing found (minimized by hypothesis), as plain regression tests.

Each names the sample, the mutations that broke it and what used to happen; the test ingests
the result, checks the accounting like the fuzz test and then what the fix promises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.fuzz.strategies import (
    FAMILIES,
    DeepNesting,
    FlipBytes,
    GiantLine,
    InjectField,
    Mutation,
    ReplaceStamps,
    apply_all,
)
from tests.helpers import check_accounting, read_table

pytestmark = pytest.mark.fuzz

Ingest = Callable[..., Path]
JOB = "job-95f661bd-1527-41b8-971c-eca55e513254"


def _ingest(
    tmp_path: Path, ingest_case: Ingest, family: str, name: str, steps: list[Mutation]
) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """Ingest one mutated sample; its inventory record, rows and quarantine entries."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / name).write_bytes(apply_all(FAMILIES[family][name], steps))
    case = ingest_case(bundle, jobs=1)
    files = check_accounting(case)
    assert files.height == 1
    return files.row(0, named=True), read_table(case, "rows"), read_table(case, "quarantine")


def _reasons(quarantine: pl.DataFrame, kind: str) -> list[str]:
    return quarantine.filter(pl.col("kind") == kind)["reason"].to_list()


def test_json_array_element_with_invalid_utf8(tmp_path: Path, ingest_case: Ingest) -> None:
    """A flipped byte left invalid UTF-8 inside a gcloud array element: the element's text went
    into an Arrow string unchecked and polars panicked (``PyObject pointer is null``)."""
    record, rows, quarantine = _ingest(
        tmp_path, ingest_case, "cloud_logging", "gcloud_events.json", [FlipBytes(((5, 128),))]
    )
    assert record["status"] == "read"
    assert rows.height == record["rows"] > 0
    assert "element is not valid UTF-8; invalid bytes were replaced by U+FFFD" in _reasons(
        quarantine, "kept"
    )


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_line_cut_at_the_cap_inside_a_character(
    tmp_path: Path, ingest_case: Ingest, pad: int
) -> None:
    """A 2 MiB line of 3-byte characters was cut at exactly ``max_line_bytes``, inside a
    character: the row's message was invalid UTF-8 and the case's rows could not be read
    (``String data contained invalid UTF-8``). The cut now falls before the character."""
    giant = GiantLine(1, 2 << 20, "text", True, pad, False)
    record, rows, quarantine = _ingest(tmp_path, ingest_case, "text", "stack_trace.log", [giant])
    assert record["status"] == "read"
    longest = rows.sort(pl.col("message").str.len_bytes(), descending=True).row(0, named=True)
    assert longest["message"].endswith("€")
    assert 1 << 20 >= len(longest["message"].encode()) > (1 << 20) - 64
    assert any("bytes long; the row keeps its first" in r for r in _reasons(quarantine, "kept"))


def test_csv_field_over_the_csv_module_limit(tmp_path: Path, ingest_case: Ingest) -> None:
    """A 2 MiB line in a Logs Explorer CSV: ``_csv.Error: field larger than field limit
    (131072)`` escaped the reader. The record is now quarantined and the rest is read."""
    giant = GiantLine(128, 2 << 20, "json", False, 0, False)
    record, rows, quarantine = _ingest(
        tmp_path, ingest_case, "cloud_logging", "explorer.csv", [giant]
    )
    assert record["status"] == "read"
    assert rows.height == 5  # every record of the sample
    (reason,) = _reasons(quarantine, "dropped")
    assert reason.startswith("CSV record cannot be parsed (field larger than field limit")


def test_journal_entry_without_message(tmp_path: Path, ingest_case: Ingest) -> None:
    """A journal JSON object without MESSAGE in a file where another MESSAGE is null or an
    array: ``AttributeError: 'NoneType' object has no attribute 'startswith'``."""
    steps: list[Mutation] = [DeepNesting(1, 2, "object", True, False)]  # line 2: {"a":{"a":1}}
    record, rows, _ = _ingest(tmp_path, ingest_case, "kubelet", "journal.json", steps)
    assert (record["reader"], record["status"]) == ("kubelet", "read")
    assert rows.filter(pl.col("line") == 2)["message"].to_list() == [""]


def test_journal_message_nested_too_deep(tmp_path: Path, ingest_case: Ingest) -> None:
    """A MESSAGE array holding JSON nested 2,567 deep: DuckDB parses it, Python's json does not
    (``RecursionError``). The message is now the JSON text as it is."""
    steps: list[Mutation] = [DeepNesting(0, 2567, "object", True, True)]
    record, rows, _ = _ingest(tmp_path, ingest_case, "kubelet", "journal.json", steps)
    assert record["status"] == "read"
    assert rows["message"].str.starts_with('[{"a":{"a":').any()


def test_klog_header_year_beyond_nanoseconds(tmp_path: Path, ingest_case: Ingest) -> None:
    """A flipped bit turned the klog header's year 2026 into 3026: the year anchor became a date
    no nanosecond timestamp can hold and polars failed to cast it (``conversion from `date` to
    `datetime[ns]` failed``). Such a header is now not used for the year."""
    record, rows, _ = _ingest(
        tmp_path, ingest_case, "kubelet", "kubelet.log", [FlipBytes(((21, 1),))]
    )
    assert (record["reader"], record["status"]) == ("kubelet", "read")
    assert record["year_from"] != "header"
    assert rows.height == record["rows"] == 8


@dataclass(frozen=True)
class Replace(Mutation):
    """Replace the first ``old`` by ``new`` (a value where the reader will look for it)."""

    old: bytes
    new: bytes

    def apply(self, data: bytes) -> bytes:
        assert self.old in data
        return data.replace(self.old, self.new, 1)


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        # Found: "17644413001.9999999999" s is in the year 2529, beyond int64 nanoseconds.
        (f"{JOB}-stages.json", [ReplaceStamps("float", 0)]),
        # The same kinds of value where the job row looks.
        (f"{JOB}-details.json", [Replace(b"1795943545678", b"1e400")]),  # infinity
        (f"{JOB}-details.json", [Replace(b"5022000", b"99999999999999999999")]),
        (f"{JOB}-details.json", [Replace(b'"task": "worker-0"', b'"task": "worker-99999999999"')]),
        (f"{JOB}-details.json", [Replace(b"1795943545678", b'"' + b"9" * 5000 + b'"')]),
    ],
    ids=[
        "epoch-beyond-int64",
        "infinity",
        "duration-beyond-int64",
        "worker-beyond-int32",
        "digits",
    ],
)
def test_modelarts_numbers_out_of_range(
    tmp_path: Path, ingest_case: Ingest, name: str, steps: list[Mutation]
) -> None:
    """Numbers no column can hold made ``ModelArtsApiReader`` raise (TypeError from polars,
    OverflowError from ``int(inf)``, ValueError from ``int()`` of 5,000 digits); they are now
    no value, and the row stays."""
    record, rows, _ = _ingest(tmp_path, ingest_case, "modelarts", name, steps)
    assert record["status"] == "read"
    assert record["quarantined"] == 0
    assert rows.height == record["records"] > 0


@pytest.mark.parametrize(
    ("family", "name"),
    [("modelarts", f"{JOB}-details.json"), ("diagon", "monitored_events.json")],
)
def test_json_document_number_with_too_many_digits(
    tmp_path: Path, ingest_case: Ingest, family: str, name: str
) -> None:
    """An integer of 5,000 digits in an API document: ``ValueError: Exceeds the limit (4300
    digits)`` escaped the document parser. The document is now one quarantined record."""
    steps: list[Mutation] = [InjectField(0, "duration", b"9" * 5000, False)]
    record, rows, quarantine = _ingest(tmp_path, ingest_case, family, name, steps)
    assert (record["records"], record["quarantined"], rows.height) == (1, 1, 0)
    (reason,) = _reasons(quarantine, "dropped")
    assert "number of 5,000 digits" in reason


@pytest.mark.parametrize(
    ("family", "name"),
    [("modelarts", f"{JOB}-details.json"), ("diagon", "monitored_events.json")],
)
def test_json_document_lone_surrogate_escape(
    tmp_path: Path, ingest_case: Ingest, family: str, name: str
) -> None:
    """A ``"\\ud800"`` escape in an API document: the string cannot be encoded as UTF-8 and
    polars raised ``UnicodeEncodeError``. It is now U+FFFD."""
    steps: list[Mutation] = [InjectField(1, "message", b'"\\ud800 \\udfff\\ud800"', True)]
    record, rows, _ = _ingest(tmp_path, ingest_case, family, name, steps)
    assert record["status"] == "read"
    assert rows.height == record["rows"] > 0
    assert rows["extra"].str.contains("\ufffd \ufffd\ufffd", literal=True).any()


def test_json_line_nested_deeper_than_the_recursion_limit(
    tmp_path: Path, ingest_case: Ingest
) -> None:
    """A JSON-lines export whose first line is an object nested 1,980 deep: telling JSON lines
    from pretty-printed entries parsed that line with Python's ``json`` and the ingest died of
    a ``RecursionError``. It is one entry per line: the line is quarantined by the parser (or
    read), the rest of the file is read."""
    record, rows, _ = _ingest(
        tmp_path,
        ingest_case,
        "cloud_logging",
        "sink_stderr.jsonl",
        [DeepNesting(0, 1980, "object", False, False)],
    )
    assert record["status"] == "read"
    assert record["reader"] == "cloud_logging"
    assert rows.height == record["rows"] > 0
