"""The report's message catalogue (``messages.toml``): every sentence in English and Chinese.

A report says a sentence by its key and parameters (:func:`say`), and a diagnosis sentence by
the :class:`~analyzer.diagnose.findings.Message` that findings.json carries (:func:`text`).
Parameters are formatted in the same language, recursively; a parameter whose name ends in
``_en`` (a signature title, a knowledge page's step) has no translation and is shown in 「」
in Chinese, so a reader knows it is quoted, not translated.
"""

from __future__ import annotations

import functools
import string
import tomllib
from pathlib import Path
from typing import Final, Literal

from analyzer.diagnose.findings import Message

Language = Literal["en", "zh"]
LANGUAGES: Final[tuple[Language, ...]] = ("en", "zh")
CATALOGUE: Final = Path(__file__).with_name("messages.toml")
Param = str | int | float | Message


@functools.lru_cache(maxsize=1)
def catalogue() -> dict[str, dict[str, str]]:
    """Key -> language -> template."""
    with CATALOGUE.open("rb") as handle:
        table = tomllib.load(handle)
    return {key: {lang: str(text) for lang, text in texts.items()} for key, texts in table.items()}


def fields(template: str) -> set[str]:
    """The parameter names a template uses."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _param(name: str, value: Param, lang: Language) -> str:
    if isinstance(value, Message):
        return text(value, lang)
    shown = str(value)
    if lang != "en" and name.endswith("_en"):
        return f"「{shown}」"
    return shown


def say(key: str, lang: Language, **params: Param) -> str:
    """The sentence ``key`` in ``lang`` with ``params``.

    Raises:
        KeyError: no such key, or the template names a parameter not given.
    """
    template = catalogue()[key][lang]
    return template.format_map({name: _param(name, v, lang) for name, v in params.items()})


def text(message: Message, lang: Language) -> str:
    """A diagnosis message in ``lang``."""
    return say(message.key, lang, **message.params)
