"""The default backend: the whole catalogue over polars frames, in three vectorized steps.

1. **Prefilter.** One alternation of every anchor of the catalogue (Rust's literal search;
   ``str.contains_any`` when the catalogue is too large for one regex), case-sensitive but
   for the anchors of case-insensitive signatures, passes over every row once: rows with
   no candidate anchor go no further (nearly all of them). It runs on polars' streaming
   engine, so it is parallel and holds only the surviving rows, which are grouped by their
   (source, message) text: a fleet's hosts write the same lines, so the steps below see
   each distinct text once (967k rows held 5k distinct messages on a generated 4,008-host
   case).
2. **Candidates.** On the distinct texts, the same automaton with ``str.extract_many(
   overlapping=True)`` lists the text of every anchor occurrence; joined to the
   case-sensitive signatures' anchors as written and to the case-insensitive ones' ASCII
   lower case (and to a signature → source table), it gives exactly the (text, signature)
   candidate pairs of the contract.
3. **Regex.** Each signature's regex (translated for Rust's engine by
   :func:`~analyzer.signatures.dialect.translate`) runs only on its own candidates; the
   captures are extracted (``str.extract_groups``) only on its matches and written as the
   canonical captures JSON by an expression. The per-signature queries run together
   (``pl.collect_all``). The matches of each text are then spread back to its rows.

No Python code runs per row.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import polars as pl

from analyzer.errors import SignatureError
from analyzer.signatures.compile import MATCHES_SCHEMA, CompiledCatalogue, empty_matches
from analyzer.signatures.dialect import UnportableRegex, ascii_lower, translate

#: Rows per slice of a case (bounds memory: a slice's surviving rows are the most held at
#: once; larger slices share more distinct texts and pay the per-query set-up less often).
SLICE_ROWS: Final = 10_000_000

_UPPER: Final = [chr(c) for c in range(ord("A"), ord("Z") + 1)]
_LOWER: Final = [chr(c) for c in range(ord("a"), ord("z") + 1)]
#: How JSON writes the one field of ``pl.struct(value.alias("v"))`` before the value.
_JSON_PREFIX: Final = '{"v":'


@dataclass(frozen=True)
class _Signature:
    index: int
    code: str
    role: str
    groups: tuple[str, ...]
    #: The regex as the signature file writes it (:attr:`regex` translates it for Rust).
    written: str

    @property
    def regex(self) -> str:
        """The regex as polars runs it.

        Raises:
            SignatureError: the dialect cannot write it for Rust (named as polars would).
        """
        try:
            return translate(self.written, "rust")
        except UnportableRegex:
            _refuse_first_broken([(self.code, self.written)])
            raise


@dataclass(frozen=True)
class _Plan:
    """The catalogue laid out for polars: one automaton, anchor and source tables, regexes."""

    signatures: tuple[_Signature, ...]
    #: Every anchor, ASCII-lower-cased, once: the automaton's patterns (searched ASCII
    #: case-insensitively, so it finds every occurrence of every anchor, and a few more).
    patterns: tuple[str, ...]
    #: The prefilter's literals: case-sensitive signatures' anchors as written, once ...
    literal: tuple[str, ...]
    #: ... and case-insensitive ones' anchors, ASCII-lower-cased, once.
    caseless: tuple[str, ...]
    #: anchor, sig: a case-sensitive signature's anchors as written.
    exact: pl.DataFrame
    #: anchor, sig: a case-insensitive signature's anchors, ASCII-lower-cased.
    folded: pl.DataFrame
    #: sig, source: where each signature applies.
    sources: pl.DataFrame


def compile_error(pattern: str) -> str | None:
    """Why Rust's regex (as polars uses it) rejects ``pattern`` once translated, or None."""
    try:
        translated = translate(pattern, "rust")
        pl.Series([""], dtype=pl.String).str.contains(translated)
    except (UnportableRegex, pl.exceptions.PolarsError) as exc:
        text = str(exc).strip().split("\n\nThis error occurred")[0]
        reason = [line[6:].strip() for line in text.splitlines() if line.startswith("error:")]
        return reason[-1] if reason else text.splitlines()[-1]
    return None


def _refuse_first_broken(signatures: Iterable[tuple[str, str]]) -> None:
    """Raise SignatureError naming the first (code, pattern) whose regex polars rejects."""
    for code, pattern in signatures:
        error = compile_error(pattern)
        if error is not None:
            message = f"{code}: the regex does not compile in polars: {error}"
            raise SignatureError(message) from None


def _table(rows: list[tuple[str, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"anchor": pl.String, "sig": pl.Int32}, orient="row").unique(
        maintain_order=True
    )


@functools.lru_cache(maxsize=8)
def _plan(catalogue: CompiledCatalogue) -> _Plan:
    signatures = []
    exact: list[tuple[str, int]] = []
    folded: list[tuple[str, int]] = []
    sources: list[tuple[int, str]] = []
    # Regexes are translated and compiled when they first meet a candidate row, not all up
    # front: compiling was a third of the start-up of analyzing a small file, translating
    # 0.14 s of CPU per process (533 regexes, of which a case meets a few dozen). One the
    # dialect or polars refuses is named then (``_regex_step``); `culprit signatures lint`
    # checks every one in every engine.
    for index, signature in enumerate(catalogue.signatures):
        signatures.append(
            _Signature(index, signature.code, signature.role, signature.groups, signature.regex)
        )
        if signature.case_insensitive:
            folded += [(ascii_lower(anchor), index) for anchor in signature.anchors]
        else:
            exact += [(anchor, index) for anchor in signature.anchors]
        sources += [(index, source) for source in signature.sources]
    patterns = dict.fromkeys(ascii_lower(anchor) for anchor, _ in exact + folded)
    return _Plan(
        signatures=tuple(signatures),
        patterns=tuple(patterns),
        literal=tuple(dict.fromkeys(anchor for anchor, _ in exact)),
        caseless=tuple(dict.fromkeys(anchor for anchor, _ in folded)),
        exact=_table(exact),
        folded=_table(folded),
        sources=pl.DataFrame(
            sources, schema={"sig": pl.Int32, "source": pl.String}, orient="row"
        ).unique(),
    )


#: Characters Rust's regex syntax wants escaped outside a class.
_RUST_META: Final = frozenset("\\.+*?()|[]{}^$#&-~")


def _escaped(patterns: Iterable[str]) -> str:
    return "|".join("".join("\\" + c if c in _RUST_META else c for c in p) for p in patterns)


@functools.lru_cache(maxsize=8)
def _alternation(literal: tuple[str, ...], caseless: tuple[str, ...]) -> str | None:
    """Every anchor in one Rust regex (``caseless`` ones in a ``(?i:...)`` group), or None
    when Rust refuses it (too large). Rust compiles a literal alternation to its own SIMD
    literal search, which measured twice as fast as ``str.contains_any`` on 10M rows, and
    an alternation that is case-sensitive where the contract allows it a seventh faster
    than one under ``(?i)`` (1,024-host case). Its ``(?i)`` folds Unicode, a superset of the
    ASCII folding the contract asks for, so nothing is lost here: the exact anchor test
    follows."""
    parts = [_escaped(literal)] if literal else []
    parts += [f"(?i:{_escaped(caseless)})"] if caseless else []
    regex = "|".join(parts)
    try:
        pl.Series([""], dtype=pl.String).str.contains(regex)
    except pl.exceptions.PolarsError:
        return None
    return regex


def _prefilter(plan: _Plan) -> pl.Expr:
    """True for a message that contains a case-sensitive signature's anchor as written or a
    case-insensitive one's in any case (and a few more)."""
    message = pl.col("message")
    regex = _alternation(plan.literal, plan.caseless)
    if regex is not None:
        return message.str.contains(regex)
    found = pl.lit(False)
    if plan.literal:
        found = found | message.str.contains_any(list(plan.literal))
    if plan.caseless:
        found = found | message.str.contains_any(list(plan.caseless), ascii_case_insensitive=True)
    return found


def _texts(plan: _Plan, rows: pl.LazyFrame) -> pl.DataFrame:
    """The distinct (source, message) texts that contain an anchor (ASCII case aside), each
    with the ids of the rows that carry it.

    A fleet's hosts log the same lines: on a generated 4,008-host case, the 967k rows that
    pass the prefilter hold about 5k distinct messages. Everything after the prefilter runs
    once per distinct text instead of once per row.
    """
    return (
        rows.filter(_prefilter(plan))
        .select("row_id", pl.col("source").cast(pl.String), "message")
        .group_by("source", "message")
        .agg("row_id")
        .with_row_index("text")
        .collect(engine="streaming")
    )


def _candidates(plan: _Plan, texts: pl.DataFrame) -> pl.DataFrame:
    """(text, sig, message) for every candidate pair of the contract.

    A hit is the text at an occurrence of some anchor, spelled as in the message: a
    case-sensitive signature's anchor is there when the hit equals it, a case-insensitive
    one's when the hit's ASCII lower case does.
    """
    hits = (
        texts.select(
            "text",
            "source",
            pl.col("message")
            .str.extract_many(list(plan.patterns), ascii_case_insensitive=True, overlapping=True)
            .list.unique()
            .alias("hit"),
        )
        .explode("hit")
        .drop_nulls("hit")
    )
    exact = hits.join(plan.exact, left_on="hit", right_on="anchor")
    folded = hits.with_columns(pl.col("hit").str.replace_many(_UPPER, _LOWER)).join(
        plan.folded, left_on="hit", right_on="anchor"
    )
    pairs = (
        pl.concat([exact.select("text", "source", "sig"), folded.select("text", "source", "sig")])
        .join(plan.sources, on=["sig", "source"], how="semi")
        .select("text", "sig")
        .unique()
    )
    return pairs.join(texts.select("text", "message"), on="text")


def _json_string(value: pl.Expr) -> pl.Expr:
    """``value`` as a JSON string literal, escaped exactly as :func:`json.dumps` does."""
    encoded = pl.struct(value.alias("v")).struct.json_encode()
    return encoded.str.strip_prefix(_JSON_PREFIX).str.strip_suffix("}")


def captures_expr(groups: Sequence[str], regex: str) -> pl.Expr:
    """The canonical captures JSON of each message's leftmost match of ``regex``."""
    if not groups:
        return pl.lit("{}")
    extracted = pl.col("message").str.extract_groups(regex)
    pieces = []
    for name in sorted(groups):
        value = extracted.struct.field(name)
        pieces.append(
            pl.when(value.is_not_null() & (value != "")).then(
                pl.concat_str(pl.lit(f'"{name}":'), _json_string(value))
            )
        )
    body = pl.concat_str(pieces, separator=",", ignore_nulls=True)
    return pl.concat_str(pl.lit("{"), body, pl.lit("}"))


def _query(signature: _Signature, part: pl.DataFrame) -> pl.LazyFrame:
    regex = signature.regex
    return (
        part.lazy()
        .filter(pl.col("message").str.contains(regex))
        .select(
            pl.col("text"),
            pl.lit(signature.code).alias("signature"),
            pl.lit(signature.role).alias("role"),
            captures_expr(signature.groups, regex).alias("captures"),
        )
    )


def _regex_step(plan: _Plan, candidates: pl.DataFrame) -> pl.DataFrame:
    """(text, signature, role, captures) of every candidate pair whose regex matches."""
    try:
        queries = [
            _query(plan.signatures[int(index)], part)
            for (index,), part in candidates.partition_by("sig", as_dict=True).items()
        ]
        return pl.concat(pl.collect_all(queries))
    except pl.exceptions.PolarsError:
        # Some expressions compile their regex when built, others when collected.
        indices = candidates.get_column("sig").unique().sort().to_list()
        _refuse_first_broken((plan.signatures[i].code, plan.signatures[i].written) for i in indices)
        raise


def match_lazy(catalogue: CompiledCatalogue, rows: pl.LazyFrame) -> pl.DataFrame:
    """Matches of a lazy frame with ``row_id``, ``source`` and ``message`` columns."""
    if not catalogue.signatures:
        return empty_matches()
    plan = _plan(catalogue)
    texts = _texts(plan, rows)
    candidates = _candidates(plan, texts)
    if candidates.is_empty():
        return empty_matches()
    found = (
        _regex_step(plan, candidates)
        .join(texts.select("text", "row_id"), on="text")
        .explode("row_id")
        .select(MATCHES_SCHEMA.names())
    )
    return found.cast(dict(MATCHES_SCHEMA)).sort("row_id", "signature")  # type: ignore[arg-type]


def match(catalogue: CompiledCatalogue, rows: pl.DataFrame) -> pl.DataFrame:
    """Matches of a frame with ``row_id``, ``source`` and ``message`` columns."""
    return match_lazy(catalogue, rows.lazy())


def match_files(catalogue: CompiledCatalogue, files: Sequence[Path]) -> Iterator[pl.DataFrame]:
    """Matches of the canonical rows in ``files`` (Parquet), a slice of rows at a time."""
    if not files:
        return
    scan = pl.scan_parquet(list(files)).select("row_id", "source", "message")
    total = scan.select(pl.len()).collect().item()
    for offset in range(0, total, SLICE_ROWS):
        yield match_lazy(catalogue, scan.slice(offset, SLICE_ROWS))
