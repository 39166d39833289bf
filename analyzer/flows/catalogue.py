"""The signature catalogue: load it, lint it, run its examples, match one line."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer.signatures.catalog import Catalogue, Problem
from analyzer.signatures.catalog import load as load_catalogue
from analyzer.signatures.compile import CompiledCatalogue
from analyzer.signatures.examples import Matcher


@dataclass(frozen=True)
class LineMatch:
    """A signature that matches a line, and what it captured."""

    code: str
    name: str
    role: str
    captures: dict[str, str]


def signatures(extra: Sequence[str | Path] = ()) -> Catalogue:
    """The packaged catalogue plus the signature folders ``extra``.

    Raises:
        SignatureError: any signature file does not load (every problem is listed).
    """
    return load_catalogue([Path(p) for p in extra])


def lint_signatures(extra: Sequence[str | Path] = ()) -> list[Problem]:
    """Every problem of the catalogue and ``extra`` folders, each with file and line: schema,
    knowledge pages, regexes in every engine, examples under every backend."""
    from analyzer.signatures.lint import lint

    return lint([Path(p) for p in extra], matchers=_matchers())


def check_signatures(
    files: Sequence[str | Path] = (), extra: Sequence[str | Path] = ()
) -> tuple[int, list[Problem]]:
    """Run the examples of ``files`` (every signature when empty) through every backend;
    returns how many signatures ran and the problems."""
    from analyzer.signatures.catalog import parse_file
    from analyzer.signatures.examples import example_problems

    if files:
        entries, problems = [], []
        for file in files:
            entry, found = parse_file(Path(file))
            problems += found
            if entry is not None:
                entries.append(entry)
    else:
        entries, problems = list(signatures(extra).entries), []
    problems += example_problems(entries, _matchers())
    return len(entries), problems


def match_line(
    line: str, extra: Sequence[str | Path] = (), *, source: str | None = None
) -> list[LineMatch]:
    """The signatures that match ``line`` (as a row's message) and their captures. Without
    ``source`` a signature's source list is not applied."""

    from analyzer.schema import SOURCES
    from analyzer.signatures.backends.python import match
    from analyzer.signatures.compile import compile_catalogue
    from analyzer.signatures.examples import rows_frame

    catalogue = signatures(extra)
    compiled = compile_catalogue(catalogue)
    if source is None:
        # Any source will do: let every signature read the one row.
        anywhere = [dataclasses.replace(s, sources=SOURCES) for s in compiled.signatures]
        compiled = CompiledCatalogue(tuple(anywhere))
    hits = match(compiled, rows_frame([line], source or SOURCES[0]))
    by_code = {s.code: s for s in catalogue.signatures}
    return [
        LineMatch(code, by_code[code].name, role, json.loads(captures))
        for code, role, captures in hits.select("signature", "role", "captures").iter_rows()
    ]


def _matchers() -> list[tuple[str, Matcher]]:
    """Every backend's in-memory matching function, by name."""
    from analyzer.signatures import backends

    registry = getattr(backends, "BACKENDS", None)
    if registry is None:
        from analyzer.signatures.backends.python import match

        return [("python", match)]
    return [(backend.name, backend.match_frame) for backend in registry]
