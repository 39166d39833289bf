"""One signature regex, three engines: rewrite a pattern so each engine implements the contract.

The matching contract (:mod:`analyzer.signatures.compile`) says ``\\d \\w \\s \\b`` are ASCII
classes as RE2 has them, ``(?i)`` folds ASCII letters only, and ``$`` is the end of the message.
The engines read the same pattern text differently:

============  =====================  =======================  ==========================
construct     Python ``regex``       RE2 (DuckDB)             Rust ``regex`` (polars)
              (ASCII flag)
============  =====================  =======================  ==========================
``\\d \\w``     ASCII                  ASCII                    Unicode
``\\s``        ASCII, with ``\\v``     ``[\\t\\n\\f\\r ]``          Unicode
``\\b \\B``     ASCII                  ASCII                    Unicode
``(?i)``      ASCII letters          Unicode simple folding   Unicode simple folding
              (``K`` != KELVIN SIGN) (``k`` = KELVIN SIGN)
``$``         end, or before a       end                      end
              final ``\\n``
``(``         capture                capture                  capture
``[`` in      literal                literal                  nested class
a class
============  =====================  =======================  ==========================

:func:`translate` parses the pattern once (the common subset the signature model allows) and
writes it back for one engine:

* ``\\d \\D \\w \\W \\s \\S`` become explicit ASCII classes where the engine differs (inside a
  character class too: a class is computed as a set of code points and written back, so
  ``[\\s\\S]``, ``[^\\w.-]`` and POSIX ``[[:alpha:]]`` come out exact); ``\\b``/``\\B`` become
  ``(?-u:\\b)``/``(?-u:\\B)`` for Rust, which it allows for these two;
* case-insensitive parts (``(?i)`` … and scoped ``(?i:…)``) lose the flag for RE2 and Rust:
  each ASCII letter becomes ``[aA]`` and each class is closed under ASCII case, so no engine
  folds non-ASCII letters (Python's ASCII flag already behaves so);
* ``$`` outside ``(?m)`` becomes ``\\Z`` for Python (its ``\\Z`` is the very end);
* unnamed groups become non-capturing for RE2 and Rust, so the named groups are the only
  captures, in order (DuckDB's ``regexp_extract`` takes them by position);
* constructs outside the common subset raise :class:`UnportableRegex` (lint reports them):
  back-references, ``\\Q…\\E``, unknown escapes, flags other than ``i m s``, a flag group
  ``(?i)`` anywhere but at the start (Python applies it to the whole pattern, the others from
  that point), a bare ``[`` inside a class.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Final, Literal

Engine = Literal["python", "re2", "rust"]
ENGINE_NAMES: Final[tuple[Engine, ...]] = ("python", "re2", "rust")

MAX_CODE_POINT: Final = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]


class UnportableRegex(ValueError):
    """The pattern uses a construct outside the common subset of the three engines."""


class _Malformed(Exception):
    """Not a regex at all (an unclosed class, a bad escape): the engines say why."""


def _normalize(pairs: list[tuple[int, int]]) -> Ranges:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(pairs):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _complement(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


def _case_closed(ranges: Ranges) -> Ranges:
    """``ranges`` plus the other ASCII case of every ASCII letter in it."""
    extra: list[tuple[int, int]] = []
    for lo, hi in ranges:
        for first, last, shift in ((0x41, 0x5A, 32), (0x61, 0x7A, -32)):
            a, b = max(lo, first), min(hi, last)
            if a <= b:
                extra.append((a + shift, b + shift))
    return _normalize([*ranges, *extra])


def _ranges(*pairs: tuple[str, str]) -> Ranges:
    return _normalize([(ord(lo), ord(hi)) for lo, hi in pairs])


DIGIT: Final = _ranges(("0", "9"))
WORD: Final = _ranges(("0", "9"), ("A", "Z"), ("_", "_"), ("a", "z"))
#: RE2's ``\\s`` (no vertical tab), which the contract adopts.
SPACE: Final = _ranges(("\t", "\n"), ("\f", "\r"), (" ", " "))
#: ASCII POSIX classes, as RE2 and Rust define them.
POSIX: Final[dict[str, Ranges]] = {
    "alnum": _ranges(("0", "9"), ("A", "Z"), ("a", "z")),
    "alpha": _ranges(("A", "Z"), ("a", "z")),
    "ascii": _ranges(("\x00", "\x7f")),
    "blank": _ranges(("\t", "\t"), (" ", " ")),
    "cntrl": _ranges(("\x00", "\x1f"), ("\x7f", "\x7f")),
    "digit": DIGIT,
    "graph": _ranges(("!", "~")),
    "lower": _ranges(("a", "z")),
    "print": _ranges((" ", "~")),
    "punct": _ranges(("!", "/"), (":", "@"), ("[", "`"), ("{", "~")),
    "space": _ranges(("\t", "\r"), (" ", " ")),
    "upper": _ranges(("A", "Z")),
    "word": WORD,
    "xdigit": _ranges(("0", "9"), ("A", "F"), ("a", "f")),
}
_SHORTHAND: Final[dict[str, tuple[Ranges, bool]]] = {
    "d": (DIGIT, False),
    "D": (DIGIT, True),
    "w": (WORD, False),
    "W": (WORD, True),
    "s": (SPACE, False),
    "S": (SPACE, True),
}
#: Escapes that stand for one character, in every engine.
_CHAR_ESCAPES: Final[dict[str, int]] = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7}
#: Characters written escaped inside a class (special in at least one engine there).
_CLASS_SPECIAL: Final = frozenset("\\]{[}^-&~|")
_FLAGS: Final = frozenset("ims")
_SHORT_ESCAPE: Final = {"\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", "\v": "\\v"}


@dataclass
class _State:
    """Flags in force inside the current group."""

    i: bool = False
    m: bool = False
    s: bool = False


@dataclass
class _Writer:
    pattern: str
    engine: Engine
    pos: int = 0
    out: list[str] = field(default_factory=list)
    stack: list[_State] = field(default_factory=lambda: [_State()])

    # -- helpers ------------------------------------------------------------------------------

    @property
    def state(self) -> _State:
        return self.stack[-1]

    def fail(self, what: str, at: int | None = None) -> UnportableRegex:
        return UnportableRegex(f"{what} (at offset {self.pos if at is None else at})")

    def malformed(self, what: str) -> _Malformed:
        return _Malformed(what)

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.pattern[index] if index < len(self.pattern) else ""

    @property
    def fold(self) -> bool:
        """Whether this engine needs ASCII case-insensitivity spelled out here."""
        return self.state.i and self.engine != "python"

    # -- the pattern --------------------------------------------------------------------------

    def run(self) -> str:
        text = self.pattern
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\\":
                self.escape()
            elif char == "[":
                self.char_class()
            elif char == "(":
                self.open_group()
            elif char == ")":
                if len(self.stack) > 1:
                    self.stack.pop()
                self.out.append(")")
                self.pos += 1
            elif char == "{":
                self.brace()
            elif char == "$":
                self.out.append("\\Z" if self.engine == "python" and not self.state.m else "$")
                self.pos += 1
            else:
                self.literal(ord(char), char)
                self.pos += 1
        return "".join(self.out)

    def literal(self, code: int, text: str) -> None:
        if self.fold and _is_ascii_letter(code):
            self.out.append("[" + chr(code).upper() + chr(code).lower() + "]")
        else:
            self.out.append(text)

    def brace(self) -> None:
        """A counted repetition passes through; any other ``{`` is a literal."""
        end = self.pattern.find("}", self.pos)
        body = self.pattern[self.pos + 1 : end] if end > 0 else ""
        lower, _, upper = body.partition(",")
        if end > 0 and lower.isdigit() and (not upper or upper.isdigit()):
            self.out.append(self.pattern[self.pos : end + 1])
            self.pos = end + 1
        else:
            self.out.append("\\{")
            self.pos += 1

    def escape(self) -> None:
        start = self.pos
        code, shorthand = self.read_escape(in_class=False)
        if shorthand is not None:
            letter = self.pattern[start + 1]
            ranges, negated = shorthand
            if self.engine == "rust" or (self.engine == "python" and letter in "sS"):
                self.out.append(_class_text(ranges, negated, self.engine))
            else:
                self.out.append(self.pattern[start : self.pos])
        elif code is None:  # an assertion: \b or \B
            text = self.pattern[start : self.pos]
            self.out.append(f"(?-u:{text})" if self.engine == "rust" else text)
        else:
            self.literal(code, self.pattern[start : self.pos])

    def read_escape(self, *, in_class: bool) -> tuple[int | None, tuple[Ranges, bool] | None]:
        """Consume one escape: (code point, None) for a character, (None, (ranges, negated))
        for a class shorthand, (None, None) for ``\\b``/``\\B``."""
        letter = self.peek(1)
        if not letter:
            raise self.malformed("trailing backslash")
        start = self.pos
        self.pos += 2
        if letter in _SHORTHAND:
            return None, _SHORTHAND[letter]
        if letter in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[letter], None
        if letter in "bB" and not in_class:
            return None, None
        if letter == "x":
            return self.read_hex(), None
        if letter.isdigit():
            raise self.fail(f"\\{letter} (back-reference or octal escape)", start)
        if letter.isascii() and letter.isalpha():
            raise self.fail(f"escape \\{letter} is not in the common subset", start)
        return ord(letter), None

    def read_hex(self) -> int:
        start = self.pos - 2
        if self.peek() == "{":
            end = self.pattern.find("}", self.pos)
            if end < 0:
                raise self.malformed("unclosed \\x{")
            if self.engine == "python":
                raise self.fail("\\x{...} (Python's regex does not read it): write \\xHH", start)
            digits = self.pattern[self.pos + 1 : end]
            self.pos = end + 1
        else:
            digits = self.pattern[self.pos : self.pos + 2]
            self.pos += 2
        try:
            code = int(digits, 16)
        except ValueError:
            raise self.malformed(f"bad hex escape {digits!r}") from None
        if len(digits) == 0 or code > MAX_CODE_POINT:
            raise self.malformed(f"bad hex escape {digits!r}")
        return code

    def open_group(self) -> None:
        text = self.pattern
        if self.peek(1) != "?":
            self.stack.append(_State(**vars(self.state)))
            self.out.append("(" if self.engine == "python" else "(?:")
            self.pos += 1
            return
        if text.startswith("(?P<", self.pos):
            end = text.find(">", self.pos)
            if end < 0:
                raise self.malformed("unclosed group name")
            self.stack.append(_State(**vars(self.state)))
            self.out.append(text[self.pos : end + 1])
            self.pos = end + 1
            return
        if text.startswith("(?:", self.pos):
            self.stack.append(_State(**vars(self.state)))
            self.out.append("(?:")
            self.pos += 3
            return
        self.flag_group()

    def flag_group(self) -> None:
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
            raise self.malformed("unclosed flag group")
        scoped = text[index] == ":"
        if not scoped and self.pos != 0:
            raise self.fail(
                "a flag group (?flags) is only portable at the start: write (?flags:...)"
            )
        state = _State(**vars(self.state))
        for flag in on:
            setattr(state, flag, True)
        for flag in off:
            setattr(state, flag, False)
        keep = "i" if self.engine == "python" else ""
        written_on = "".join(f for f in on if f != "i" or keep)
        written_off = "".join(f for f in off if f != "i" or keep)
        flags = written_on + ("-" + written_off if written_off else "")
        if scoped:
            self.stack.append(state)
            self.out.append(f"(?{flags}:")
        else:
            self.stack[-1] = state
            if flags:
                self.out.append(f"(?{flags})")
        self.pos = index + 1

    # -- classes ------------------------------------------------------------------------------

    def char_class(self) -> None:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        items: list[tuple[int, int]] = []
        uses_space = False
        first = True
        while True:
            char = self.peek()
            if not char:
                raise self.malformed("unclosed character class")
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if char == "[":
                if self.peek(1) != ":":
                    raise self.fail("a bare [ inside a class: write \\[")
                items += self.posix()
                continue
            low, shorthand = self.class_atom()
            if shorthand is not None:
                ranges, negative = shorthand
                uses_space = uses_space or ranges is SPACE
                items += _complement(ranges) if negative else ranges
                continue
            assert low is not None
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high, other = self.class_atom()
                if high is None or other is not None:
                    raise self.fail("a class shorthand cannot end a range")
                if high < low:
                    raise self.malformed("range out of order")
                items.append((low, high))
            else:
                items.append((low, low))
        source = self.pattern[start : self.pos]
        ranges = _normalize(items)
        if self.state.i:
            ranges = _case_closed(ranges)
        if negated:
            ranges = _complement(ranges)
        rewrite = (
            self.engine == "rust"
            or (self.engine == "re2" and self.fold)
            or (self.engine == "python" and uses_space)
        )
        self.out.append(_set_text(ranges, self.engine) if rewrite else source)

    def class_atom(self) -> tuple[int | None, tuple[Ranges, bool] | None]:
        char = self.peek()
        if char == "\\":
            return self.read_escape(in_class=True)
        self.pos += 1
        return ord(char), None

    def posix(self) -> Ranges:
        end = self.pattern.find(":]", self.pos + 2)
        if end < 0:
            raise self.malformed("unclosed POSIX class")
        name = self.pattern[self.pos + 2 : end]
        negated = name.startswith("^")
        ranges = POSIX.get(name.lstrip("^"))
        if ranges is None:
            raise self.malformed(f"unknown POSIX class [:{name}:]")
        self.pos = end + 2
        return _complement(ranges) if negated else ranges


def _is_ascii_letter(code: int) -> bool:
    return 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A


def _char_text(code: int, engine: Engine) -> str:
    char = chr(code)
    if char in _CLASS_SPECIAL:
        return "\\" + char
    if char in _SHORT_ESCAPE:
        return _SHORT_ESCAPE[char]
    if char == " ":
        return char
    if 0x21 <= code <= 0x7E or (code > 0xA0 and char.isprintable() and not char.isspace()):
        return char
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if engine == "python":
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return f"\\x{{{code:x}}}"


def _ranges_text(ranges: Ranges, engine: Engine) -> str:
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_char_text(lo, engine))
        elif hi == lo + 1:
            parts.append(_char_text(lo, engine) + _char_text(hi, engine))
        else:
            parts.append(_char_text(lo, engine) + "-" + _char_text(hi, engine))
    return "".join(parts)


def _set_text(ranges: Ranges, engine: Engine) -> str:
    """A character class matching exactly ``ranges`` (written negated when that is shorter)."""
    if ranges == ((0, MAX_CODE_POINT),):
        return "(?s:.)"
    if not ranges:
        raise UnportableRegex("a character class that matches nothing")
    if ranges[-1][1] == MAX_CODE_POINT:
        return "[^" + _ranges_text(_complement(ranges), engine) + "]"
    return "[" + _ranges_text(ranges, engine) + "]"


def _class_text(ranges: Ranges, negated: bool, engine: Engine) -> str:
    return _set_text(_complement(ranges) if negated else ranges, engine)


@functools.cache
def translate(pattern: str, engine: Engine) -> str:
    """``pattern`` written for ``engine`` so that it follows the matching contract.

    Raises:
        UnportableRegex: the pattern is outside the common subset.
    """
    if engine not in ENGINE_NAMES:
        raise ValueError(f"unknown regex engine {engine!r}")
    try:
        return _Writer(pattern, engine).run()
    except _Malformed:
        return pattern  # each engine reports the syntax error in its own words


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """``text`` with ASCII letters lower-cased and everything else as it is (how a
    case-insensitive signature's anchors are compared)."""
    return text.translate(_ASCII_LOWER)
