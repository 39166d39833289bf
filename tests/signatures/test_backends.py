"""Every backend gives the same matches table: over every example of the catalogue, and over
small synthetic signatures that pin down each rule of the matching contract."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import tomli_w

from analyzer.errors import SignatureError, UsageError
from analyzer.schema import SOURCES
from analyzer.signatures import catalog
from analyzer.signatures.backends import BACKENDS, backend_named
from analyzer.signatures.compile import (
    MATCHES_SCHEMA,
    CompiledCatalogue,
    captures_json,
    compile_catalogue,
)
from analyzer.signatures.model import Signature

ROWS_SCHEMA = {"row_id": pl.Int64, "source": pl.String, "message": pl.String}


def _run_all(catalogue: CompiledCatalogue, rows: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return {backend.name: backend.match_frame(catalogue, rows) for backend in BACKENDS}


def _same(results: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The one table every backend gave (fails naming the backend that differs)."""
    reference = results["python"]
    assert reference.schema == MATCHES_SCHEMA
    for name, table in results.items():
        assert table.schema == MATCHES_SCHEMA, name
        assert table.to_dicts() == reference.to_dicts(), f"{name} differs from python"
    return reference


# -- (a) every example of every signature of the catalogue -------------------------------------


def _catalogue_entries() -> tuple[catalog.Entry, ...]:
    try:
        return catalog.load().entries
    except SignatureError:
        return ()  # test_catalog reports why it does not load


ENTRIES = _catalogue_entries()


def _other_source(signature: Signature) -> str | None:
    return next((s for s in SOURCES if s not in signature.sources), None)


@pytest.fixture(scope="module")
def example_matches() -> tuple[pl.DataFrame, dict[str, list[dict[str, Any]]]]:
    """Every example and counter-example of the catalogue as rows (once per source of its
    signature, and once with a source it does not read), matched by every backend at once:
    the rows, and each backend's matches grouped by row."""
    rows: list[dict[str, Any]] = []
    for entry in ENTRIES:
        signature = entry.signature
        lines = [("example", i, e.line) for i, e in enumerate(signature.examples)]
        lines += [("counter", i, c.line) for i, c in enumerate(signature.counter_examples)]
        for kind, index, line in lines:
            for source in (*signature.sources, _other_source(signature)):
                if source is not None:
                    rows.append(
                        {
                            "row_id": len(rows),
                            "source": source,
                            "message": line,
                            "code": signature.code,
                            "kind": kind,
                            "index": index,
                            "in_sources": source in signature.sources,
                        }
                    )
    frame = pl.DataFrame(rows)
    compiled = compile_catalogue(tuple(entry.signature for entry in ENTRIES))
    results = _run_all(compiled, frame.select(list(ROWS_SCHEMA)).cast(ROWS_SCHEMA))  # type: ignore[arg-type]
    return frame, {name: table.to_dicts() for name, table in results.items()}


@pytest.mark.parametrize("code", [entry.signature.code for entry in ENTRIES])
def test_every_example_under_every_backend(
    code: str, example_matches: tuple[pl.DataFrame, dict[str, list[dict[str, Any]]]]
) -> None:
    frame, results = example_matches
    signature = next(e.signature for e in ENTRIES if e.signature.code == code)
    mine = frame.filter(pl.col("code") == code)
    ids = set(mine["row_id"].to_list())
    by_backend = {name: [m for m in table if m["row_id"] in ids] for name, table in results.items()}
    for name, found in by_backend.items():
        assert found == by_backend["python"], f"{code}: {name} differs from python"
    own = {m["row_id"]: m for m in by_backend["python"] if m["signature"] == code}
    for row in mine.iter_rows(named=True):
        what = f"{code} {row['kind']} {row['index'] + 1} as {row['source']}"
        if row["kind"] == "example" and row["in_sources"]:
            assert row["row_id"] in own, f"{what} does not match"
            example = signature.examples[row["index"]]
            expected = captures_json(dict(example.captures))
            assert own[row["row_id"]]["captures"] == expected, what
            assert own[row["row_id"]]["role"] == signature.role
        else:
            assert row["row_id"] not in own, f"{what} matches"


# -- (b) the contract on small synthetic signatures --------------------------------------------


def _signature(code: int, regex: str, anchors: Sequence[str], **fields: Any) -> dict[str, Any]:
    return {
        "code": f"COORD-T-{code:03d}",
        "name": f"test-signature-{code}",
        "title": "A test signature",
        "family": "coordination",
        "knowledge": "jax-coordination-heartbeat-timeout",
        "sources": fields.pop("sources", ["text"]),
        "role": fields.pop("role", "root"),
        "scope": "host",
        "culprit": "emitter",
        "severity": "error",
        "anchors": list(anchors),
        "regex": regex,
        "examples": [{"line": fields.pop("example", anchors[0])}],
        "counter_examples": [{"line": "nothing to see", "why": "unrelated"}],
        **fields,
    }


@pytest.fixture
def synthetic(tmp_path: Path) -> Callable[..., CompiledCatalogue]:
    """Write signatures into an extra folder and load only that folder."""

    def load(*signatures: dict[str, Any]) -> CompiledCatalogue:
        root = tmp_path / "extra"
        for data in signatures:
            path = root / data["family"] / f"{data['name']}.toml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(tomli_w.dumps(data), encoding="utf-8")
        return compile_catalogue(catalog.load(extra=[root], builtin=False))

    return load


def _rows(*rows: tuple[str, str]) -> pl.DataFrame:
    """(source, message) pairs as rows with ids 0, 1, …"""
    data = [(index, source, message) for index, (source, message) in enumerate(rows)]
    return pl.DataFrame(data, schema=ROWS_SCHEMA, orient="row")


def _found(catalogue: CompiledCatalogue, rows: pl.DataFrame) -> list[tuple[int, int, Any]]:
    """(row_id, code number, captures) of the matches, once every backend agreed."""
    table = _same(_run_all(catalogue, rows))
    return [
        (m["row_id"], int(m["signature"][-3:]), json.loads(m["captures"])) for m in table.to_dicts()
    ]


def test_anchors_gate_the_regex(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(_signature(1, r"widget (?P<n>\d+)", ["gadget", "gizmo"]))
    rows = _rows(
        ("text", "widget 7"),  # the regex matches, but no anchor: not a candidate
        ("text", "gadget: widget 7"),
        ("text", "widget 8 gizmo"),
        ("text", "GADGET: widget 9"),  # anchors are case-sensitive here
    )
    assert _found(catalogue, rows) == [(1, 1, {"n": "7"}), (2, 1, {"n": "8"})]


def test_overlapping_anchors_reach_every_signature(
    synthetic: Callable[..., CompiledCatalogue],
) -> None:
    catalogue = synthetic(
        _signature(1, r"heartbeat timeout", ["heartbeat timeout"]),
        _signature(2, r"beat timeout after (?P<s>\d+)s", ["timeout"]),
        _signature(3, r"art", ["heart"]),
    )
    rows = _rows(("text", "heartbeat timeout after 10s"), ("text", "timeout after 3s"))
    assert _found(catalogue, rows) == [(0, 1, {}), (0, 2, {"s": "10"}), (0, 3, {})]


def test_braces_in_anchors_and_regexes(synthetic: Callable[..., CompiledCatalogue]) -> None:
    # A Ray resource request is a dict: braces in an anchor must not break any backend's query.
    catalogue = synthetic(
        _signature(1, r"cannot be scheduled right now: \{'(?P<resource>\w+)'", ["right now: {'"]),
        _signature(2, r"code \{(?P<n>\d{3})\}", ["code {"]),
    )
    rows = _rows(
        ("text", "The following resource request cannot be scheduled right now: {'TPU': 4.0}"),
        ("text", "error code {503}"),
        ("text", "code 503 without braces"),
    )
    assert _found(catalogue, rows) == [(0, 1, {"resource": "TPU"}), (1, 2, {"n": "503"})]


def test_sources_filter(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(
        _signature(1, r"node (?P<node>\S+) not ready", ["not ready"], sources=["kubelet"])
    )
    rows = _rows(
        ("kubelet", "node n-1 not ready"),
        ("text", "node n-2 not ready"),
        ("cloud_logging", "node n-3 not ready"),
    )
    assert _found(catalogue, rows) == [(0, 1, {"node": "n-1"})]


def test_case_insensitive_signatures(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(
        _signature(1, r"(?i)disk (?P<dev>sd[a-z]) failed", ["Disk"], example="disk sda failed"),
        _signature(2, r"(?i)kernel panic", ["kernel panic"]),
        _signature(3, r"Kernel (?P<word>\w+)", ["Kernel"]),
    )
    rows = _rows(
        ("text", "DISK SDB FAILED"),
        ("text", "Disk sdc Failed"),
        ("text", "\u212aernel panic"),  # KELVIN SIGN: not a k in ASCII folding
        ("text", "kernel PANIC"),
        ("text", "KERNEL oops"),  # signature 3 is case-sensitive
        ("text", "disk s\u212a failed"),
    )
    assert _found(catalogue, rows) == [
        (0, 1, {"dev": "SDB"}),
        (1, 1, {"dev": "sdc"}),
        (3, 2, {}),
    ]


def test_ascii_classes(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(
        _signature(1, r"code (?P<n>\d+)", ["code"]),
        _signature(2, r"user (?P<u>\w+)", ["user"]),
        _signature(3, r"\bfoo\b", ["foo"]),
        _signature(4, r"a\sb", ["a"]),
    )
    rows = _rows(
        ("text", "code \u0663"),  # ARABIC-INDIC DIGIT THREE is no \d
        ("text", "code 3\u0663"),
        ("text", "user josé"),
        ("text", "éfoo"),  # é is no \w, so there is a boundary
        ("text", "a\x0bb"),  # \s has no vertical tab
        ("text", "a\u00a0b"),
        ("text", "a\tb"),
    )
    assert _found(catalogue, rows) == [
        (1, 1, {"n": "3"}),
        (2, 2, {"u": "jos"}),
        (3, 3, {}),
        (6, 4, {}),
    ]


def test_absent_and_empty_groups_are_dropped(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(
        _signature(1, r"(?P<a>x)?y(?P<b>z)?", ["y"]),
        _signature(2, r"id=(?P<id>\w*);(?P<rest>.*)", ["id="]),
        _signature(3, r"(left|right)-(?P<side>\d)", ["-"]),
    )
    rows = _rows(
        ("text", "y"),
        ("text", "yz"),
        ("text", "id=;"),
        ("text", "id=7;more"),
        ("text", "right-2"),
    )
    assert _found(catalogue, rows) == [
        (0, 1, {}),
        (1, 1, {"b": "z"}),
        (2, 2, {}),
        (3, 2, {"id": "7", "rest": "more"}),
        (4, 3, {"side": "2"}),
    ]


def test_leftmost_match_gives_the_captures(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(_signature(1, r"task (?P<task>\d+) (?P<state>up|down)", ["task"]))
    rows = _rows(("text", "task 1 down, task 2 up"))
    assert _found(catalogue, rows) == [(0, 1, {"state": "down", "task": "1"})]


def test_multi_line_messages(synthetic: Callable[..., CompiledCatalogue]) -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "ValueError: boom\n"
    )
    catalogue = synthetic(
        _signature(1, r"^ValueError", ["ValueError"]),
        _signature(2, r"(?m)^(?P<error>\w+Error): (?P<text>.*)$", ["Error: "]),
        _signature(3, r"Traceback.*ValueError", ["Traceback"]),
        _signature(4, r"(?s)Traceback.*line (?P<line>\d+)", ["Traceback"]),
        _signature(5, r"boom$", ["boom"]),
        _signature(6, r"Traceback[\s\S]*?(?P<file>\w+\.py)", ["Traceback"]),
    )
    rows = _rows(("text", traceback))
    assert _found(catalogue, rows) == [
        (0, 2, {"error": "ValueError", "text": "boom"}),
        (0, 4, {"line": "3"}),
        (0, 6, {"file": "train.py"}),
    ]


def test_captures_are_escaped_as_json(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(_signature(1, r"(?s)value=(?P<value>.*)", ["value="]))
    tricky = 'quote " backslash \\ tab \t nl \n ctl \x01\x1f del \x7f é 😀 \u2028 /'
    rows = _rows(("text", "value=" + tricky))
    table = _same(_run_all(catalogue, rows))
    assert table["captures"].to_list() == [captures_json({"value": tricky})]
    assert json.loads(table["captures"][0]) == {"value": tricky}


def test_several_signatures_on_a_row_sort_by_code(
    synthetic: Callable[..., CompiledCatalogue],
) -> None:
    catalogue = synthetic(
        _signature(2, r"out of memory", ["memory"], role="root"),
        _signature(1, r"(?P<what>\w+) memory", ["memory"], role="context"),
    )
    rows = _rows(("text", "no match here"), ("text", "out of memory"))
    table = _same(_run_all(catalogue, rows))
    assert table.select("row_id", "signature", "role").rows() == [
        (1, "COORD-T-001", "context"),
        (1, "COORD-T-002", "root"),
    ]


def test_no_candidates_and_no_rows(synthetic: Callable[..., CompiledCatalogue]) -> None:
    catalogue = synthetic(_signature(1, r"widget", ["widget"]))
    assert _found(catalogue, _rows(("text", "nothing"))) == []
    assert _found(catalogue, _rows()) == []
    assert _found(CompiledCatalogue(()), _rows(("text", "widget"))) == []


def test_a_backend_module_is_imported_when_first_used() -> None:
    # A fresh interpreter: this one has imported every backend already.
    code = (
        "import sys\n"
        "from analyzer.signatures.backends import backend_named\n"
        "prefix = 'analyzer.signatures.backends.'\n"
        "before = sorted(m for m in sys.modules if m.startswith(prefix))\n"
        "backend = backend_named('python')\n"
        "assert backend.match_frame.__module__ == prefix + 'python'\n"
        "print(before, sorted(m for m in sys.modules if m.startswith(prefix)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = ast.literal_eval(done.stdout.strip().replace("] [", "], ["))
    assert before == []
    assert after == ["analyzer.signatures.backends.python"]


def test_unknown_backend_lists_the_known_ones() -> None:
    with pytest.raises(UsageError, match="known: polars, duckdb, python"):
        backend_named("spark")
    assert [b.name for b in BACKENDS] == ["polars", "duckdb", "python"]


def test_duckdb_prefilter_cut_into_several_regexes(
    synthetic: Callable[..., CompiledCatalogue], monkeypatch: pytest.MonkeyPatch
) -> None:
    from analyzer.signatures.backends import duckdb as duckdb_backend

    monkeypatch.setattr(duckdb_backend, "PREFILTER_CHARS", 12)
    duckdb_backend._query.cache_clear()
    catalogue = synthetic(
        _signature(1, r"alpha (?P<n>\d)", ["alpha"]),
        _signature(2, r"(?i)beta (?P<n>\d)", ["beta", "gamma"], example="beta 1"),
        _signature(3, r"delta", ["delta"]),
    )
    rows = _rows(("text", "alpha 1"), ("text", "BETA 2"), ("text", "delta"), ("text", "none"))
    assert "OR regexp_matches" in duckdb_backend._query(catalogue)[0]
    assert _found(catalogue, rows) == [(0, 1, {"n": "1"}), (1, 2, {"n": "2"}), (2, 3, {})]
    duckdb_backend._query.cache_clear()


def test_a_regex_polars_refuses_is_named_when_it_meets_a_row(
    synthetic: Callable[..., CompiledCatalogue],
) -> None:
    # Accepted by the dialect and by Python's regex, over the Rust regex size limit: polars
    # compiles regexes lazily, so the refusal comes when a candidate row reaches it, and it
    # must name the signature, not surface as a polars error.
    catalogue = synthetic(
        _signature(1, r"widget (?P<n>\d+)", ["widget"]),
        _signature(2, r"gadget (?P<n>\d{1000}){1000}", ["gadget"]),
    )
    polars = backend_named("polars")
    assert polars.match_frame(catalogue, _rows(("text", "widget 7"))).height == 1
    with pytest.raises(SignatureError, match=r"-002: the regex does not compile in polars"):
        polars.match_frame(catalogue, _rows(("text", "widget 7"), ("text", "gadget 1")))


def test_a_regex_the_dialect_refuses_is_named_when_it_meets_a_row() -> None:
    # polars translates a regex for Rust when a candidate row reaches it (translating the
    # whole catalogue up front cost every process 0.14 s): a refusal then names the signature.
    from analyzer.signatures.compile import Compiled

    catalogue = CompiledCatalogue(
        (
            Compiled("T-001", "root", ("text",), ("widget",), False, r"widget (?P<n>\d+)", ("n",)),
            Compiled("T-002", "root", ("text",), ("gadget",), False, r"gadget(?i)x", ()),
        )
    )
    polars = backend_named("polars")
    assert polars.match_frame(catalogue, _rows(("text", "widget 7"))).height == 1
    with pytest.raises(SignatureError, match=r"T-002: the regex does not compile in polars"):
        polars.match_frame(catalogue, _rows(("text", "widget 7"), ("text", "gadget x")))
