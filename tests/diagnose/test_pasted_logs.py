"""The verdict on a single pasted log: rows without a time are ordered by their position, a
folded record is cited at the line that states the error, and a subject the log names but no
row ties to a host is the culprit as written."""

from __future__ import annotations

from pathlib import Path

from analyzer import api
from analyzer.diagnose.findings import Findings

TRACEBACK = """\
Model Contain  1.100048384  Billion Parameters
jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal frames.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/user/train.py", line 101, in <module>
    output = trainer.train(params)
  File "/home/user/trainer.py", line 708, in train
    state, loss = self.train_step_fn(state, batch)
jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. \
Ran out of memory in memory space hbm. Used 21.90G of 7.48G hbm. Exceeded hbm capacity by 14.42G.
"""


def _analyze(tmp_path: Path, name: str, text: str) -> Findings:
    log = tmp_path / name
    log.write_text(text, encoding="utf-8")
    return api.analyze([log], tmp_path / "out").findings


def test_an_untimed_traceback_yields_a_first_error_at_its_exception_line(tmp_path: Path) -> None:
    verdict = _analyze(tmp_path, "pasted.log", TRACEBACK).verdict
    assert verdict.first_error is not None
    citation = verdict.first_error.citation
    assert (citation.path, citation.line) == ("pasted.log", 11)
    # The record the line belongs to starts at its traceback's chain marker or header.
    assert citation.record_line is not None and citation.record_line < 11
    assert verdict.failure_class == "accelerator-oom"
    assert verdict.culprit.kind == "program"
    assert verdict.culprit.support == "the rows name no host"


def test_a_subject_no_row_ties_to_a_host_is_the_culprit_as_written(tmp_path: Path) -> None:
    text = (
        "E0929 17:42:48.594192 1044529 coordination_service.cc:954] "
        "/job:jax_worker/replica:0/task:6 has been set to ERROR in coordination service: "
        "UNAVAILABLE: Task /job:jax_worker/replica:0/task:6 heartbeat timeout. This indicates "
        "that the remote task has failed, got preempted, or crashed unexpectedly.\n"
    )
    verdict = _analyze(tmp_path, "leader.log", text).verdict
    assert verdict.first_error is not None
    assert verdict.first_error.signature == "COORD-HB-001"
    culprit = verdict.culprit
    assert (culprit.kind, culprit.host) == ("subject", None)
    assert culprit.named is not None
    assert (culprit.named.kind, culprit.named.name) == ("task", "/job:jax_worker/replica:0/task:6")
    assert [c.line for c in culprit.evidence] == [1]
    # A heartbeat timeout is a consequence line: the verdict rests on it with LOW confidence.
    assert verdict.confidence == "LOW"


def test_an_unexplained_failure_names_the_task_that_informational_rows_name(
    tmp_path: Path,
) -> None:
    text = (
        "E0929 17:42:48.594192 1044529 barrier.cc:1] a barrier reported a problem\n"
        "The first task at the barrier: /job:jax_worker/replica:0/task:0. "
        "Some timed out task names:\n"
        "/job:jax_worker/replica:0/task:5\n"
    )
    verdict = _analyze(tmp_path, "barrier.log", text).verdict
    assert verdict.first_error is None
    assert (verdict.failure_class, verdict.confidence) == ("unknown", "LOW")
    assert verdict.culprit.kind == "subject"
    assert verdict.culprit.named is not None
    assert verdict.culprit.named.name == "/job:jax_worker/replica:0/task:5"
    assert "only who the rows say failed" in verdict.confidence_reason
    assert any("COORD" in s.text and "names task" in s.text for s in verdict.statements)


def test_without_a_naming_row_an_unexplained_failure_names_nobody(tmp_path: Path) -> None:
    verdict = _analyze(tmp_path, "quiet.log", "step 1 done\nstep 2 done\nstep 3 done\n").verdict
    assert verdict.first_error is None
    assert (verdict.culprit.kind, verdict.culprit.named) == ("undetermined", None)
    assert "no cause, host or rank is named" in verdict.confidence_reason


def test_a_case_whose_every_line_was_quarantined_still_gets_a_verdict(tmp_path: Path) -> None:
    broken = '{"insertId": "a1", "logName": "projects/p/logs/stderr", "textPayload": "x"\n' * 3
    log = tmp_path / "cut.json"
    log.write_text(broken, encoding="utf-8")
    result = api.analyze([log], tmp_path / "out", api.AnalyzeSettings(html=True))
    assert result.findings.bundle.rows == 0
    assert result.findings.verdict.failure_class == "unknown"
    assert result.findings.bundle.files[0].quarantined == 3
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_digest_under_kubectl_prefixes_folds_and_names_its_workers(tmp_path: Path) -> None:
    prefix = "[pod/train-slice-0-0-abcde/jax] 2026-11-29T18:03:05.0000{:02d}Z "
    body = [
        "E1129 18:03:05.000100    1234 megascale_coordinator.cc:1234] Megascale detects a hang "
        "that is likely caused by bad TPU chips on the following hosts. Please remove the hosts "
        "from the fleet and restart the workload. If problem persists please contact Megascale "
        "XLA team.",
        "  The host that have bad TPUs are: train-slice-1-3",
        "  Full error digest:",
        "    Potential cause: Bad TPU chips",
        "    Potential culprit workers: jax_worker/7:train-slice-1-3",
    ]
    text = "".join(prefix.format(i) + line + "\n" for i, line in enumerate(body))
    verdict = _analyze(tmp_path, "coordinator.log", text).verdict
    assert verdict.first_error is not None
    assert verdict.first_error.citation.line == 1
    assert verdict.culprit.named is not None
    assert verdict.culprit.named.name == "train-slice-1-3"
