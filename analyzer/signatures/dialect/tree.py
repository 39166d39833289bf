"""The parse tree of a signature regex: the common subset of the engines, read once.

:func:`parse` reads a pattern into a sequence of nodes (groups hold their own sequence). Every
node keeps the text it was read from, so a writer can hand a construct over unchanged, and the
flags in force where they matter (``(?i)`` for letters and classes, ``(?m)`` for ``$``), so no
writer has to track them. What the subset leaves out raises :class:`UnportableRegex`; text that
is not a regex at all raises :class:`Malformed` (each engine then explains the syntax error in
its own words).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final, Literal

from analyzer.signatures.dialect.charsets import (
    MAX_CODE_POINT,
    POSIX,
    SHORTHAND,
    Ranges,
    case_closed,
    complement,
    normalize,
    shorthand_ranges,
)


class UnportableRegex(ValueError):
    """The pattern uses a construct outside the common subset, or one an engine cannot say."""


class Malformed(Exception):
    """Not a regex at all (an unclosed class, a bad escape)."""


@dataclass(frozen=True)
class Flags:
    """The inline flags in force at a node."""

    i: bool = False
    m: bool = False
    s: bool = False


@dataclass(frozen=True)
class Char:
    """One character, written as it is or as an escape (``source``)."""

    code: int
    source: str
    flags: Flags
    #: Where a ``\\x{…}`` escape begins in the pattern (Python's ``regex`` does not read one).
    wide_hex_at: int | None = None


@dataclass(frozen=True)
class Shorthand:
    """``\\d \\D \\w \\W \\s \\S`` outside a class."""

    letter: str

    @property
    def source(self) -> str:
        return "\\" + self.letter

    @property
    def ranges(self) -> Ranges:
        return shorthand_ranges(self.letter)


@dataclass(frozen=True)
class WordBoundary:
    """``\\b`` or ``\\B``."""

    source: str


@dataclass(frozen=True)
class CharClass:
    """A bracket expression: the characters it names and the shorthands in it, kept apart
    (the ERE writer needs to know whether a non-ASCII member was named or came in through a
    negated shorthand)."""

    source: str
    negated: bool
    #: Characters, ranges and POSIX classes named in the class.
    named: Ranges
    #: The shorthand letters in it, in order (``d D w W s S``).
    shorthands: str
    flags: Flags
    #: Where its first ``\\x{…}`` escape begins (Python's ``regex`` does not read one).
    wide_hex_at: int | None = None

    @property
    def members(self) -> Ranges:
        """Everything listed, before case folding and negation."""
        listed = list(self.named)
        for letter in self.shorthands:
            listed += shorthand_ranges(letter)
        return normalize(listed)

    @property
    def matched(self) -> Ranges:
        """What the class matches under the contract: folded under ``(?i)``, then negated."""
        ranges = case_closed(self.members) if self.flags.i else self.members
        return complement(ranges) if self.negated else ranges


@dataclass(frozen=True)
class Group:
    """``(…)``, ``(?P<name>…)``, ``(?:…)`` or a scoped flag group ``(?flags:…)``."""

    kind: Literal["capture", "named", "plain", "flags"]
    #: The opening as written: ``(``, ``(?P<name>``, ``(?:``, ``(?i-s:``.
    opening: str
    body: tuple[Node, ...]
    #: Whether a ``)`` closes it (a malformed pattern may end inside a group).
    closed: bool
    #: The flags a flag group turns on and off.
    on: str = ""
    off: str = ""


@dataclass(frozen=True)
class SetFlags:
    """``(?flags)`` at the very start: the flags of the whole pattern."""

    source: str
    on: str
    off: str


@dataclass(frozen=True)
class Repeat:
    """A quantifier: ``*``, ``+``, ``?`` or ``{n}``, ``{n,}``, ``{n,m}``, lazy with a ``?``."""

    source: str
    lazy: bool
    #: Right after a greedy quantifier: a possessive (``*+``) or repeated (``a{2}*``) one.
    stacked: bool

    @property
    def greedy(self) -> str:
        """The quantifier without its lazy ``?`` (which matches the same lines)."""
        return self.source[:-1] if self.lazy else self.source


@dataclass(frozen=True)
class Token:
    """``.``, ``|`` or ``^``: read the same way by every engine."""

    source: str


@dataclass(frozen=True)
class End:
    """``$``: the end of the message under the contract (of a line under ``(?m)``)."""

    flags: Flags


@dataclass(frozen=True)
class StrayClose:
    """A ``)`` that closes no group."""


#: Any node of the tree.
Node = (
    Char
    | Shorthand
    | WordBoundary
    | CharClass
    | Group
    | SetFlags
    | Repeat
    | Token
    | End
    | StrayClose
)

#: Escapes that stand for one character, in every engine.
_CHAR_ESCAPES: Final[dict[str, int]] = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7}
_FLAGS: Final = frozenset("ims")


@dataclass
class _Frame:
    """A group being read: how it opened, the flags inside it and its nodes so far."""

    flags: Flags
    kind: Literal["capture", "named", "plain", "flags"] = "plain"
    opening: str = ""
    on: str = ""
    off: str = ""
    nodes: list[Node] = field(default_factory=list)

    def close(self, *, closed: bool) -> Group:
        body = tuple(self.nodes)
        return Group(self.kind, self.opening, body, closed, self.on, self.off)


@dataclass
class _Parser:
    pattern: str
    pos: int = 0
    #: Where the first ``\\x{…}`` escape of the current class or escape began.
    wide_hex_at: int | None = None
    stack: list[_Frame] = field(default_factory=lambda: [_Frame(Flags())])

    @property
    def frame(self) -> _Frame:
        return self.stack[-1]

    def fail(self, what: str, at: int | None = None) -> UnportableRegex:
        return UnportableRegex(f"{what} (at offset {self.pos if at is None else at})")

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.pattern[index] if index < len(self.pattern) else ""

    def add(self, node: Node) -> None:
        self.frame.nodes.append(node)

    def run(self) -> tuple[Node, ...]:
        text = self.pattern
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\\":
                self.escape()
            elif char == "[":
                self.add(self.char_class())
            elif char == "(":
                self.open_group()
            elif char == ")":
                self.pos += 1
                if len(self.stack) > 1:
                    group = self.stack.pop().close(closed=True)
                    self.add(group)
                else:
                    self.add(StrayClose())
            elif char in "*+?":
                self.pos += 1
                self.repeat(char)
            elif char == "{":
                self.brace()
            elif char == "$":
                self.pos += 1
                self.add(End(self.frame.flags))
            elif char in ".|^":
                self.pos += 1
                self.add(Token(char))
            else:
                self.pos += 1
                self.add(Char(ord(char), char, self.frame.flags))
        while len(self.stack) > 1:  # a malformed pattern ends inside groups
            group = self.stack.pop().close(closed=False)
            self.add(group)
        return tuple(self.frame.nodes)

    def repeat(self, text: str) -> None:
        """A quantifier just read as ``text``, and its lazy ``?`` if one follows."""
        previous = self.frame.nodes[-1] if self.frame.nodes else None
        stacked = isinstance(previous, Repeat) and not previous.lazy
        lazy = self.peek() == "?"
        if lazy:
            self.pos += 1
        self.add(Repeat(text + ("?" if lazy else ""), lazy, stacked))

    def brace(self) -> None:
        """A counted repetition is a quantifier; any other ``{`` is a literal."""
        end = self.pattern.find("}", self.pos)
        body = self.pattern[self.pos + 1 : end] if end > 0 else ""
        lower, _, upper = body.partition(",")
        if end > 0 and lower.isdigit() and (not upper or upper.isdigit()):
            text = self.pattern[self.pos : end + 1]
            self.pos = end + 1
            self.repeat(text)
        else:
            # Kept escaped: Rust refuses a "{" that opens no repetition.
            self.pos += 1
            self.add(Char(ord("{"), "\\{", self.frame.flags))

    def escape(self) -> None:
        start = self.pos
        self.wide_hex_at = None
        code, letter = self.read_escape(in_class=False)
        if code is not None:
            source = self.pattern[start : self.pos]
            self.add(Char(code, source, self.frame.flags, self.wide_hex_at))
        elif letter.lower() in SHORTHAND:
            self.add(Shorthand(letter))
        else:
            self.add(WordBoundary(self.pattern[start : self.pos]))

    def read_escape(self, *, in_class: bool) -> tuple[int | None, str]:
        """Consume one escape: ``(code point, "")`` for a character, ``(None, letter)`` for a
        class shorthand or (outside a class) ``\\b``/``\\B``."""
        letter = self.peek(1)
        if not letter:
            raise Malformed("trailing backslash")
        start = self.pos
        self.pos += 2
        if letter.lower() in SHORTHAND or (letter in "bB" and not in_class):
            return None, letter
        if letter in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[letter], ""
        if letter == "x":
            return self.read_hex(), ""
        if letter.isdigit():
            raise self.fail(f"\\{letter} (back-reference or octal escape)", start)
        if letter.isascii() and letter.isalpha():
            raise self.fail(f"escape \\{letter} is not in the common subset", start)
        return ord(letter), ""

    def read_hex(self) -> int:
        if self.peek() == "{":
            end = self.pattern.find("}", self.pos)
            if end < 0:
                raise Malformed("unclosed \\x{")
            if self.wide_hex_at is None:
                self.wide_hex_at = self.pos - 2
            digits = self.pattern[self.pos + 1 : end]
            self.pos = end + 1
        else:
            digits = self.pattern[self.pos : self.pos + 2]
            self.pos += 2
        try:
            code = int(digits, 16)
        except ValueError:
            raise Malformed(f"bad hex escape {digits!r}") from None
        if len(digits) == 0 or code > MAX_CODE_POINT:
            raise Malformed(f"bad hex escape {digits!r}")
        return code

    def open_group(self) -> None:
        text = self.pattern
        flags = self.frame.flags
        if self.peek(1) != "?":
            self.stack.append(_Frame(flags, "capture", "("))
            self.pos += 1
        elif text.startswith("(?P<", self.pos):
            end = text.find(">", self.pos)
            if end < 0:
                raise Malformed("unclosed group name")
            self.stack.append(_Frame(flags, "named", text[self.pos : end + 1]))
            self.pos = end + 1
        elif text.startswith("(?:", self.pos):
            self.stack.append(_Frame(flags, "plain", "(?:"))
            self.pos += 3
        else:
            self.flag_group()

    def flag_group(self) -> None:
        """``(?flags)`` at the start of the pattern, or ``(?flags:…)`` anywhere."""
        text = self.pattern
        index = self.pos + 2
        on: list[str] = []
        off: list[str] = []
        target = on
        while index < len(text) and text[index] not in ":)":
            char = text[index]
            if char == "-" and target is on:
                target = off
            elif char in _FLAGS:
                target.append(char)
            else:
                raise self.fail(f"group or flag (?{char} is not in the common subset")
            index += 1
        if index >= len(text):
            raise Malformed("unclosed flag group")
        scoped = text[index] == ":"
        if not scoped and self.pos != 0:
            # Python applies a flag group to the whole pattern, the other engines from there on.
            raise self.fail(
                "a flag group (?flags) is only portable at the start: write (?flags:...)"
            )
        values = dict.fromkeys(on, True) | dict.fromkeys(off, False)
        flags = replace(self.frame.flags, **values)
        source = text[self.pos : index + 1]
        if scoped:
            self.stack.append(_Frame(flags, "flags", source, "".join(on), "".join(off)))
        else:
            self.frame.flags = flags
            self.add(SetFlags(source, "".join(on), "".join(off)))
        self.pos = index + 1

    def char_class(self) -> CharClass:
        start = self.pos
        self.wide_hex_at = None
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        named: list[tuple[int, int]] = []
        shorthands = ""
        first = True
        while True:
            char = self.peek()
            if not char:
                raise Malformed("unclosed character class")
            if char == "]" and not first:  # a "]" first in the class is a member
                self.pos += 1
                break
            first = False
            if char == "[":
                if self.peek(1) != ":":
                    raise self.fail("a bare [ inside a class: write \\[")
                named += self.posix()
                continue
            low, letter = self.class_atom()
            if low is None:
                shorthands += letter
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high, other = self.class_atom()
                if high is None or other:
                    raise self.fail("a class shorthand cannot end a range")
                if high < low:
                    raise Malformed("range out of order")
                named.append((low, high))
            else:
                named.append((low, low))
        source = self.pattern[start : self.pos]
        flags = self.frame.flags
        return CharClass(source, negated, normalize(named), shorthands, flags, self.wide_hex_at)

    def class_atom(self) -> tuple[int | None, str]:
        char = self.peek()
        if char == "\\":
            return self.read_escape(in_class=True)
        self.pos += 1
        return ord(char), ""

    def posix(self) -> Ranges:
        end = self.pattern.find(":]", self.pos + 2)
        if end < 0:
            raise Malformed("unclosed POSIX class")
        name = self.pattern[self.pos + 2 : end]
        ranges = POSIX.get(name.lstrip("^"))
        if ranges is None:
            raise Malformed(f"unknown POSIX class [:{name}:]")
        self.pos = end + 2
        return complement(ranges) if name.startswith("^") else ranges


def parse(pattern: str) -> tuple[Node, ...]:
    """The parse tree of ``pattern``.

    Raises:
        UnportableRegex: a construct outside the common subset.
        Malformed: not a regex at all.
    """
    return _Parser(pattern).run()
