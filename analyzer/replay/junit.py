"""Replay outcomes as JUnit XML, so CI systems show one test case per spec."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from analyzer.replay.run import Outcome


def junit_xml(outcomes: Sequence[Outcome]) -> str:
    failures = sum(1 for o in outcomes if o.error is None and o.differences)
    errors = sum(1 for o in outcomes if o.error is not None)
    suite = ET.Element(
        "testsuite",
        {
            "name": "culprit replay",
            "tests": str(len(outcomes)),
            "failures": str(failures),
            "errors": str(errors),
            "time": f"{sum(o.seconds for o in outcomes):.3f}",
        },
    )
    for outcome in outcomes:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": "culprit.replay",
                "name": outcome.spec.name,
                "file": str(outcome.spec.path),
                "time": f"{outcome.seconds:.3f}",
            },
        )
        if outcome.error is not None:
            ET.SubElement(case, "error", {"message": outcome.error}).text = outcome.error
        elif outcome.differences:
            text = "\n".join(outcome.differences)
            first = outcome.differences[0]
            ET.SubElement(case, "failure", {"message": first}).text = text
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(outcomes: Sequence[Outcome], path: Path) -> None:
    path.write_text(junit_xml(outcomes), encoding="utf-8")
