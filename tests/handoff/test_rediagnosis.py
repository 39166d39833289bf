"""`analyze` of a handoff compares its re-diagnosis with the findings packed in it and says
so, in the report, in handoff.json and on the command line, when they differ: packed findings
edited, or rows edited, with the manifest recomputed. Signed, such an edit is refused."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl

from analyzer import api
from analyzer.provenance.layout import EVIDENCE, FINDINGS
from tests.handoff import helpers
from tests.handoff.conftest import Packed


def _other_host(packed: Packed) -> tuple[str, str]:
    """The packed culprit host and another host of the case."""
    culprit = packed.result.findings.verdict.culprit.host
    rows = pl.read_parquet(io.BytesIO(helpers.members(packed.archive)[EVIDENCE]))
    assert culprit is not None
    return culprit, sorted(set(rows["host"].cast(pl.String).to_list()) - {culprit})[0]


def test_an_untouched_handoff_agrees_and_says_so(packed: Packed, tmp_path: Path) -> None:
    shown = helpers.cli("analyze", packed.archive, "-o", tmp_path)
    assert shown.exit_code == 0, shown.stderr
    assert "Handoff: verified" in shown.stdout and "differs" not in shown.stdout
    report = (tmp_path / "report.md").read_text()
    assert "## Handoff" in report and "agrees with the packed findings.json" in report
    check = json.loads((tmp_path / "handoff.json").read_text())
    assert check["agrees_with_packed_findings"] and check["sha256"] == packed.result.sha256
    # report.md links the picture; the packed one is written beside it.
    assert "](timeline.svg)" in report
    assert (tmp_path / "timeline.svg").read_bytes() == helpers.members(packed.archive)[
        "timeline.svg"
    ]


def test_edited_packed_findings_are_reported_unsigned_and_refused_signed(
    packed: Packed, tmp_path: Path
) -> None:
    culprit, other = _other_host(packed)
    forged = helpers.recompute(helpers.move_culprit(helpers.members(packed.archive), other))
    archive = helpers.write(tmp_path / "f.tar.zst", forged)
    shown = helpers.cli("analyze", archive, "-o", tmp_path / "out")
    assert shown.exit_code == 0, shown.stderr
    difference = f"attempt 0: culprit host {other} (packed) vs host {culprit} (re-diagnosed)"
    assert "warning: the re-diagnosis differs" in shown.stdout and difference in shown.stdout
    assert difference in (tmp_path / "out" / "report.md").read_text()
    check = json.loads((tmp_path / "out" / "handoff.json").read_text())
    assert not check["agrees_with_packed_findings"] and difference in check["differences"]
    # --json keeps stdout for the findings; the warning goes to stderr.
    quiet = helpers.cli("analyze", archive, "-o", tmp_path / "json", "--json")
    assert json.loads(quiet.stdout)["verdict"]["culprit"]["host"] == culprit
    assert difference in quiet.stderr
    # The same edit of a signed handoff breaks its signature.
    signed = helpers.recompute(helpers.move_culprit(helpers.members(packed.signed), other))
    resigned = helpers.write(tmp_path / "s.tar.zst", signed)
    helpers.refused(helpers.cli("analyze", resigned, "-o", tmp_path / "s"), "does not match")


def test_edited_rows_are_reported(packed: Packed, tmp_path: Path) -> None:
    """The issue's attack: the culprit's rows moved to another node, the manifest
    recomputed; the re-diagnosis blames the other node, and the comparison says so."""
    culprit, other = _other_host(packed)
    members = helpers.members(packed.archive)
    rows = pl.read_parquet(io.BytesIO(members[EVIDENCE]))
    swapped = rows.with_columns(
        pl.col("host")
        .cast(pl.String)
        .replace({culprit: other, other: culprit})
        .cast(rows.schema["host"])
    )
    forged = helpers.recompute({**members, EVIDENCE: helpers.parquet_bytes(swapped)})
    result = api.analyze([helpers.write(tmp_path / "r.tar.zst", forged)], tmp_path / "out")
    assert result.findings.verdict.culprit.host == other
    assert result.handoff is not None
    expected = f"attempt 0: culprit host {culprit} (packed) vs host {other} (re-diagnosed)"
    assert expected in result.handoff.differences
    assert json.loads(forged[FINDINGS])["verdict"]["culprit"]["host"] == culprit
