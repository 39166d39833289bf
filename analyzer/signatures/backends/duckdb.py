"""The SQL backend: the catalogue as one DuckDB query over the case's Parquet (RE2 regexes).

The query has the same three steps as the polars backend:

1. **Prefilter** (``cand``): ``regexp_matches`` with an alternation of every anchor (the
   case-insensitive signatures' anchors inside ``(?i:…)``), which RE2 runs as one DFA pass
   (a very large catalogue is cut into a few alternations: :data:`PREFILTER_CHARS`). RE2
   folds case beyond ASCII, so this step may keep a few rows too many; step 2 is exact.
2. **Candidates**: per signature, its sources and the contract's anchor test (``contains``
   on the message, or on the message with ASCII letters lower-cased for a case-insensitive
   signature).
3. **Regex**: ``regexp_matches`` with the signature's regex (translated for RE2 by
   :func:`~analyzer.signatures.dialect.translate`), captures by ``regexp_extract`` with the
   named groups as a name list (the translation leaves them the only capturing groups, so
   their positions are their order), written as the canonical captures JSON in SQL.
   DuckDB gives ``''`` for a group that did not take part: the contract drops empty
   captures anyway.

Steps 2 and 3 are one ``SELECT`` per signature over ``cand``, glued with ``UNION ALL``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import polars as pl

from analyzer.errors import SignatureError
from analyzer.signatures.compile import (
    MATCHES_SCHEMA,
    Compiled,
    CompiledCatalogue,
    empty_matches,
)
from analyzer.signatures.dialect import UnportableRegex, ascii_lower, translate

if TYPE_CHECKING:
    import duckdb

#: Characters of anchor alternation per prefilter regex. RE2 runs an alternation of literals
#: as one lazily built DFA; past its memory budget it falls back to a far slower engine
#: (measured: 300 anchors of 30 random letters cost 0.1 s per 200k rows, 1,000 of them 22 s).
#: One pass per regex, so the fewer the better: today's ~300 anchors (8,300 characters) fit
#: in one.
PREFILTER_CHARS: Final = 12_000
#: Characters RE2 treats specially outside a class (escaped to match themselves).
_RE2_META: Final = frozenset("\\.+*?()|[]{}^$")
_ASCII_UPPER: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ASCII_LOWER: Final = "abcdefghijklmnopqrstuvwxyz"
#: How :func:`json.dumps` writes the control characters it does not write as ``\\u00XX``.
_JSON_ESCAPES: Final = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def _literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _re2_escape(text: str) -> str:
    return "".join("\\" + c if c in _RE2_META else c for c in text)


def _connection() -> duckdb.DuckDBPyConnection:
    # Imported here: the default backend is polars, and an analysis need not load DuckDB.
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    return connection


@functools.lru_cache(maxsize=1)
def _checker() -> duckdb.DuckDBPyConnection:
    return _connection()


def compile_error(pattern: str) -> str | None:
    """Why RE2 (as DuckDB uses it) rejects ``pattern`` once translated, or None."""
    import duckdb

    try:
        translated = translate(pattern, "re2")
        _checker().execute(f"SELECT regexp_matches('', {_literal(translated)})").fetchall()
    except (UnportableRegex, duckdb.Error) as exc:
        return str(exc).strip().removeprefix("Invalid Input Error: ")
    return None


def _json_string(value: str) -> str:
    """SQL for ``value`` as a JSON string literal, escaped exactly as :func:`json.dumps`
    (``ensure_ascii=False``) does: backslash first, then the quote and control characters."""
    sql = f"replace(replace({value}, '\\', '\\\\'), '\"', '\\\"')"
    for code in range(0x20):
        escaped = _JSON_ESCAPES.get(code, "\\u%04x" % code)  # noqa: UP031
        sql = f"replace({sql}, chr({code}), {_literal(escaped)})"
    return f"('\"' || {sql} || '\"')"


def _captures_list(groups: Sequence[str]) -> str:
    """SQL for the (name, value) list of the groups' captures, in name order (every branch
    gives this one type, so the JSON is written once, after the ``UNION ALL``)."""
    if not groups:
        return "[]::STRUCT(k VARCHAR, v VARCHAR)[]"
    pairs = [
        f"{{'k': {_literal(name)}, 'v': struct_extract(c, {_literal(name)})}}"
        for name in sorted(groups)
    ]
    return "[" + ", ".join(pairs) + "]"


#: The canonical captures JSON of a ``caps`` list: non-empty values, in name order.
_CAPTURES_JSON: Final = (
    "'{' || array_to_string(list_transform(list_filter(caps, lambda x: x.v <> ''), "
    "lambda x: '\"' || x.k || '\":' || " + _json_string("x.v") + "), ',') || '}'"
)


def _anchor_test(signature: Compiled) -> str:
    if signature.case_insensitive:
        tests = [f"contains(folded, {_literal(ascii_lower(a))})" for a in signature.anchors]
    else:
        tests = [f"contains(message, {_literal(a)})" for a in signature.anchors]
    return "(" + " OR ".join(tests) + ")"


def _branch(signature: Compiled) -> str:
    regex = _literal(translate(signature.regex, "re2"))
    sources = ", ".join(_literal(s) for s in signature.sources)
    where = (
        f"source IN ({sources}) AND {_anchor_test(signature)} AND regexp_matches(message, {regex})"
    )
    code, role = _literal(signature.code), _literal(signature.role)
    head = f"SELECT row_id, {code} AS signature, {role} AS role"
    if not signature.groups:
        return f"{head}, {_captures_list(())} AS caps FROM cand WHERE {where}"
    names = "[" + ", ".join(_literal(g) for g in signature.groups) + "]"
    return (
        f"{head}, {_captures_list(signature.groups)} AS caps FROM ("
        f"SELECT row_id, regexp_extract(message, {regex}, {names}) AS c FROM cand WHERE {where})"
    )


def _chunks(items: list[str], budget: int) -> list[list[str]]:
    """``items`` in order, cut into runs of at most ``budget`` characters (at least one each)."""
    chunks: list[list[str]] = []
    size = budget
    for item in items:
        if size + len(item) > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += len(item) + 1
    return chunks


#: Where the table the candidates come from goes in the query text: not a ``str.format`` field,
#: because anchors and regexes may hold braces (``{…}`` in a Ray resource dict, ``\d{3}``).
_SOURCE = "\x00source\x00"


@functools.lru_cache(maxsize=8)
def _query(catalogue: CompiledCatalogue) -> tuple[str, str]:
    """The candidates' SELECT list and filter, and the matching query over ``cand``."""
    for signature in catalogue.signatures:
        error = compile_error(signature.regex)
        if error is not None:
            raise SignatureError(f"{signature.code}: the regex does not compile in DuckDB: {error}")
    alternatives = dict.fromkeys(
        f"(?i:{_re2_escape(a)})" if s.case_insensitive else _re2_escape(a)
        for s in catalogue.signatures
        for a in s.anchors
    )
    prefilter = " OR ".join(
        f"regexp_matches(message, {_literal('|'.join(chunk))})"
        for chunk in _chunks(list(alternatives), PREFILTER_CHARS)
    )
    sources = sorted({s for signature in catalogue.signatures for s in signature.sources})
    folded = any(s.case_insensitive for s in catalogue.signatures)
    fold = f"translate(message, '{_ASCII_UPPER}', '{_ASCII_LOWER}')" if folded else "NULL::VARCHAR"
    select = f"row_id, CAST(source AS VARCHAR) AS source, message, {fold} AS folded"
    where = (
        f"CAST(source AS VARCHAR) IN ({', '.join(_literal(s) for s in sources)}) AND ({prefilter})"
    )
    candidates = f"SELECT {select} FROM {_SOURCE} WHERE {where}"
    branches = "\nUNION ALL\n".join(_branch(s) for s in catalogue.signatures)
    matching = (
        f"SELECT row_id, signature, role, {_CAPTURES_JSON} AS captures FROM (\n{branches}\n) "
        "ORDER BY row_id, signature"
    )
    return candidates, matching


def _run(
    connection: duckdb.DuckDBPyConnection, catalogue: CompiledCatalogue, source: str
) -> pl.DataFrame:
    candidates, matching = _query(catalogue)
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE cand AS {candidates.replace(_SOURCE, source)}"
    )
    table = connection.sql(matching).to_arrow_table()
    connection.execute("DROP TABLE cand")
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.cast(dict(MATCHES_SCHEMA))  # type: ignore[arg-type]


def match(catalogue: CompiledCatalogue, rows: pl.DataFrame) -> pl.DataFrame:
    """Matches of a frame with ``row_id``, ``source`` and ``message`` columns."""
    if not catalogue.signatures:
        return empty_matches()
    with _connection() as connection:
        frame = rows.select("row_id", pl.col("source").cast(pl.String), "message")
        connection.register("input_rows", frame.to_arrow())
        return _run(connection, catalogue, "input_rows")


def match_files(catalogue: CompiledCatalogue, files: Sequence[Path]) -> Iterator[pl.DataFrame]:
    """Matches of the canonical rows in ``files`` (Parquet): one query over all of them."""
    if not files or not catalogue.signatures:
        return
    paths = "[" + ", ".join(_literal(str(path)) for path in files) + "]"
    with _connection() as connection:
        yield _run(connection, catalogue, f"read_parquet({paths})")
