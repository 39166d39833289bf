"""The plain-Python baseline of the matching benchmark: every regex on every line.

``python -m benchmarks.pyloop LINES OUT.json`` compiles every catalogue regex as the python
backend does, reads ``LINES`` (one message per line) and applies every pattern's ``.search``
to every line: no anchor prefilter, no source filter, no captures. It writes the lines and
patterns counted, the seconds spent compiling and looping (start-up and reading left out) and
how many (line, pattern) pairs and lines matched. ``benchmarks.match`` extrapolates the loop
time of an evenly spread sample to the whole case.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import regex

from analyzer import api

# The loop compiles each regex exactly as the python backend does: its dialect writer and its
# flags (no public API hands out the backend's compiled regexes).
from analyzer.signatures.backends.python import FLAGS
from analyzer.signatures.dialect import translate


def compile_patterns() -> tuple[list[regex.Pattern[str]], list[str]]:
    """Every catalogue regex compiled for the loop, and the codes of those that do not
    compile (left out)."""
    patterns: list[regex.Pattern[str]] = []
    failed: list[str] = []
    for signature in api.signatures().signatures:
        try:
            patterns.append(regex.compile(translate(signature.regex, "python"), FLAGS))
        except (ValueError, regex.error):
            failed.append(signature.code)
    return patterns, failed


def loop(patterns: Sequence[regex.Pattern[str]], lines: Sequence[str]) -> tuple[int, int]:
    """Every pattern's ``search`` on every line: (matching pairs, matching lines)."""
    pairs = matched_lines = 0
    for line in lines:
        hits = 0
        for pattern in patterns:
            if pattern.search(line) is not None:
                hits += 1
        pairs += hits
        matched_lines += hits > 0
    return pairs, matched_lines


def run(lines_path: Path) -> dict[str, Any]:
    """Compile, read ``lines_path`` and loop; the figures written to the output file."""
    started = time.perf_counter()
    patterns, failed = compile_patterns()
    compile_s = time.perf_counter() - started
    lines = lines_path.read_text(encoding="utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    started = time.perf_counter()
    pairs, matched = loop(patterns, lines)
    loop_s = time.perf_counter() - started
    return {
        "lines": len(lines),
        "patterns": len(patterns),
        "not_compiled": failed,
        "compile_s": compile_s,
        "loop_s": loop_s,
        "matching_pairs": pairs,
        "matching_lines": matched,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 2:
        print("usage: python -m benchmarks.pyloop LINES OUT.json", file=sys.stderr)
        return 2
    Path(args[1]).write_text(json.dumps(run(Path(args[0]))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
