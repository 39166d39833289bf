"""The incident generator: same seed same bytes, truth that holds in the files, bundles that
ingest without quarantine, and no knowledge of culprit's analysis."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from fixtures.cli import app
from fixtures.errors import FixtureError
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.scenarios import SCENARIOS
from fixtures.story import MARK_KEY, Document, marked
from fixtures.truth import BUNDLE_DIR, CitedRow, read_truth
from fixtures.verify import cited_text, verify
from fixtures.writers import Marks
from fixtures.writers.documents import write_document
from tests.conftest import Generated, small

NAMES = [s.name for s in SCENARIOS]


def _digest(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_bytes(tmp_path: Path, name: str) -> None:
    options = small(8, 7)
    generate(name, options, tmp_path / "a")
    generate(name, options, tmp_path / "b")
    first = _digest(tmp_path / "a")
    assert first == _digest(tmp_path / "b")
    generate(name, small(8, 8), tmp_path / "c")
    other = _digest(tmp_path / "c")
    assert other.keys() != first.keys() or other != first


@pytest.mark.parametrize("name", ["restart-loop", "hccl-timeout-modelarts"])
def test_same_bytes_across_processes(tmp_path: Path, name: str) -> None:
    """String hashing differs between interpreters; the bytes must not."""
    for hash_seed in ("1", "2"):
        subprocess.run(
            [sys.executable, "-m", "fixtures", "generate", name, "-o", str(tmp_path / hash_seed),
             "--hosts", "8", "--seed", "5", "--minutes", "10", "--rate", "12"],
            check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )  # fmt: skip
    assert _digest(tmp_path / "1") == _digest(tmp_path / "2")


@pytest.mark.parametrize("hosts", [8, 64])
@pytest.mark.parametrize("name", NAMES)
def test_truth_holds_and_bundle_ingests_clean(
    generated: Callable[[str, int], Generated], name: str, hosts: int
) -> None:
    made = generated(name, hosts)
    out, truth, case, result = made.out, made.truth, made.case, made.ingest
    assert truth.attempts, "every scenario has at least one attempt"
    assert read_truth(out) == truth
    _, problems = verify(out)
    assert problems == []
    counts = result.meta.counts
    assert counts.files_unrecognized == counts.files_refused == counts.files_partial == 0
    assert counts.quarantined == counts.repaired == 0 or truth.corrupt_input
    assert counts.rows > 0
    hosts_seen = api.query(case, "SELECT count(DISTINCT host) AS n FROM rows").column(0)
    # A bundle names --hosts hosts unless the truth says it has another number of nodes.
    assert hosts_seen[0].as_py() == (hosts if truth.nodes is None else truth.nodes)
    # Every cited row is a row of the case at that path and line.
    for attempt in truth.attempts:
        for cited in (attempt.first_error, *attempt.evidence):
            found = api.query(
                case,
                "SELECT count(*) FROM rows r JOIN files f USING (file_id) "
                f"WHERE f.path = '{cited.path}' AND r.line = {cited.line}",
            ).column(0)
            assert found[0].as_py() == 1, (attempt.index, cited)
    # The culprit host named by the truth is a host the case knows.
    for attempt in truth.attempts:
        if attempt.culprit.host is not None:
            known = api.query(
                case,
                f"SELECT count(*) FROM rows WHERE host = '{attempt.culprit.host}'",
            ).column(0)
            assert known[0].as_py() > 0


def test_first_error_row_is_in_the_case_at_its_citation(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    truth = generate("host-crash-heartbeat", small(8, 3), out)
    api.ingest([out / BUNDLE_DIR], tmp_path / "case")
    cited = truth.attempts[0].first_error
    rows = pl.from_arrow(
        api.query(
            tmp_path / "case",
            "SELECT r.host, r.message, r.severity FROM rows r JOIN files f USING (file_id) "
            f"WHERE f.path = '{cited.path}' AND r.line = {cited.line}",
        )
    )
    assert isinstance(rows, pl.DataFrame) and rows.height == 1
    assert rows["host"][0] == truth.attempts[0].culprit.host
    assert "FATAL ERROR" in rows["message"][0]


def test_documents_cite_the_opening_brace_of_marked_objects(tmp_path: Path) -> None:
    body = {
        "items": [{"a": 1}, marked("second", {"b": {"c": [1, 2]}})],
        "job": marked("job", {"phase": "Failed"}),
    }
    marks: Marks = {}
    write_document(tmp_path, Document("api/job.json", body), marks)
    lines = (tmp_path / "api/job.json").read_text().split("\n")
    assert MARK_KEY not in "".join(lines)
    (second,) = marks["second"]
    (job,) = marks["job"]
    assert lines[second.line - 1] == "    {" and lines[job.line - 1] == '  "job": {'
    for location in (second, job):
        row = CitedRow(path=location.path, line=location.line, text=location.text)
        assert cited_text(tmp_path, row) == location.text
    assert job.text == '{"phase":"Failed"}'


def test_a_wrong_citation_is_reported(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    generate("host-crash-heartbeat", small(8, 3), out)
    text = (out / "truth.toml").read_text()
    (out / "truth.toml").write_text(text.replace("line = ", "line = 1", 1))
    _, problems = verify(out)
    assert len(problems) == 1 and "truth says" in problems[0]


def test_the_generator_does_not_import_the_analyzer() -> None:
    code = (
        "import sys, fixtures.cli, fixtures.generate, fixtures.verify, fixtures.scenarios\n"
        "bad = sorted(m for m in sys.modules if m == 'analyzer' or m.startswith('analyzer.'))\n"
        "print(','.join(bad))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == ""


def test_refuses_to_overwrite_what_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(FixtureError, match="not empty"):
        generate("host-crash-heartbeat", small(), tmp_path)
    with pytest.raises(FixtureError, match="does not hold a generated bundle"):
        generate("host-crash-heartbeat", small(), tmp_path, force=True)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hosts": 6}, "--hosts"),
        ({"hosts": 10}, "multiple of 4"),
        ({"rate": 0}, "--rate"),
        ({"minutes": 1}, "--minutes"),
    ],
)
def test_bad_options_are_one_clear_error(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(FixtureError, match=message):
        Options(**kwargs)  # type: ignore[arg-type]


def test_cli_lists_every_scenario_on_one_line() -> None:
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert [line.split()[0] for line in lines] == NAMES


def test_cli_generate_and_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        app,
        [
            "generate",
            "host-crash-heartbeat",
            "-o",
            str(tmp_path / "g"),
            "--minutes",
            "5",
            "--rate",
            "6",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "g" / "truth.toml").is_file()
    unknown = runner.invoke(app, ["generate", "no-such", "-o", str(tmp_path / "x")])
    assert unknown.exit_code == 2 and "unknown scenario 'no-such'" in unknown.output
    hosts = runner.invoke(
        app, ["generate", "host-crash-heartbeat", "-o", str(tmp_path / "y"), "--hosts", "5000"]
    )
    assert hosts.exit_code == 2 and "--hosts must be between" in hosts.output
