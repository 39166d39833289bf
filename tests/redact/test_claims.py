"""Texts the diagnosis writes from captures (claims, the culprit's subject, the name a row
gives it) are redacted like quoted messages, unless the name is one of the case's hosts."""

from __future__ import annotations

from pathlib import Path

from analyzer import api
from analyzer.diagnose import run
from analyzer.diagnose.draft import Claim
from analyzer.redact import Redactor
from tests.conftest import REPO

LINE = (
    "E1129 18:00:00.000000    11 tpu_init.cc:10] TPU initialization failed: Failed to "
    "establish SliceBuilder grpc channel to 10.8.0.9:8471 via proxy 10.8.0.10 for bob@example.com\n"
)


def test_claims_are_redacted_but_the_address_the_verdict_blames(tmp_path: Path) -> None:
    """No host stands for 10.8.0.9: the verdict blames it as written, so it stays readable
    (in the culprit, the claims, the quoted row); the row's other address and e-mail, in the
    same capture, do not."""
    log = tmp_path / "worker-1.log"
    log.write_text(LINE, encoding="utf-8")
    redacted = api.analyze([log], tmp_path / "a", api.AnalyzeSettings(jobs=1)).findings.verdict
    kept = api.analyze(
        [log], tmp_path / "b", api.AnalyzeSettings(jobs=1, redact=False)
    ).findings.verdict
    assert kept.culprit.named is not None and kept.culprit.named.name == "10.8.0.9"
    assert redacted.culprit.named == kept.culprit.named
    assert redacted.culprit.subject == kept.culprit.subject == "address 10.8.0.9"
    text = redacted.model_dump_json()
    assert "10.8.0.10" not in text and "bob@example.com" not in text
    assert "10.8.0.10" in kept.model_dump_json()
    assert redacted.first_error is not None
    assert redacted.first_error.message.endswith(
        "channel to 10.8.0.9:8471 via proxy [REDACTED:ip] for [REDACTED:email]"
    )
    assert [s.text for s in redacted.statements] == [s.text for s in kept.statements]
    assert redacted.culprit.evidence == kept.culprit.evidence


def test_a_host_named_by_its_ip_stays_readable(tmp_path: Path) -> None:
    """A ModelArts node is named by its IP: the texts that name the culprit keep it, though
    the same IP anywhere else would be redacted."""
    bundle = REPO / "fixtures" / "replay" / "hccl-timeout-modelarts" / "bundle.tar.zst"
    verdict = api.analyze([bundle], tmp_path / "out", api.AnalyzeSettings(jobs=1)).findings.verdict
    assert verdict.culprit.host == "172.16.135.5"
    claim = "The row was written by 172.16.135.5 about itself."
    assert claim in [s.text for s in verdict.statements]
    assert Redactor()(claim) == "The row was written by [REDACTED:ip] about itself."


def test_a_claim_naming_a_resolved_alias_is_redacted() -> None:
    """The issue's example: the alias a row names is in the host map (and the culprit's
    aliases); the sentence that quotes it is text, and is redacted like a quoted row."""
    claim = Claim(
        "The row names '10.8.0.9:8471': an address, which the case ties to node-a.",
        "inferred",
        "capture-resolved",
        [],
    )
    statement = run._statement(claim, {}, Redactor(keep={"node-a"}))
    assert statement.text == (
        "The row names '[REDACTED:ip]:8471': an address, which the case ties to node-a."
    )
    assert statement.rule == "capture-resolved"
