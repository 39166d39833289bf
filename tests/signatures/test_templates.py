"""Log templates: the masking, the three tables ``culprit match`` writes beside the matches,
and that every row of the case has its template (nothing lost)."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer import api
from analyzer.case.layout import TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE, TEMPLATES_FILE
from analyzer.signatures import templates as templates_mod
from analyzer.signatures.templates import (
    META_KEY,
    RULES,
    TEMPLATES_FORMAT,
    digits_zeroed,
    error_rank,
    template_expr,
    templated,
    write_templates,
)
from tests.helpers import SAMPLES, check_accounting

TABLES = (TEMPLATES_FILE, TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE)
FIXTURES = Path(__file__).parents[2] / "fixtures"
#: Characters the masking regex and the line handling tell apart, and look-alikes they must
#: not: ASCII and other digits, hex letters, separators of paths, addresses and UUIDs, ASCII
#: and Unicode whitespace, line ends, and multi-byte characters.
MASKED_ALPHABET = "0123456789abcdefABCDEFxyzXYZ_.:+-/\\@%=,~ \t\r\n\x0b\x0c\u00a0\u2003é٣３"


def _templates(*messages: str) -> list[str]:
    frame = pl.DataFrame({"m": list(messages)})
    return frame.select(template_expr(pl.col("m"))).to_series().to_list()


def test_variables_are_masked_and_names_kept() -> None:
    first, second = _templates(
        "rank3 failed on gke-tpu-7 at 0xdeadbeef from 10.0.0.1:8471 in /usr/lib/a.so",
        "rank12 failed on gke-tpu-19 at 0x1f from 10.8.0.9:8476 in /opt/b/c.so",
    )
    assert first == second == "<*> failed on <*> at <*> from <*> in <*>"
    (kept,) = _templates("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: 12 GiB")
    assert kept.startswith("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED")


def test_a_traceback_keeps_its_exception_and_a_record_its_first_line() -> None:
    traceback, folded = _templates(
        'Traceback (most recent call last):\n  File "a.py", line 3\nValueError: bad 3\n',
        "Num devices: 4\nwarnings.warn(x)",
    )
    assert traceback == "Traceback (most recent call last): ... ValueError: bad <*>"
    assert folded == "Num devices: <*>"


def test_first_line_cut_before_and_after_the_template_chars() -> None:
    # A line end inside the first TEMPLATE_CHARS characters cuts there; one past them does
    # not matter; no line end at all keeps the whole (cut) message; "\r" is not a line end.
    inside, past, single, carriage, empty, only_end = _templates(
        "é" * 10 + " 7\nsecond",
        "a" * 240 + "\nsecond",
        "one line, rank 4",
        "one\r line",
        "",
        "\n",
    )
    assert inside == "é" * 10 + " <*>"
    assert past == "a" * 240
    assert single == "one line, rank <*>"
    assert carriage == "one line"
    assert empty == only_end == ""


def _zeroed(values: list[str | None]) -> list[str | None]:
    return digits_zeroed(pl.Series("m", values, dtype=pl.String)).to_list()


def test_digits_zeroed_replaces_ascii_digits_only() -> None:
    assert _zeroed(["rank 13 at 10.0.9.1:8471", None, "", "é٣３ 7", "Traceback 42\n9"]) == [
        "rank 00 at 00.0.0.0:0000",
        None,
        "",
        "é٣３ 0",
        "Traceback 00\n0",
    ]
    assert _zeroed([]) == [] and _zeroed([None, None]) == [None, None]


def test_digits_zeroed_reads_slices_and_chunks() -> None:
    # A slice of an Arrow array starts at an offset into its buffers; a series of several
    # chunks is made one.
    sliced = pl.Series("m", pa.array(["x 1", "y 2", None, "z 3"]).slice(1, 3))
    assert digits_zeroed(sliced).to_list() == ["y 0", None, "z 0"]
    chunks = pl.concat([pl.Series("m", ["a 1"]), pl.Series("m", ["b 22", None])], rechunk=False)
    assert chunks.n_chunks() == 2
    assert digits_zeroed(chunks).to_list() == ["a 0", "b 00", None]


@pytest.mark.parametrize("block", [1, 5, 64, 1 << 18])
def test_digits_zeroed_block_by_block(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    # Blocks that cut the text anywhere, a last block shorter than the others.
    monkeypatch.setattr(templates_mod, "ZERO_BLOCK", block)
    messages = [f"é{i} host-{i * 7} 0x{i:x} ٣" * (i % 4) for i in range(300)] + [None]
    expected = [None if m is None else re.sub("[0-9]", "0", m) for m in messages]
    assert _zeroed(messages) == expected


def _same_template_zeroed(messages: list[str]) -> None:
    frame = pl.DataFrame({"m": messages}, schema={"m": pl.String})
    frame = frame.with_columns(digits_zeroed(frame["m"]).alias("k"))
    got = frame.select(template_expr(pl.col("m")).alias("m"), template_expr(pl.col("k")).alias("k"))
    assert got["m"].to_list() == got["k"].to_list()


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    st.lists(
        st.text(alphabet=MASKED_ALPHABET, max_size=300)
        | st.builds(
            lambda tail: "Traceback (most recent call last):\n" + tail, st.text(MASKED_ALPHABET)
        ),
        max_size=20,
    )
)
def test_a_message_and_its_digits_zeroed_have_one_template(messages: list[str]) -> None:
    _same_template_zeroed(messages)


def test_published_logs_and_their_digits_zeroed_have_one_template() -> None:
    # Every line of the published incidents and the reader samples, and runs of their lines
    # as folded records.
    messages: list[str] = []
    roots = (FIXTURES / "real", FIXTURES / "holdout", SAMPLES)
    for path in sorted(p for root in roots for p in root.rglob("*") if p.is_file()):
        lines = path.read_bytes().decode("utf-8", "replace").split("\n")
        messages += lines
        messages += ["\n".join(lines[i : i + 5]) for i in range(0, len(lines), 3)]
    assert len(messages) > 10_000
    _same_template_zeroed(messages)


def test_templated_masks_each_distinct_message_once_in_row_order() -> None:
    messages = ["b 2 failed", None, "a 1", "b 2 failed", "a 1", None, "c\nd 4", "a 1", "a 23"]
    messages += [
        "Traceback (most recent call last):\nValueError: 3",
        "Traceback\n ValueError: 4 ",
        "",
    ]
    rows = pl.DataFrame(
        {
            "row_id": list(range(len(messages))),
            "ts": [None] * len(messages),
            "host": ["h"] * len(messages),
            "severity": ["ERROR", "INFO"] * (len(messages) // 2),
            "message": messages,
        },
        schema_overrides={"ts": pl.Datetime("ns", "UTC"), "message": pl.String},
    )
    got = templated(rows)
    # The same as masking every row on its own.
    expected = rows.with_columns(template_expr(pl.col("message")).alias("template")).with_columns(
        pl.col("template").hash(seed=26).alias("template_id"),
        error_rank(pl.col("severity"), pl.col("template")).alias("error_rank"),
    )
    assert got.equals(expected)
    assert got["row_id"].to_list() == list(range(len(messages)))
    assert got["template"].to_list() == [
        "b <*> failed",
        "",
        "a <*>",
        "b <*> failed",
        "a <*>",
        "",
        "c",
        "a <*>",
        "a <*>",
        "Traceback (most recent call last): ... ValueError: <*>",
        "Traceback ... ValueError: <*>",
        "",
    ]


def test_error_rank_puts_plain_statements_first() -> None:
    frame = pl.DataFrame(
        {
            "severity": ["ERROR", "DEFAULT", "ERROR", "INFO", "INFO"],
            "t": ["disk failed", "disk failed", "all good", "FLAG: --fail-swap-on", "ok"],
        }
    )
    ranks = frame.select(error_rank(pl.col("severity"), pl.col("t"))).to_series().to_list()
    assert ranks == [0, 1, 2, 3, None]


def test_the_first_diagnosis_writes_the_tables_and_every_row_has_a_template(
    ingest_case: Callable[..., Path], tmp_path: Path
) -> None:
    log = tmp_path / "train.log"
    lines = [f"step {i} loss {i * 0.1:.2f}" for i in range(50)] + [
        "RuntimeError: NCCL error in rank 3",
        "bad \udcff utf-8 byte",
    ]
    log.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    case = ingest_case(log)
    api.match(case)
    # Matching leaves them to the diagnosis: they do not depend on the catalogue.
    assert not any((case / name).exists() for name in TABLES)
    api.analyze([case])
    accounted = check_accounting(case)
    assert accounted.height
    rows = pl.read_parquet(case / TEMPLATE_ROWS_FILE)
    total = api.load_case(case).meta.counts.rows
    assert total >= 51
    assert rows.height == total and rows["template_id"].null_count() == 0
    templates = pl.read_parquet(case / TEMPLATES_FILE)
    assert templates["rows"].sum() == total
    by_text = dict(zip(templates["template"], templates["rows"], strict=True))
    assert by_text["step <*> loss <*>"] == 50
    error = templates.filter(pl.col("template").str.starts_with("RuntimeError"))
    assert error["error"].to_list() == [True]
    cells = pl.read_parquet(case / TEMPLATE_HOSTS_FILE)
    assert cells["rows"].sum() == total


def _case_rows(tmp_path: Path, messages: list[str]) -> list[Path]:
    rows = tmp_path / "rows"
    rows.mkdir(exist_ok=True)
    path = rows / "part-00000.parquet"
    pl.DataFrame(
        {
            "row_id": list(range(len(messages))),
            "ts": [None] * len(messages),
            "host": ["h"] * len(messages),
            "severity": ["INFO"] * len(messages),
            "message": messages,
        },
        schema_overrides={"ts": pl.Datetime("ns", "UTC")},
    ).write_parquet(path)
    return [path]


def test_tables_made_from_the_same_rows_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _case_rows(tmp_path, ["step 1 done", "step 2 done", "disk failed"])
    assert write_templates(files, tmp_path) == 2
    written = {name: (tmp_path / name).stat().st_mtime_ns for name in TABLES}

    def refuse(rows: pl.DataFrame) -> pl.DataFrame:
        raise AssertionError("templated again")

    monkeypatch.setattr(templates_mod, "templated", refuse)
    # Re-matching the same rows: nothing is read or written again.
    assert write_templates(files, tmp_path) == 2
    assert {name: (tmp_path / name).stat().st_mtime_ns for name in TABLES} == written
    monkeypatch.undo()

    # Other rows (another size and row count): made again.
    files = _case_rows(tmp_path, ["step 1 done", "rank 3 failed", "oom", "oom"])
    assert write_templates(files, tmp_path) == 3
    assert pl.read_parquet(tmp_path / TEMPLATES_FILE)["rows"].sum() == 4


@pytest.mark.parametrize("change", ["rules", "format", "missing", "source"])
def test_tables_of_other_rules_or_rows_are_made_again(tmp_path: Path, change: str) -> None:
    files = _case_rows(tmp_path, ["step 1 done", "disk failed"])
    write_templates(files, tmp_path)
    path = tmp_path / TEMPLATE_HOSTS_FILE
    table = pl.read_parquet(path)
    meta = json.loads(pl.read_parquet_metadata(path)[META_KEY])
    if change == "missing":
        path.unlink()
    else:
        meta[change] = "other" if change != "source" else [["part-00000.parquet", 1, 2]]
        table.write_parquet(path, metadata={META_KEY: json.dumps(meta)})
    before = (tmp_path / TEMPLATES_FILE).stat().st_mtime_ns
    write_templates(files, tmp_path)
    assert (tmp_path / TEMPLATES_FILE).stat().st_mtime_ns != before or change == "missing"
    fresh = json.loads(pl.read_parquet_metadata(path)[META_KEY])
    assert fresh["rules"] == RULES and fresh["format"] == TEMPLATES_FORMAT
    assert fresh["source"] == [["part-00000.parquet", files[0].stat().st_size, 2]]


def _row_file(path: Path, row_ids: list[int], hosts: list[str | None], *, category: bool) -> None:
    count = len(row_ids)
    frame = pl.DataFrame(
        {
            "row_id": row_ids,
            "ts": [
                None if i % 7 == 0 else 1_800_000_000_000_000_000 + i * 17_000_000_000
                for i in row_ids
            ],
            "host": hosts,
            "severity": ["ERROR" if i % 5 == 0 else "INFO" for i in row_ids],
            "message": [
                f"step {i} on {hosts[n]} failed" if i % 3 else "ok" for n, i in enumerate(row_ids)
            ],
        },
        schema_overrides={"ts": pl.Datetime("ns", "UTC")},
    )
    if category:
        frame = frame.with_columns(pl.col("host").cast(pl.Categorical))
    path.parent.mkdir(exist_ok=True)
    frame.write_parquet(path)
    assert count == frame.height


@pytest.mark.parametrize("ordered", [True, False])
def test_tables_of_several_files_are_those_of_their_rows_together(
    tmp_path: Path, ordered: bool
) -> None:
    # Three row files (hosts as categories in two, as text in one; hosts that sort
    # differently as text and as numbers; rows without host or time); in name order their
    # row ids follow one another, or do not.
    hosts = ["h10", "h2", None, "h1", "é", "h2"]
    ids = [list(range(40)), list(range(40, 90)), list(range(90, 100))]
    if not ordered:
        ids = [ids[2], ids[0], ids[1]]
    files = []
    for number, part in enumerate(ids):
        path = tmp_path / "rows" / f"part-{number:05d}.parquet"
        _row_file(path, part, [hosts[i % len(hosts)] for i in part], category=number != 1)
        files.append(path)
    write_templates(files, tmp_path)

    rows = pl.concat(
        [pl.read_parquet(f).with_columns(pl.col("host").cast(pl.String)) for f in files]
    ).sort("row_id")
    rows = rows.with_columns(template_expr(pl.col("message")).alias("template")).with_columns(
        pl.col("template").hash(seed=26).alias("template_id"),
        error_rank(pl.col("severity"), pl.col("template")).alias("error_rank"),
    )
    expected_rows = rows.select("row_id", "template_id", "ts", "host")
    assert pl.read_parquet(tmp_path / TEMPLATE_ROWS_FILE).equals(expected_rows)
    expected_cells = (
        rows.group_by("template_id", "host", pl.col("ts").dt.truncate("60s").alias("bucket"))
        .agg(
            pl.len().cast(pl.Int64).alias("rows"),
            pl.col("row_id").min().alias("first_row"),
            pl.col("row_id").max().alias("last_row"),
            pl.col("ts").min().alias("first_ts"),
            pl.col("ts").max().alias("last_ts"),
        )
        .sort("template_id", "host", "bucket", nulls_last=True)
    )
    cells = pl.read_parquet(tmp_path / TEMPLATE_HOSTS_FILE)
    assert cells.equals(expected_cells)
    assert cells["host"].null_count() and cells["bucket"].null_count()
    templates = pl.read_parquet(tmp_path / TEMPLATES_FILE)
    assert templates["rows"].sum() == 100
    assert templates["first_row"].to_list() == sorted(templates["first_row"].to_list())


def _spread_rows(seed: int, host_type: pl.DataType) -> pl.DataFrame:
    """Templated rows over a few templates, hosts (one null) and minutes (one null time)."""
    rng = random.Random(seed)
    hosts = ["h-b", "h-a", "h-c", None]
    rows = [
        {
            "row_id": i,
            "template_id": rng.choice([7, 3, 2**63 + 5]),
            "ts": None
            if i % 17 == 0
            else dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
            + dt.timedelta(seconds=rng.randrange(0, 3600)),
            "host": rng.choice(hosts),
        }
        for i in range(400)
    ]
    return pl.DataFrame(
        rows,
        schema={
            "row_id": pl.Int64,
            "template_id": pl.UInt64,
            "ts": pl.Datetime("ns", "UTC"),
            "host": pl.String,
        },
    ).with_columns(pl.col("host").cast(host_type))


@pytest.mark.parametrize("host_type", [pl.Categorical(), pl.String()])
@pytest.mark.parametrize("bits", [63, 4])
def test_cells_are_sorted_by_template_host_name_and_bucket_nulls_last(
    bits: int, host_type: pl.DataType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 4 bits: the packed key does not fit, and the cells are sorted on their columns. Text
    # hosts: row files that disagree on the host's type are read as text.
    monkeypatch.setattr(templates_mod, "_ORDER_BITS", bits)
    cells = templates_mod._cells(_spread_rows(1, host_type))
    expected = cells.sort("template_id", "host", "bucket", nulls_last=True)
    assert cells.equals(expected)
    assert cells.schema["host"] == pl.String
    assert cells["rows"].sum() == 400


def test_keys_with_one_hash_fall_back_to_their_text(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = pl.DataFrame(
        {
            "row_id": [0, 1, 2, 3, 4],
            "ts": [None] * 5,
            "host": ["h"] * 5,
            "severity": ["INFO", "ERROR", "INFO", "INFO", None],
            "message": ["step 1 done", "disk failed", "step 22 done", None, "disk failed"],
        },
        schema_overrides={"ts": pl.Datetime("ns", "UTC")},
    )
    expected = templated(rows)
    # Every key hashes alike: the rows must find their template by its text.
    monkeypatch.setattr(templates_mod, "_key_hash", lambda keys: pl.Series([0] * len(keys)))
    assert templated(rows).equals(expected)
    assert expected["template"].to_list()[:3] == ["step <*> done", "disk failed", "step <*> done"]
