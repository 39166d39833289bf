"""Run a signature's own examples: each positive example must pass the prefilter, match and
give exactly its expected captures; no counter-example may match. Any matcher with the
backends' shape (compiled catalogue, rows frame → matches frame) can be checked, so the same
examples hold every backend to the same answers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from analyzer.signatures.catalog import Entry, Problem
from analyzer.signatures.compile import CompiledCatalogue, compile_signature
from analyzer.signatures.dialect import ascii_lower

#: A backend's matching function: (compiled catalogue, rows with row_id/source/message) →
#: matches table.
Matcher = Callable[[CompiledCatalogue, pl.DataFrame], pl.DataFrame]


def _table_lines(text: str, table: str) -> list[int]:
    """The 1-based line of each ``[[table]]`` header, in order."""
    header = re.compile(rf"^[ \t]*\[\[{re.escape(table)}\]\]", re.M)
    return [text.count("\n", 0, m.start()) + 1 for m in header.finditer(text)]


def _line_at(lines: list[int], index: int) -> int | None:
    return lines[index] if index < len(lines) else None


def rows_frame(lines: Sequence[str], source: str) -> pl.DataFrame:
    """Lines as case rows of ``source`` (row ids 0, 1, …)."""
    return pl.DataFrame(
        {
            "row_id": list(range(len(lines))),
            "source": [source] * len(lines),
            "message": list(lines),
        },
        schema={"row_id": pl.Int64, "source": pl.String, "message": pl.String},
    )


@dataclass(frozen=True)
class _Case:
    """One example line of one signature, as a row of the batch every backend matches."""

    entry: Entry
    number: int
    positive: bool
    line: int | None


def example_problems(
    entries: Sequence[Entry], matchers: Sequence[tuple[str, Matcher]]
) -> list[Problem]:
    """What is wrong with the examples of ``entries`` under each named matcher. All examples
    go through each matcher in one batch (with every signature compiled); only a row's own
    signature counts for it."""
    problems: list[Problem] = []
    cases: list[_Case] = []
    messages: list[str] = []
    sources: list[str] = []
    for entry in entries:
        signature = entry.signature
        positive_at = _table_lines(entry.text, "examples")
        negative_at = _table_lines(entry.text, "counter_examples")
        compiled = compile_signature(signature)
        anchors = [ascii_lower(a) if compiled.case_insensitive else a for a in signature.anchors]
        for number, example in enumerate(signature.examples):
            line = _line_at(positive_at, number)
            folded = ascii_lower(example.line) if compiled.case_insensitive else example.line
            if not any(anchor in folded for anchor in anchors):
                message = f"example {number + 1} contains none of the anchors"
                problems.append(Problem(str(entry.path), line, message))
            cases.append(_Case(entry, number, True, line))
            messages.append(example.line)
        for number, counter in enumerate(signature.counter_examples):
            cases.append(_Case(entry, number, False, _line_at(negative_at, number)))
            messages.append(counter.line)
        sources += [signature.sources[0]] * (
            len(signature.examples) + len(signature.counter_examples)
        )
    if not cases:
        return problems
    catalogue = CompiledCatalogue(tuple(compile_signature(e.signature) for e in entries))
    rows = pl.DataFrame(
        {"row_id": range(len(cases)), "source": sources, "message": messages},
        schema={"row_id": pl.Int64, "source": pl.String, "message": pl.String},
    )
    owners = pl.DataFrame(
        {
            "row_id": range(len(cases)),
            "signature": [case.entry.signature.code for case in cases],
        },
        schema={"row_id": pl.Int64, "signature": pl.String},
    )
    for name, matcher in matchers:
        found = matcher(catalogue, rows).join(owners, on=["row_id", "signature"], how="semi")
        got = dict(zip(found["row_id"].to_list(), found["captures"].to_list(), strict=True))
        for row_id, case in enumerate(cases):
            shown = str(case.entry.path)
            if not case.positive:
                if row_id in got:
                    message = f"counter-example {case.number + 1} matches ({name})"
                    problems.append(Problem(shown, case.line, message))
                continue
            if row_id not in got:
                message = f"example {case.number + 1} does not match ({name})"
                problems.append(Problem(shown, case.line, message))
                continue
            example = case.entry.signature.examples[case.number]
            expected = {k: v for k, v in example.captures.items() if v}
            captures = json.loads(got[row_id])
            if captures != expected:
                message = (
                    f"example {case.number + 1} captures {captures}, expected {expected} ({name})"
                )
                problems.append(Problem(shown, case.line, message))
    return problems
