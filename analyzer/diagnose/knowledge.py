"""The knowledge pages as the diagnosis uses them: a failure mode's name, title and next steps."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from analyzer.signatures.catalog import KNOWLEDGE_DIR, front_matter_of
from analyzer.signatures.classes import UNKNOWN

_SECTION: Final = re.compile(r"^## (?P<name>.+?)\s*$")
_ITEM: Final = re.compile(r"^(?:\d+\.|-)\s+(?P<text>.*)$")


@dataclass(frozen=True)
class Page:
    id: str
    title: str
    #: The failure modes the page explains (snake_case); the first is the page's own.
    modes: tuple[str, ...]
    #: The page's failure class (:mod:`analyzer.signatures.classes`).
    failure_class: str
    next_steps: tuple[str, ...]
    verify: tuple[str, ...]

    @property
    def failure_mode(self) -> str:
        """The page's failure mode: its first listed mode, else its id in snake_case."""
        return self.modes[0] if self.modes else self.id.replace("-", "_")


def _items(lines: list[str]) -> tuple[str, ...]:
    """The list items of a section, continuation lines joined."""
    items: list[str] = []
    for line in lines:
        item = _ITEM.match(line)
        if item:
            items.append(item.group("text").strip())
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
    return tuple(items)


def _sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        heading = _SECTION.match(line)
        if heading:
            current = sections.setdefault(heading.group("name"), [])
        elif current is not None:
            current.append(line)
    return sections


def read_page(path: Path) -> Page:
    text = path.read_text(encoding="utf-8")
    meta = front_matter_of(text)
    sections = _sections(text)
    modes = meta.get("modes", [])
    return Page(
        id=path.stem,
        title=str(meta.get("title", path.stem)),
        modes=tuple(str(m) for m in modes) if isinstance(modes, list) else (),
        failure_class=str(meta.get("class", UNKNOWN)),
        next_steps=_items(sections.get("What to do next", [])),
        verify=_items(sections.get("How to verify", [])),
    )


@functools.lru_cache(maxsize=4)
def pages(folder: Path = KNOWLEDGE_DIR) -> dict[str, Page]:
    """Every readable page by id (the lint reports unreadable ones)."""
    found = {}
    for path in sorted(folder.glob("*.md")):
        try:
            found[path.stem] = read_page(path)
        except (ValueError, OSError):
            continue
    return found


@functools.cache
def _names(folder: Path) -> frozenset[str]:
    """The file names :func:`pages` reads in ``folder``."""
    return frozenset(path.name for path in folder.glob("*.md"))


@functools.cache
def _page(page_id: str) -> Page | None:
    """The page ``page_id`` as :func:`pages` has it, reading that page alone: a diagnosis
    needs the pages of the signatures that matched, not the hundred-odd others."""
    name = f"{page_id}.md"
    if name not in _names(KNOWLEDGE_DIR):
        return None
    try:
        return read_page(KNOWLEDGE_DIR / name)
    except (ValueError, OSError):
        return None


def page(page_id: str) -> Page:
    """The page ``page_id``, or a bare one named after it when the page is missing."""
    return _page(page_id) or Page(page_id, page_id, (), UNKNOWN, (), ())
