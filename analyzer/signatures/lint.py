"""Check the catalogue beyond what loading a file checks: every problem, with file and line.

* every file loads (schema, families, unique codes and names: :mod:`analyzer.signatures.catalog`);
* the knowledge page a signature names exists, and every page's signatures exist;
* the regex compiles in every engine (:data:`ENGINES`);
* every positive example contains an anchor (or the prefilter would never let it through),
  matches, and gives exactly its expected captures; no counter-example matches.

``python -m analyzer.signatures.lint [DIR…]`` runs it without the CLI.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from analyzer.signatures.backends import duckdb as duckdb_backend
from analyzer.signatures.backends import polars as polars_backend
from analyzer.signatures.backends import python as python_backend
from analyzer.signatures.backends.python import match as python_match
from analyzer.signatures.catalog import (
    CATALOGUE_DIR,
    KNOWLEDGE_DIR,
    Entry,
    Problem,
    collect,
    front_matter,
)
from analyzer.signatures.classes import FAILURE_CLASSES
from analyzer.signatures.dialect import ENGINE_NAMES, UnportableRegex, translate
from analyzer.signatures.examples import Matcher, example_problems


def _common_subset(pattern: str) -> str | None:
    """Why ``pattern`` cannot be written for every engine (:mod:`~analyzer.signatures.dialect`)."""
    try:
        for engine in ENGINE_NAMES:
            translate(pattern, engine)
    except UnportableRegex as exc:
        return str(exc)
    return None


#: The name of the first check: when it fails, the engines are not tried. A regex that fails
#: anywhere is one problem naming every engine that rejects it.
COMMON_SUBSET: Final = "the common subset"

#: Each engine a regex must compile in: a name and a function giving the error, or None.
ENGINES: Final[tuple[tuple[str, Callable[[str], str | None]], ...]] = (
    (COMMON_SUBSET, _common_subset),
    ("python regex", python_backend.compile_error),
    ("polars (Rust regex)", polars_backend.compile_error),
    ("DuckDB (RE2)", duckdb_backend.compile_error),
)


#: A failure mode's name in a page's ``modes`` list.
_MODE: Final = re.compile(r"^[a-z][a-z0-9_]*$")


def knowledge_pages(folder: Path) -> tuple[dict[str, dict[str, object]], list[Problem]]:
    """Every page's front matter by page id, and the problems of unreadable pages."""
    pages: dict[str, dict[str, object]] = {}
    problems = []
    owner: dict[str, str] = {}
    for path in sorted(folder.glob("*.md")):
        try:
            meta = front_matter(path)
        except (ValueError, tomllib.TOMLDecodeError, OSError) as exc:
            problems.append(Problem(str(path), 1, str(exc)))
            continue
        if meta.get("id") != path.stem:
            problems.append(Problem(str(path), 2, f"id must be the file name {path.stem!r}"))
        if meta.get("class") not in FAILURE_CLASSES:
            known = ", ".join(sorted(FAILURE_CLASSES))
            problems.append(Problem(str(path), None, f"class must be one of: {known}"))
        modes = meta.get("modes", [])
        if not isinstance(modes, list) or not all(
            isinstance(m, str) and _MODE.match(m) for m in modes
        ):
            problems.append(Problem(str(path), None, "modes must be a list of snake_case names"))
        else:
            for mode in modes:
                if mode in owner:
                    message = f"mode {mode!r} is already the mode of {owner[mode]}.md"
                    problems.append(Problem(str(path), None, message))
                owner.setdefault(mode, path.stem)
        pages[path.stem] = meta
    return pages, problems


def page_of_mode(pages: dict[str, dict[str, object]], mode: str) -> str | None:
    """The knowledge page whose ``modes`` list ``mode`` (a failure mode's snake_case name, as
    the generator's truth and signatures.tsv spell it), or None."""
    for page, meta in pages.items():
        modes = meta.get("modes", [])
        if isinstance(modes, list) and mode in modes:
            return page
    return None


def lint(
    folders: Sequence[Path] = (),
    *,
    builtin: bool = True,
    matchers: Sequence[tuple[str, Matcher]] = (("python", python_match),),
) -> list[Problem]:
    """Every problem of the catalogue (packaged, unless ``builtin`` is false) and ``folders``;
    the examples run through ``matchers`` (the reference backend unless told otherwise)."""
    everything = ([CATALOGUE_DIR] if builtin else []) + [Path(f) for f in folders]
    entries, problems = collect(everything)
    pages, page_problems = knowledge_pages(KNOWLEDGE_DIR)
    problems += page_problems
    codes = {entry.signature.code for entry in entries}
    runnable: list[Entry] = []
    for entry in entries:
        signature = entry.signature
        if signature.knowledge not in pages:
            line = entry.line_of("knowledge")
            message = f"knowledge page {signature.knowledge}.md does not exist"
            problems.append(Problem(str(entry.path), line, message))
        compile_errors = []
        for name, engine in ENGINES:
            error = engine(signature.regex)
            if error is not None:
                compile_errors.append(f"{name}: {error}")
                if name == COMMON_SUBSET:
                    break
        if compile_errors:
            line = entry.line_of("regex")
            message = "regex does not compile in " + "; ".join(compile_errors)
            problems.append(Problem(str(entry.path), line, message))
            continue
        runnable.append(entry)
    problems += example_problems(runnable, matchers)
    if builtin:
        for page, meta in sorted(pages.items()):
            listed = meta.get("signatures", [])
            for code in listed if isinstance(listed, list) else []:
                if code not in codes:
                    path = str(KNOWLEDGE_DIR / f"{page}.md")
                    problems.append(
                        Problem(path, None, f"lists signature {code}, which does not exist")
                    )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    folders = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    problems = lint(folders)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
