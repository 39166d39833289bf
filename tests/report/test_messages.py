"""The message catalogue: every sentence has English and Chinese text, every key the code
says is there, and the diagnosis' English in findings.json is the catalogue's English."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from analyzer.diagnose.findings import Confidence, CulpritKind, Findings, Message, SubjectKind
from analyzer.report import messages
from analyzer.report.markdown import ROLES
from tests.report.english import english_phrases

ANALYZER = Path(messages.__file__).parents[1]
SNAPSHOTS = Path(__file__).parent / "snapshots"
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: Chinese texts that are a name as Chinese writes it, or only parameters.
_SAME_IN_CHINESE = {"kind.rank", "kind.pod", "label.rank", "label.pod"}
#: A key as the code writes it: message("…"), said("…"), say("…"), Message(key="…").
_LITERAL = re.compile(r"""(?:\bmessage|\bsaid|\bsay)\(\s*"([a-z_.]+)"\s*[,)]|key="([a-z_.]+)\"""")


def missing_chinese(table: dict[str, dict[str, str]]) -> list[str]:
    """Keys without both texts, or whose Chinese text has no Chinese word (parameters aside)."""
    bad = []
    for key, texts in table.items():
        english, chinese = texts.get("en", "").strip(), texts.get("zh", "").strip()
        if not english or not chinese:
            bad.append(key)
            continue
        words = re.sub(r"\{[^}]*\}", "", chinese)
        english_only = re.search("[A-Za-z]", words) and not _CJK.search(words)
        if english_only and key not in _SAME_IN_CHINESE:
            bad.append(key)
    return bad


def test_every_sentence_has_english_and_chinese_text() -> None:
    assert missing_chinese(messages.catalogue()) == []
    for key, texts in messages.catalogue().items():
        assert set(texts) == set(messages.LANGUAGES), key
        # Chinese names no parameter the English sentence lacks, except where a list is
        # said differently (the diagnosis passes both forms).
        extra = messages.fields(texts["zh"]) - messages.fields(texts["en"])
        assert not extra or key.startswith("claim.unmapped_"), (key, extra)


def test_a_sentence_without_chinese_fails_the_check() -> None:
    table = dict(messages.catalogue())
    table["claim.new"] = {"en": "A new sentence about {host}."}
    table["claim.untranslated"] = {"en": "Untranslated {host}.", "zh": "Untranslated {host}."}
    assert missing_chinese(table) == ["claim.new", "claim.untranslated"]


def _used_keys() -> set[str]:
    used: set[str] = set()
    for path in ANALYZER.rglob("*.py"):
        for literal in _LITERAL.finditer(path.read_text(encoding="utf-8")):
            used.add(literal.group(1) or literal.group(2))
    # Keys the code builds from a value: one per value of its type.
    used |= {f"kind.{k}" for k in get_args(SubjectKind)}
    used |= {f"label.{k}" for k in ("task", "worker", "rank", "pod", "node", "host", "address")}
    used |= {f"role.{r}" for r in ROLES}
    used |= {f"zh.level.{c}" for c in get_args(Confidence)}
    used |= {f"zh.confidence.{c}" for c in get_args(Confidence)}
    used |= {f"zh.culprit_kind.{k}" for k in get_args(CulpritKind)}
    for suffix in (".host", ".every_host"):
        used |= {f"step.collect_container_logs{suffix}", f"step.collect_node_journal{suffix}"}
    used |= {f"{k}.rivals" for k in ("claim.first_root", "claim.earliest_secondary")}
    used |= {"claim.aftermath.root", "claim.aftermath.consequence", "zh.no_fix.known"}
    return used


def test_every_key_the_code_says_is_in_the_catalogue() -> None:
    used = _used_keys()
    assert len(used) > 80
    assert sorted(used - set(messages.catalogue())) == []


def _said(findings: Findings) -> list[tuple[str, Message | None]]:
    pairs: list[tuple[str, Message | None]] = []
    for v in findings.attempts:
        pairs += [(s.text, s.message) for s in v.statements + v.conflicts]
        pairs += [(v.summary, v.summary_message), (v.confidence_reason, v.confidence_message)]
        pairs += [(v.culprit.subject, v.culprit.subject_message)]
        if v.culprit.support is not None:
            pairs.append((v.culprit.support, v.culprit.support_message))
        assert len(v.negative_messages) == len(v.negative_findings)
        assert len(v.next_step_messages) == len(v.next_steps)
        pairs += list(zip(v.negative_findings, v.negative_messages, strict=True))
        pairs += list(zip(v.next_steps, v.next_step_messages, strict=True))
        for outlier in v.outliers:
            assert len(outlier.reason_messages) == len(outlier.reasons)
            pairs += list(zip(outlier.reasons, outlier.reason_messages, strict=True))
        if v.phase is not None:
            pairs.append((v.phase.text, v.phase.message))
    return pairs


@pytest.mark.parametrize("snapshot", sorted(p.name for p in SNAPSHOTS.glob("*.json")))
def test_the_diagnosis_english_is_the_catalogues(snapshot: str) -> None:
    """findings.json states each sentence in English and as a message; the catalogue's
    English of the message is that text, and its Chinese has every parameter it needs."""
    findings = Findings.model_validate_json((SNAPSHOTS / snapshot).read_text(encoding="utf-8"))
    pairs = _said(findings)
    assert pairs
    for english, message in pairs:
        assert message is not None, english
        assert messages.text(message, "en") == english
        assert english_phrases(messages.text(message, "zh")) == [], message


def test_english_only_text_is_quoted_in_chinese() -> None:
    step = Message(key="knowledge.step", params={"step_en": "Drain the node."})
    assert messages.text(step, "en") == "Drain the node."
    assert messages.text(step, "zh") == "「Drain the node.」"
