"""Knowledge pages and signatures point at each other, both ways."""

from __future__ import annotations

import re
from pathlib import Path

from analyzer.signatures.catalog import KNOWLEDGE_DIR, load
from analyzer.signatures.lint import knowledge_pages, page_of_mode

MINIMUM_PAGES = 40
SECTIONS = (
    "## What happens",
    "## How it shows in the logs",
    "## How to verify",
    "## What to do next",
    "## Often confused with",
)


def test_pages_and_signatures_agree() -> None:
    pages, problems = knowledge_pages(KNOWLEDGE_DIR)
    assert [str(p) for p in problems] == []
    assert len(pages) >= MINIMUM_PAGES
    catalogue = load()
    codes = {s.code for s in catalogue.signatures}
    for page, meta in pages.items():
        listed = meta["signatures"]
        rules = meta.get("rules", [])
        # A page of a diagnosis rule (spatial-outlier, ...) names its rules instead.
        assert isinstance(listed, list) and (listed or rules), f"{page} lists no signatures"
        assert set(listed) <= codes, f"{page} lists unknown signatures {set(listed) - codes}"
        related = meta.get("related", [])
        assert isinstance(related, list)
        assert set(related) <= set(pages), f"{page} relates to unknown pages"
    for signature in catalogue.signatures:
        assert signature.knowledge in pages, f"{signature.code}: no page {signature.knowledge}"
        listed = pages[signature.knowledge]["signatures"]
        assert isinstance(listed, list)
        assert signature.code in listed, (
            f"{signature.code} names page {signature.knowledge}, which does not list it"
        )


def test_every_page_has_the_sections_and_links_resolve() -> None:
    pages, _ = knowledge_pages(KNOWLEDGE_DIR)
    for page in pages:
        text = (KNOWLEDGE_DIR / f"{page}.md").read_text(encoding="utf-8")
        for section in SECTIONS:
            assert section in text, f"{page}.md has no '{section}' section"
        for target in re.findall(r"\]\(([a-z0-9-]+)\.md\)", text):
            assert target in pages, f"{page}.md links to missing page {target}.md"


def test_a_failure_mode_belongs_to_one_page(tmp_path: Path) -> None:
    for page, modes in (("first", '["tpu_hw_fatal"]'), ("second", '["tpu_hw_fatal", "Bad"]')):
        (tmp_path / f"{page}.md").write_text(
            f'+++\nid = "{page}"\ntitle = "t"\nsignatures = []\nmodes = {modes}\n'
            'class = "accelerator-hardware"\n+++\n',
            encoding="utf-8",
        )
    pages, problems = knowledge_pages(tmp_path)
    assert [p.message for p in problems] == ["modes must be a list of snake_case names"]
    assert page_of_mode(pages, "tpu_hw_fatal") == "first"
    assert page_of_mode(pages, "nothing") is None
    (tmp_path / "second.md").write_text(
        '+++\nid = "second"\ntitle = "t"\nsignatures = []\nmodes = ["tpu_hw_fatal"]\nclass = "unknown"\n+++\n',
        encoding="utf-8",
    )
    _, problems = knowledge_pages(tmp_path)
    assert [p.message for p in problems] == ["mode 'tpu_hw_fatal' is already the mode of first.md"]


def test_a_page_belongs_to_a_known_failure_class(tmp_path: Path) -> None:
    for page, failure_class in (("known", "preemption"), ("made-up", "bad-luck")):
        (tmp_path / f"{page}.md").write_text(
            f'+++\nid = "{page}"\ntitle = "t"\nmodes = []\nclass = "{failure_class}"\n+++\n',
            encoding="utf-8",
        )
    _, problems = knowledge_pages(tmp_path)
    assert [(Path(p.path).name, p.message.split(":")[0]) for p in problems] == [
        ("made-up.md", "class must be one of")
    ]


def test_every_template_rule_has_its_page() -> None:
    from analyzer.diagnose import leads, phases
    from analyzer.flows import diff

    pages, _ = knowledge_pages(KNOWLEDGE_DIR)
    named: set[str] = set()
    for meta in pages.values():
        rules = meta.get("rules", [])
        assert isinstance(rules, list)
        named.update(str(rule) for rule in rules)
    for rule in (leads.RULE, phases.RULE, diff.RULE, "spatial-outlier"):
        assert rule in named, f"no knowledge page lists rule {rule}"
