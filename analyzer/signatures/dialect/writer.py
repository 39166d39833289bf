"""The writer every engine's writer starts from: one method per construct of the parse tree.

By default a construct is written back as it was read, so an engine's writer overrides only
the constructs that engine reads differently (pySigma's backends work the same way: a table of
per-construct writers, most of them inherited).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from analyzer.signatures.dialect.tree import (
    Char,
    CharClass,
    End,
    Group,
    Node,
    Repeat,
    SetFlags,
    Shorthand,
    StrayClose,
    Token,
    WordBoundary,
)


class Writer:
    """Writes a parse tree as one engine's pattern text."""

    #: A malformed pattern is handed to the engine unchanged (it then says what is wrong in its
    #: own words); a writer that cannot trust the engine to refuse it sets this to False.
    passes_malformed: ClassVar[bool] = True

    def write(self, nodes: Sequence[Node]) -> str:
        return "".join(self.node(node) for node in nodes)

    def node(self, node: Node) -> str:
        match node:
            case Char():
                return self.char(node)
            case Shorthand():
                return self.shorthand(node)
            case WordBoundary():
                return self.word_boundary(node)
            case CharClass():
                return self.char_class(node)
            case Group():
                return self.group(node)
            case SetFlags():
                return self.set_flags(node)
            case Repeat():
                return self.repeat(node)
            case Token():
                return node.source
            case End():
                return self.end(node)
            case StrayClose():
                return self.stray_close(node)

    def char(self, node: Char) -> str:
        return node.source

    def shorthand(self, node: Shorthand) -> str:
        return node.source

    def word_boundary(self, node: WordBoundary) -> str:
        return node.source

    def char_class(self, node: CharClass) -> str:
        return node.source

    def group(self, node: Group) -> str:
        return self.opening(node) + self.write(node.body) + (")" if node.closed else "")

    def opening(self, node: Group) -> str:
        return node.opening

    def set_flags(self, node: SetFlags) -> str:
        return node.source

    def repeat(self, node: Repeat) -> str:
        return node.source

    def end(self, node: End) -> str:
        return "$"

    def stray_close(self, node: StrayClose) -> str:
        return ")"
