"""Knowledge pages as the diagnosis reads them: one page read alone is the page as the whole
folder has it, and a page that is missing (or not a page of the folder) is a bare one."""

from __future__ import annotations

import pytest

from analyzer.diagnose import knowledge
from analyzer.signatures.catalog import KNOWLEDGE_DIR
from analyzer.signatures.classes import UNKNOWN


def test_a_page_read_alone_is_the_page_of_the_folder() -> None:
    every = knowledge.pages()
    assert len(every) == len(list(KNOWLEDGE_DIR.glob("*.md")))
    for page_id, page in every.items():
        assert knowledge.page(page_id) == page


@pytest.mark.parametrize(
    "page_id", ["no-such-page", "", "../knowledge/jax-coordination-heartbeat-timeout", "*"]
)
def test_a_page_the_folder_does_not_have_is_bare(page_id: str) -> None:
    assert knowledge.page(page_id) == knowledge.Page(page_id, page_id, (), UNKNOWN, (), ())
