"""``culprit analyze`` end to end on generated incidents: every attempt's first-error row,
failure mode, culprit and the attempt count match the generator's truth, and every citation
quotes its row.

64 hosts run for every scenario; 1,024 hosts for the flagship scenario in the default run and
for every scenario with ``-m slow`` (ingesting 1,024 node journals costs about a minute per
scenario on two cores: the readers' per-file overhead, see benchmarks/RESULTS.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from analyzer.diagnose.evidence import load as load_evidence
from analyzer.diagnose.findings import Findings
from analyzer.redact import VERBATIM
from analyzer.redact.case import for_case, host_names
from analyzer.signatures.catalog import load as load_catalogue
from fixtures.scenarios import SCENARIOS
from tests.conftest import Generated

NAMES = [s.name for s in SCENARIOS]
FLAGSHIP = "host-crash-heartbeat"


def check_against_truth(made: Generated, out: Path) -> Findings:
    result = api.analyze([made.case], out)
    findings = result.findings
    truth = made.truth
    assert len(findings.attempts) == len(truth.attempts), "attempt count"
    report = result.report_path.read_text(encoding="utf-8")
    for verdict, expected in zip(findings.attempts, truth.attempts, strict=True):
        where = f"attempt {expected.index}"
        first = verdict.first_error
        assert first is not None, f"{where}: no first error"
        got = (first.citation.path, first.citation.line)
        assert got == (expected.first_error.path, expected.first_error.line), (
            f"{where}: first error {got} ({first.signature}: {first.message[:120]}) instead of "
            f"{expected.first_error.text[:120]}"
        )
        assert verdict.failure_mode == expected.failure_mode, where
        kind = "undetermined" if expected.culprit.kind == "none" else expected.culprit.kind
        assert verdict.culprit.kind == kind, where
        assert verdict.culprit.host == expected.culprit.host, where
    for text in truth.attempts[-1].must_mention:
        assert text in report, f"report.md does not mention {text!r}"
    return findings


def check_citations(case: Path, findings: Findings) -> None:
    """Every quoted row is the row its citation names, quoted verbatim (after redaction), and
    a citation inside a folded record points at one of the record's lines."""
    quoted = [row for v in findings.attempts for row in v.evidence + v.timeline + v.leads]
    assert quoted
    ids = sorted({row.citation.row_id for row in quoted})
    table = pl.from_arrow(
        api.query(
            case,
            "SELECT r.row_id, f.path, r.line, r.message FROM rows r JOIN files f USING (file_id) "
            f"WHERE r.row_id IN ({','.join(map(str, ids))})",
        )
    )
    assert isinstance(table, pl.DataFrame)
    rows = {r["row_id"]: r for r in table.iter_rows(named=True)}
    redact = for_case(api.load_case(case))
    for row in quoted:
        actual = rows[row.citation.row_id]
        # A folded record is cited at the line inside it that states the match; its first
        # line is the row's own line.
        first_line = row.citation.record_line or row.citation.line
        assert (actual["path"], actual["line"]) == (row.citation.path, first_line)
        assert first_line <= row.citation.line <= first_line + actual["message"].count("\n")
        assert (row.citation.record_line is None) == (row.citation.line == actual["line"])
        assert row.message == redact(actual["message"])


@pytest.mark.parametrize("name", NAMES)
def test_analyze_finds_the_truth_at_64_hosts(
    generated: Callable[[str, int], Generated], tmp_path: Path, name: str
) -> None:
    made = generated(name, 64)
    findings = check_against_truth(made, tmp_path)
    check_citations(made.case, findings)


def test_analyze_finds_the_truth_at_1024_hosts_flagship(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    made = generated(FLAGSHIP, 1024)
    findings = check_against_truth(made, tmp_path)
    assert findings.verdict.culprit.support == "named by 1023 of 1024 hosts"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in NAMES if n != FLAGSHIP])
def test_analyze_finds_the_truth_at_1024_hosts(
    generated: Callable[[str, int], Generated], tmp_path: Path, name: str
) -> None:
    check_against_truth(generated(name, 1024), tmp_path)


def test_the_host_names_read_once_are_the_case_host_names(
    generated: Callable[[str, int], Generated], tmp_path: Path
) -> None:
    """The analysis keeps the case's host names from the activity it read for the diagnosis;
    they are the names a scan of the row files finds, so the redaction keeps the same."""
    made = generated(FLAGSHIP, 64)
    api.analyze([made.case], tmp_path)  # matched, so the evidence can be read
    case = api.load_case(made.case)
    data = load_evidence(case, load_catalogue())
    assert data.host_names == host_names(case)
    assert len(data.host_names) == 64
    kept = next(iter(data.host_names))
    assert for_case(case, hosts=data.host_names)(f"lost {kept}") == f"lost {kept}"
    assert for_case(case, hosts=data.host_names, enabled=False) is VERBATIM
