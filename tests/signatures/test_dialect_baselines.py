"""The baseline writers of the regex dialect: POSIX ERE for ``grep -E`` and the catalogue's text
for ripgrep. What each is given, and that on every catalogue example the tools match where the
reference (the python backend's compiled regex) does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import regex

from analyzer.signatures.backends.python import FLAGS
from analyzer.signatures.catalog import load
from analyzer.signatures.dialect import BASELINE_ENGINES, Engine, UnportableRegex, translate
from analyzer.signatures.dialect.baselines import bracket

GREP = shutil.which("grep")
#: ripgrep as the matching benchmark finds it: the bench extra's, beside this interpreter.
_RG_BESIDE = Path(sys.executable).with_name("rg")
RG = str(_RG_BESIDE) if _RG_BESIDE.is_file() else shutil.which("rg")
needs_grep = pytest.mark.skipif(GREP is None, reason="grep is not installed")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep is not installed")
#: Each baseline engine's tool: program, options and environment, as the benchmark runs it.
TOOLS: dict[Engine, tuple[str | None, list[str], dict[str, str] | None]] = {
    "ere": (GREP, ["-E"], {**os.environ, "LC_ALL": "C"}),
    "ripgrep": (RG, ["--no-config"], None),
}


def matching_lines(engine: Engine, pattern: str, lines: list[str]) -> set[int]:
    """The 0-based indexes of ``lines`` the engine's tool finds ``pattern`` in."""
    program, options, env = TOOLS[engine]
    assert program is not None
    done = subprocess.run(
        [program, *options, "-n", "-e", pattern],
        input="".join(f"{line}\n" for line in lines).encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode <= 1 and not done.stderr, (pattern, done.stderr)
    return {int(line.split(b":", 1)[0]) - 1 for line in done.stdout.splitlines()}


# -- what grep -E is given ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "ere"),
    [
        (r"(?P<task>/job:\w+)\s\d+", r"(/job:[[:alnum:]_]+)[[:space:]][0-9]+"),
        (r"a(?:b|c)(d)", "a(b|c)(d)"),
        (r"x\S+?y\D\W", "x[^\t\f\r ]+y[^0-9][^0-9A-Z_a-z]"),
        (r"Barrier timed out\. Id: [^\n]*", r"Barrier timed out\. Id: .*"),
        (r"[^,\s\[]+", "[^\t\f\r ,[]+"),
        (r"[\s\S]*?end", ".*end"),
        (r"[\]\-^a]", "[]a^-]"),
        (r"[\^]", r"\^"),
        (r"[\^\-]", "[-^]"),
        (r"(?i)abc[x-z]", "[Aa][Bb][Cc][X-Zx-z]"),
        (r"a(?i:b)c", "a([Bb])c"),
        (r"\bOOM\b", r"\bOOM\b"),
        (r"\d{10,20}x{2}", "[0-9]{10,20}x{2}"),
        (r"a{b}", r"a\{b\}"),
        (r"\"quoted\" \/ \: \- \.", r'"quoted" / : - \.'),
        (r"(?m)^SystemExit: (?P<s>[^\n]*)", "^SystemExit: (.*)"),
        (r"^Traceback:\n(?s:.*\n)?(?P<t>\w+)$", r"^Traceback: (.* )?([[:alnum:]_]+)$"),
        ("tab\\there", "tab\there"),
        (r"\x41\x2e", r"A\."),
    ],
)
def test_ere_translation(pattern: str, ere: str) -> None:
    assert translate(pattern, "ere") == ere


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", r"(?=x)y", r"(?<!x)y", r"\p{L}", "[é]", "a*+", "a(?i)b", r"\Z", "(a", "a)", "[ab"],
)
def test_what_ere_cannot_say(pattern: str) -> None:
    with pytest.raises(UnportableRegex):
        translate(pattern, "ere")


def test_bracket_puts_the_specials_where_they_are_literal() -> None:
    assert bracket(frozenset(map(ord, "]^-[ab"))) == "[]ab[^-]"
    assert bracket(frozenset(map(ord, "^-"))) == "[-^]"
    assert bracket(frozenset(map(ord, "^"))) == "\\^"
    assert bracket(frozenset(map(ord, "^")), negated=True) == "[^^]"
    assert bracket(frozenset(map(ord, "abcdxy"))) == "[a-dxy]"


# -- what ripgrep is given ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?P<task>/job:\w+) (?P<n>\d+)", r"(/job:\w+) (\d+)"),
        (r"Barrier timed out\. Id: [^\n]*", r"Barrier timed out\. Id: .*"),
        (r"^Traceback:\n(?s:.*\n)?(?P<t>\w+)$", r"^Traceback:\x20(?s:.*\x20)?(\w+)$"),
        (r"task ([^:\n]+):(\d+)", r"task ([^:\n]+):(\d+)"),  # rg takes \n in a class
        (r"a\\n[\]\n]\n", r"a\\n[\]\n]\x20"),
        (r"[]\n]x[^]a]\n", r"[]\n]x[^]a]\x20"),
        (r"[[:alpha:]\n]\n", r"[[:alpha:]\n]\x20"),
        (r"(?i)abc(?:d|e)\b", r"(?i)abc(?:d|e)\b"),
        (r"a{2,3}{x}", r"a{2,3}\{x}"),  # Rust refuses a brace that opens no repetition
    ],
)
def test_ripgrep_translation(pattern: str, expected: str) -> None:
    assert translate(pattern, "ripgrep") == expected


def test_a_malformed_pattern_goes_to_ripgrep_unchanged() -> None:
    assert translate("a(", "ripgrep") == "a("


# -- the whole catalogue -----------------------------------------------------------------------


def _flagged(
    engine: Engine, patterns: list[str], tmp_path: Path
) -> subprocess.CompletedProcess[bytes]:
    """The engine's tool run over an empty input with ``patterns`` as its patterns file."""
    program, options, env = TOOLS[engine]
    assert program is not None
    file = tmp_path / f"patterns.{engine}"
    file.write_text("".join(f"{pattern}\n" for pattern in patterns), encoding="utf-8")
    return subprocess.run(
        [program, *options, "-c", "-f", str(file), "/dev/null"],
        capture_output=True,
        env=env,
        check=False,
    )


@pytest.mark.parametrize(
    "engine", [pytest.param("ere", marks=needs_grep), pytest.param("ripgrep", marks=needs_rg)]
)
def test_the_tool_reads_the_whole_translated_catalogue(engine: Engine, tmp_path: Path) -> None:
    """Every catalogue regex translates, and the tool takes the patterns file without a word
    (exit 1: no line of the empty input matched)."""
    patterns = [translate(s.regex, engine) for s in load().signatures]
    done = _flagged(engine, patterns, tmp_path)
    assert done.returncode == 1 and done.stderr == b""


@needs_rg
def test_ripgrep_refuses_the_catalogue_untranslated(tmp_path: Path) -> None:
    """What the ripgrep writer is for: the catalogue's text as it is has duplicate group names
    and literal newlines, and ripgrep refuses the file."""
    done = _flagged("ripgrep", [s.regex for s in load().signatures], tmp_path)
    assert done.returncode == 2


def _reads_lines(pattern: str) -> bool:
    """Whether a regex reads the line structure of a message (a newline or ``(?m)``), which the
    one-message-per-line export flattens."""
    return "\\n" in pattern or "(?m" in pattern


@pytest.mark.parametrize(
    "engine", [pytest.param("ere", marks=needs_grep), pytest.param("ripgrep", marks=needs_rg)]
)
def test_the_tool_matches_the_examples_as_the_reference_does(engine: Engine) -> None:
    """On every example and counter-example of the catalogue (exported as the benchmark exports
    messages: a newline becomes a space), the translated regex matches exactly where the
    signature's regex does under the python backend, except for the regexes that read line
    structure the export flattens."""
    assert engine in BASELINE_ENGINES
    differ: set[str] = set()
    checked = 0
    for signature in load().signatures:
        texts = [e.line for e in signature.examples] + [c.line for c in signature.counter_examples]
        reference = regex.compile(translate(signature.regex, "python"), FLAGS)
        expected = {i for i, text in enumerate(texts) if reference.search(text)}
        exported = [text.replace("\n", " ") for text in texts]
        if matching_lines(engine, translate(signature.regex, engine), exported) != expected:
            differ.add(signature.code)
            assert _reads_lines(signature.regex), signature.code
        checked += len(texts)
    assert checked > 500
    assert len(differ) <= 10, sorted(differ)
