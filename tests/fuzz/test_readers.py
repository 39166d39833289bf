"""Fuzz every reader: mutated valid samples (:mod:`tests.fuzz.strategies`) never make
``ingest`` raise, and nothing is lost.

One test per reader family (a folder of tests/samples): each example writes every sample of the
family, each under its own name and with its own list of mutations (possibly none), into a
fresh bundle, so every reader of the family gets every example, small files go through the
batched path and files over 1 MiB through the streamed one. Then:

1. ``ingest`` returns (with default limits nothing may raise, not even an ``AnalyzerError``);
2. every file is accounted for (:func:`tests.helpers.check_accounting`), binary files are
   refused only for a NUL byte in their head, and a file read with a line framing has exactly
   as many records as it has lines (:func:`tests.helpers.line_records`).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Final

import pytest
from hypothesis import currently_in_test_context, event, given
from hypothesis import strategies as st

from analyzer import api
from analyzer.ingest.base import SNIFF_BYTES
from tests.fuzz.strategies import FAMILIES, apply_all, mutations
from tests.helpers import check_accounting, decoded_text, line_records

pytestmark = pytest.mark.fuzz

#: Readers whose every framing is lines (``unrecognized`` files are read as text).
_LINE_READERS: Final = frozenset({"text", "unrecognized", "diagon", "modelarts"})


def _pretty_printed(head: bytes) -> bool:
    first, newline, _ = head.partition(b"\n")
    if not newline:
        return False
    try:
        json.loads(first)
    except ValueError:
        return first.strip() in (b"{", b"{\r")
    except RecursionError:
        return False  # a line nested deeper than Python's parser goes is no lone "{"
    return False


def line_framed(reader: str | None, data: bytes) -> bool:
    """Whether the reader frames this (uncompressed) file as lines, decided from its head the
    way the reader does.

    Only there is the record count defined independently of the reader. The other framings
    count what their parser makes of damaged input: elements of a JSON array (a stray bracket
    changes where elements start and end), CSV records (a quote spans lines), journal export
    entries (binary fields hold newlines) and the records of an API document (a document that
    is not valid JSON is one record).
    """
    if reader in _LINE_READERS:
        return True
    head = decoded_text(data)[:SNIFF_BYTES].lstrip()
    if reader == "kubelet":  # klog and journal text, journal JSON lines; not journal export
        return not head.startswith((b"__CURSOR=", b"__REALTIME_TIMESTAMP="))
    if reader == "cloud_logging":  # JSON lines; not a JSON array, a CSV export, nor
        # pretty-printed entries one after another (a first line that is a lone "{")
        return not head or (head[:1] == b"{" and not _pretty_printed(head))
    return False  # diagon_api, modelarts_api: one JSON document


def ingest_and_check(written: dict[str, bytes]) -> int:
    """Ingest the files ``written`` (name -> bytes) as one bundle, check both properties and
    return how many files had their line count checked."""
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "bundle"
        bundle.mkdir()
        for name, content in written.items():
            (bundle / name).write_bytes(content)
        case = Path(tmp) / "case"
        try:
            api.ingest([bundle], case, jobs=1)
        except Exception:
            raise
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            # A Rust panic in polars or pyarrow (pyo3's PanicException is a BaseException):
            # hypothesis only shrinks failures that are Exceptions.
            raise RuntimeError(f"ingest panicked: {type(exc).__name__}: {exc}") from exc
        files = check_accounting(case)
    assert sorted(files["path"].to_list()) == sorted(written)
    counted = 0
    for record in files.iter_rows(named=True):
        content = written[record["path"]]
        if currently_in_test_context():
            event(f"{record['reader']} {record['status']}")
        assert record["status"] in ("read", "partial", "binary"), record
        if record["compression"] != "none":
            continue  # the mutations made a compression magic: decoded bytes are not the file's
        if record["status"] == "binary":
            assert b"\x00" in content[:8192], record
        elif line_framed(record["reader"], content):
            assert record["records"] == line_records(content), record
            counted += 1
    return counted


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_unmutated_samples_pass_the_checks(family: str) -> None:
    """The baseline: the checks hold on the samples as they are (and see line framings)."""
    assert ingest_and_check(dict(FAMILIES[family])) > 0


@pytest.mark.parametrize("family", sorted(FAMILIES))
@given(data=st.data())
def test_mutated_samples_are_ingested_and_accounted_for(family: str, data: st.DataObject) -> None:
    written: dict[str, bytes] = {}
    for name, sample in FAMILIES[family].items():
        steps = data.draw(mutations(), label=name)
        for step in steps:
            event(f"mutation {type(step).__name__}")
        written[name] = apply_all(sample, steps)
    ingest_and_check(written)
