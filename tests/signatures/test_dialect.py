"""The regex translation: what each engine is given, and that the three engines then agree."""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pytest
import regex

from analyzer.signatures.dialect import (
    ENGINE_NAMES,
    UnportableRegex,
    ascii_lower,
    translate,
)

# -- what each engine is given ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "python", "re2", "rust"),
    [
        # ASCII classes: Rust's are Unicode, so it gets explicit ones (inside classes too).
        (r"\d+", r"\d+", r"\d+", r"[0-9]+"),
        (r"\D", r"\D", r"\D", r"[^0-9]"),
        (r"\w", r"\w", r"\w", r"[0-9A-Z_a-z]"),
        (r"\W", r"\W", r"\W", r"[^0-9A-Z_a-z]"),
        (r"[\w.-]+", r"[\w.-]+", r"[\w.-]+", r"[\-.0-9A-Z_a-z]+"),
        (r"[^\d,]", r"[^\d,]", r"[^\d,]", r"[^,0-9]"),
        (r"[[:alpha:]_]", r"[[:alpha:]_]", r"[[:alpha:]_]", r"[A-Z_a-z]"),
        # \s is RE2's [\t\n\f\r ]: Python's and Rust's also take \v.
        (r"a\sb", r"a[\t\n\f\r ]b", r"a\sb", r"a[\t\n\f\r ]b"),
        (r"\S+", r"[^\t\n\f\r ]+", r"\S+", r"[^\t\n\f\r ]+"),
        (r"[\s,]", r"[\t\n\f\r ,]", r"[\s,]", r"[\t\n\f\r ,]"),
        # A union with a negated shorthand is computed, not nested.
        (r"[\s\S]*?x", r"(?s:.)*?x", r"[\s\S]*?x", r"(?s:.)*?x"),
        (r"[\S\d]", r"[^\t\n\f\r ]", r"[\S\d]", r"[^\t\n\f\r ]"),
        # Word boundaries: Rust allows ASCII ones through (?-u:...).
        (r"\bfoo\B", r"\bfoo\B", r"\bfoo\B", r"(?-u:\b)foo(?-u:\B)"),
        # $ is the end of the message: Python's also matches before a final newline.
        (r"done$", r"done\Z", r"done$", r"done$"),
        (r"(?m)^x$", r"(?m)^x$", r"(?m)^x$", r"(?m)^x$"),
        (r"(?m:a$)b$", r"(?m:a$)b\Z", r"(?m:a$)b$", r"(?m:a$)b$"),
        # (?i) is ASCII folding: spelled out for RE2 and Rust (they fold KELVIN SIGN to k).
        (r"(?i)ok", r"(?i)ok", r"[Oo][Kk]", r"[Oo][Kk]"),
        (r"(?i)[a-c_]x", r"(?i)[a-c_]x", r"[A-C_a-c][Xx]", r"[A-C_a-c][Xx]"),
        (r"(?i)[^k]", r"(?i)[^k]", r"[^Kk]", r"[^Kk]"),
        (r"(?i:ab)c", r"(?i:ab)c", r"(?:[Aa][Bb])c", r"(?:[Aa][Bb])c"),
        (r"(?is)a.b", r"(?is)a.b", r"(?s)[Aa].[Bb]", r"(?s)[Aa].[Bb]"),
        (r"(?i)\x41é", r"(?i)\x41é", r"[Aa]é", r"[Aa]é"),
        # Only named groups capture in RE2 and Rust (DuckDB extracts by position).
        (r"(a|b)(?P<x>\d)", r"(a|b)(?P<x>\d)", r"(?:a|b)(?P<x>\d)", r"(?:a|b)(?P<x>[0-9])"),
        # A brace that is not a repetition is a literal everywhere.
        (r"a{2,3}{x}", r"a{2,3}\{x}", r"a{2,3}\{x}", r"a{2,3}\{x}"),
        # Class punctuation that is special to Rust is escaped.
        (r"[&~x-]", r"[&~x-]", r"[&~x-]", r"[\&\-x\~]"),
    ],
)
def test_translation(pattern: str, python: str, re2: str, rust: str) -> None:
    assert translate(pattern, "python") == python
    assert translate(pattern, "re2") == re2
    assert translate(pattern, "rust") == rust


def _translate_all(pattern: str) -> None:
    for engine in ENGINE_NAMES:
        translate(pattern, engine)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "back-reference"),
        (r"x(?i)y", "only portable at the start"),
        (r"(?U)a+", "not in the common subset"),
        (r"(?#note)a", "not in the common subset"),
        (r"\Qa.b\E", r"escape \Q"),
        (r"\x{263a}", "Python's regex does not read it"),
        (r"[[a]", "a bare [ inside a class"),
        (r"[\b]", r"escape \b"),
    ],
)
def test_unportable_constructs(pattern: str, reason: str) -> None:
    with pytest.raises(UnportableRegex, match=re.escape(reason)):
        _translate_all(pattern)


def test_a_malformed_pattern_is_left_to_the_engines() -> None:
    assert translate("(?P<x>a", "rust") == "(?P<x>a"
    assert translate("[a-", "re2") == "[a-"


def test_ascii_lower_leaves_other_letters() -> None:
    assert ascii_lower("ÄRGER Kelvin \u212a İ") == "Ärger kelvin \u212a İ"


# -- the engines agree on the translations -------------------------------------------------

#: Strings that separate the engines' native readings.
PROBES = [
    "",
    "x7y",
    "x\u0663y",  # ARABIC-INDIC DIGIT THREE
    "café au lait",
    "éfoo foo_ foo",
    "\u212aernel ok",  # KELVIN SIGN
    "\u017fegfault",  # LATIN SMALL LETTER LONG S
    "KERNEL Segfault",
    "a\x0bb a\tb a\u00a0b",
    "done\n",
    "done",
    "line one\nline two\nValueError: boom",
    "ÉCOLE école",
    "[x] {2} a&&b ~~ -",
]
PATTERNS = [
    r"x\dy",
    r"x\Dy",
    r"(?P<w>\w+)",
    r"\W(?P<w>\w+)$",
    r"\bfoo\b",
    r"\Bfoo",
    r"(?i)kernel",
    r"(?i)segfault",
    r"(?i)[k-l]ernel",
    r"(?i)[^a-z]ernel",
    r"(?i)école",
    r"a\sb",
    r"a[\s]b",
    r"a\Sb",
    r"done$",
    r"(?m)^line (?P<n>\w+)$",
    r"^line.*boom",
    r"(?s)^line.*(?P<tail>boom)",
    r"(?P<head>[\s\S]*?)ValueError",
    r"[[:alpha:]]+",
    r"[&~]+",
    r"\{2\}|a{2}",
    r"(x|y)(?P<d>\d)?",
    r"(?i:kernel) (?P<w>ok)",
    r"(?i)(?-i:K)ERNEL",
    r"(?s:line.)(?P<rest>\w+)",
    r"[^\x00-\x1f\x7f]+$",
]


def _python(pattern: str, text: str) -> tuple[bool, dict[str, str]]:
    found = regex.compile(translate(pattern, "python"), regex.ASCII | regex.VERSION0).search(text)
    if found is None:
        return False, {}
    return True, {k: v for k, v in found.groupdict().items() if v}


def _rust(pattern: str, texts: list[str]) -> list[tuple[bool, dict[str, str]]]:
    translated = translate(pattern, "rust")
    series = pl.Series(texts, dtype=pl.String)
    hits = series.str.contains(translated).to_list()
    names = regex.compile(translate(pattern, "python")).groupindex
    groups = series.str.extract_groups(translated).to_list() if names else [{}] * len(texts)
    return [
        (bool(hit), {k: v for k, v in (group or {}).items() if v} if hit else {})
        for hit, group in zip(hits, groups, strict=True)
    ]


def _re2(pattern: str, texts: list[str]) -> list[tuple[bool, dict[str, str]]]:
    literal = "'" + translate(pattern, "re2").replace("'", "''") + "'"
    names = list(regex.compile(translate(pattern, "python")).groupindex)
    extract = f"regexp_extract(t, {literal}, {names!r})" if names else "NULL"
    sql = f"SELECT regexp_matches(t, {literal}), {extract} FROM unnest(?) WITH ORDINALITY u(t, n) ORDER BY n"
    rows = duckdb.connect().execute(sql, [texts]).fetchall()
    return [
        (bool(hit), {k: v for k, v in (got or {}).items() if v} if hit else {}) for hit, got in rows
    ]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_engines_agree_on_the_translation(pattern: str) -> None:
    python = [_python(pattern, text) for text in PROBES]
    assert _rust(pattern, PROBES) == python
    assert _re2(pattern, PROBES) == python


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"x\dy", "x\u0663y", False),
        (r"\bfoo", "éfoo", True),
        (r"(?i)kernel", "\u212aernel", False),
        (r"(?i)école", "ÉCOLE", False),
        (r"a\sb", "a\x0bb", False),
        (r"done$", "done\n", False),
        (r"^line.*boom", "line one\nboom", False),
    ],
)
def test_the_contract_on_the_edges(pattern: str, text: str, expected: bool) -> None:
    assert _python(pattern, text)[0] is expected
    assert _rust(pattern, [text])[0][0] is expected
    assert _re2(pattern, [text])[0][0] is expected
