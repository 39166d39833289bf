"""Detector regexes compiled when first used, and matching as ``re`` does."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from analyzer.redact.detectors import Regex

CASES = [
    (r"(?P<s>[a-z]+)@(?P<d>\w+)", 0, "mail ann@example and bob@host"),
    (r"secret", re.I, "a SECRET, a Secret, a secret"),
    (r"^\s*(?P<s>\w+)$", re.M, "one\n  two\nthree four"),
]


@pytest.mark.parametrize(("source", "flags", "text"), CASES)
def test_a_regex_matches_as_the_compiled_one(source: str, flags: int, text: str) -> None:
    lazy, eager = Regex(source, flags), re.compile(source, flags)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    found, expected = lazy.search(text), eager.search(text)
    assert (found and found.groupdict()) == (expected and expected.groupdict())
    for pos, end in ((0, len(text)), (5, 12), (2, sys.maxsize)):
        found, expected = lazy.match(text, pos, end), eager.match(text, pos, end)
        assert (found and found.span()) == (expected and expected.span())
    assert lazy.compiled is lazy.compiled  # compiled once


def test_importing_the_redaction_compiles_no_detector_pattern() -> None:
    # A fresh interpreter: a text runs only the detectors its hints let through.
    script = (
        "from analyzer.redact import VERBATIM, Redactor\n"
        "from analyzer.redact.engine import DETECTORS\n"
        "patterns = {d.kind: d.pattern for d in DETECTORS if hasattr(d, 'pattern')}\n"
        "assert patterns and all(p._compiled is None for p in patterns.values())\n"
        "assert VERBATIM('mail ann@example.com') == 'mail ann@example.com'\n"
        "assert '_hints' not in vars(VERBATIM)\n"
        "assert Redactor()('mail ann@example.com') == 'mail [REDACTED:email]'\n"
        "print(sorted(k for k, p in patterns.items() if p._compiled is not None))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["['email']"]
