"""Signature regexes as POSIX extended regular expressions, for the ``grep -E -f`` baseline.

The matching benchmark (``python -m benchmarks.match``) times ``grep -E -c -f PATTERNS
MESSAGES`` (``LC_ALL=C``: bytes, ASCII classes) on the case's messages, exported one message
per line with the newlines inside a message replaced by a space. :func:`translate` writes one
catalogue regex (the signature dialect of :mod:`analyzer.signatures.dialect`) as ERE:

* groups ``(...)``, ``(?:...)``, ``(?P<name>...)`` and scoped flag groups ``(?flags:...)``
  become plain ``(...)``;
* ``\\d`` becomes ``[0-9]``, ``\\w`` ``[[:alnum:]_]``, ``\\s`` ``[[:space:]]`` and their
  negations ``[^...]``; inside a bracket expression the class is computed as a set of bytes
  and written back (``]`` first, ``-`` last), so ``[^,\\s\\[]`` and ``[\\s\\S]`` come out
  right;
* ``(?i)`` (at the start, or scoped ``(?i:...)``) spells each ASCII letter as ``[aA]`` and
  closes each class under ASCII case, since ERE has no inline flags;
* lazy quantifiers lose their ``?`` (``*?`` becomes ``*``): ``grep -c`` only asks whether a
  line matches, and a lazy and a greedy quantifier match the same lines;
* ``\\b`` and ``\\B`` stay: they are GNU extensions, not POSIX, read by GNU grep and ripgrep
  (in the C locale a word character is ``[[:alnum:]_]``, as in the matching contract);
* the text has no newlines, so a literal ``\\n`` becomes a space (the character that replaced
  it), ``[^\\n]`` any byte (``.``), and the flags ``(?m)`` and ``(?s)`` are dropped (``^`` and
  ``$`` are then the message's ends, as without ``(?m)``);
* escaped punctuation is written bare unless it is special in ERE (GNU grep warns about a
  "stray \\" before other characters), ``\\t`` and the other control escapes as the byte.

What ERE cannot say raises :class:`Untranslatable`: back-references, look-around and other
``(?`` groups, unknown escapes, a class with a non-ASCII member, possessive quantifiers, a
class that matches nothing. :func:`grep_rejects` asks grep itself about each translated
pattern; the benchmark leaves out (and lists) every pattern that is untranslatable or
rejected.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from typing import Final

#: Characters written with a backslash outside a bracket expression.
SPECIAL: Final = frozenset(".[]()*+?{}|^$\\")
_DIGIT: Final = frozenset(range(0x30, 0x3A))
_ALNUM: Final = _DIGIT | frozenset(range(0x41, 0x5B)) | frozenset(range(0x61, 0x7B))
_WORD: Final = _ALNUM | {0x5F}
#: The contract's ``\\s`` (RE2's: no vertical tab).
_SPACE: Final = frozenset((0x09, 0x0A, 0x0C, 0x0D, 0x20))
_SHORTHAND: Final = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_SHORTHAND_TEXT: Final = {"d": "[0-9]", "w": "[[:alnum:]_]", "s": "[[:space:]]"}
_POSIX: Final[dict[str, frozenset[int]]] = {
    "alnum": _ALNUM,
    "alpha": _ALNUM - _DIGIT,
    "ascii": frozenset(range(0x80)),
    "blank": frozenset((0x09, 0x20)),
    "cntrl": frozenset(range(0x20)) | {0x7F},
    "digit": _DIGIT,
    "graph": frozenset(range(0x21, 0x7F)),
    "lower": frozenset(range(0x61, 0x7B)),
    "print": frozenset(range(0x20, 0x7F)),
    "punct": frozenset(range(0x21, 0x7F)) - _ALNUM,
    "space": frozenset((0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20)),
    "upper": frozenset(range(0x41, 0x5B)),
    "word": _WORD,
    "xdigit": _DIGIT | frozenset(range(0x41, 0x47)) | frozenset(range(0x61, 0x67)),
}
_CHAR_ESCAPES: Final = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07}
_NEWLINE: Final = 0x0A
_ASCII: Final = frozenset(range(0x80))
_FLAGS: Final = frozenset("ims")


class Untranslatable(ValueError):
    """The pattern uses something POSIX ERE (with GNU grep's extensions) cannot say."""


def _fold(members: frozenset[int]) -> frozenset[int]:
    """``members`` plus the other ASCII case of each ASCII letter in it."""
    extra = {c ^ 0x20 for c in members if 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A}
    return members | extra


def _runs(members: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for code in sorted(members):
        if runs and code == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return runs


def bracket(members: frozenset[int], *, negated: bool = False) -> str:
    """A bracket expression matching the bytes ``members`` (all ASCII, no newline), or all
    bytes but them when ``negated``: ``]`` first, then ranges, then ``[``, ``^`` and ``-`` where
    they are literal."""
    if members == {ord("^")} and not negated:  # "[^]" would be a negation
        return "\\^"
    specials = {ord(c) for c in "]^-["}
    body = "]" if ord("]") in members else ""
    for lo, hi in _runs([c for c in members if c not in specials]):
        if hi - lo >= 2:
            body += f"{chr(lo)}-{chr(hi)}"
        else:
            body += "".join(chr(c) for c in range(lo, hi + 1))
    if ord("[") in members:
        body += "["
    caret, dash = ord("^") in members, ord("-") in members
    if caret and (body or negated):
        body += "^" + ("-" if dash else "")
    elif caret:  # "^" alone first would negate: put "-" (literal when first) before it
        body += ("-" if dash else "") + "^"
    elif dash:
        body += "-"
    return ("[^" if negated else "[") + body + "]"


def _char(code: int, fold: bool) -> str:
    """One character outside a bracket expression."""
    if code == _NEWLINE:
        return " "
    if fold and (0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A):
        return bracket(frozenset((code & ~0x20, code | 0x20)))
    char = chr(code)
    if char in SPECIAL:
        return "\\" + char
    return char


def _set_text(members: frozenset[int], negated: bool) -> str:
    """A class of code points (``negated``: every code point outside ``members``) as ERE."""
    if members - _ASCII:
        raise Untranslatable("a character class with a non-ASCII member")
    if negated:
        members = members - {_NEWLINE}
        return "." if not members else bracket(members, negated=True)
    if _NEWLINE in members:  # a newline is a space in the exported text
        members = (members - {_NEWLINE}) | {0x20}
    if not members:
        raise Untranslatable("a character class that matches nothing")
    if len(members) == 1:
        return _char(next(iter(members)), fold=False)
    return bracket(members)


@dataclass
class _Writer:
    pattern: str
    pos: int = 0
    out: list[str] = field(default_factory=list)
    #: The case-insensitivity flag of every open group (the first: the whole pattern).
    fold: list[bool] = field(default_factory=lambda: [False])
    #: Whether the last thing written was a quantifier (a following ``?`` makes it lazy).
    quantified: bool = False

    def fail(self, what: str) -> Untranslatable:
        return Untranslatable(f"{what} (at offset {self.pos})")

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.pattern[index] if index < len(self.pattern) else ""

    def run(self) -> str:
        while self.pos < len(self.pattern):
            char = self.pattern[self.pos]
            quantifier = False
            if char == "\\":
                self.escape()
            elif char == "[":
                self.out.append(self.char_class())
            elif char == "(":
                self.open_group()
            elif char == ")":
                if len(self.fold) == 1:
                    raise self.fail("unbalanced )")
                self.fold.pop()
                self.out.append(")")
                self.pos += 1
            elif char in "*+?":
                if self.quantified:
                    if char != "?":
                        raise self.fail("a possessive or repeated quantifier")
                    self.pos += 1  # lazy: the same lines match
                    self.quantified = False
                    continue
                self.out.append(char)
                self.pos += 1
                quantifier = True
            elif char == "{":
                quantifier = self.brace()
            elif char in "^$.|":
                self.out.append(char)
                self.pos += 1
            else:
                self.out.append(_char(ord(char), self.fold[-1]) if ord(char) < 0x80 else char)
                self.pos += 1
            self.quantified = quantifier
        if len(self.fold) != 1:
            raise self.fail("unclosed group")
        return "".join(self.out)

    def brace(self) -> bool:
        """A counted repetition passes through (True); any other ``{`` is a literal."""
        end = self.pattern.find("}", self.pos)
        body = self.pattern[self.pos + 1 : end] if end > 0 else ""
        lower, _, upper = body.partition(",")
        if end > 0 and lower.isdigit() and (not upper or upper.isdigit()):
            if self.quantified:
                raise self.fail("a repeated quantifier")
            self.out.append(self.pattern[self.pos : end + 1])
            self.pos = end + 1
            return True
        self.out.append("\\{")
        self.pos += 1
        return False

    def read_escape(self, *, in_class: bool) -> tuple[int | None, str | None]:
        """Consume one escape: ``(code, None)`` for a character, ``(None, letter)`` for a class
        shorthand (``d D w W s S``) or an assertion (``b B``, outside a class)."""
        letter = self.peek(1)
        if not letter:
            raise self.fail("trailing backslash")
        self.pos += 2
        if letter in "dDwWsS" or (letter in "bB" and not in_class):
            return None, letter
        if letter in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[letter], None
        if letter == "x":
            return self.read_hex(), None
        if letter.isascii() and letter.isalnum():
            raise self.fail(f"escape \\{letter}")
        return ord(letter), None

    def read_hex(self) -> int:
        if self.peek() == "{":
            end = self.pattern.find("}", self.pos)
            digits = self.pattern[self.pos + 1 : end] if end > 0 else ""
            self.pos = end + 1 if end > 0 else len(self.pattern)
        else:
            digits = self.pattern[self.pos : self.pos + 2]
            self.pos += 2
        try:
            return int(digits, 16)
        except ValueError:
            raise self.fail(f"bad hex escape {digits!r}") from None

    def escape(self) -> None:
        code, letter = self.read_escape(in_class=False)
        if letter is None:
            assert code is not None
            self.out.append(_char(code, self.fold[-1]) if code < 0x80 else chr(code))
        elif letter in "bB":
            self.out.append("\\" + letter)
        elif letter.islower():
            self.out.append(_SHORTHAND_TEXT[letter])
        else:
            self.out.append(_set_text(_SHORTHAND[letter.lower()], negated=True))

    def open_group(self) -> None:
        text = self.pattern
        if self.peek(1) != "?":
            self.pos += 1
        elif text.startswith("(?P<", self.pos):
            end = text.find(">", self.pos)
            if end < 0:
                raise self.fail("unclosed group name")
            self.pos = end + 1
        elif text.startswith("(?:", self.pos):
            self.pos += 3
        else:
            self.flag_group()
            return
        self.fold.append(self.fold[-1])
        self.out.append("(")

    def flag_group(self) -> None:
        """``(?flags)`` at the start or ``(?flags:...)``; anything else after ``(?`` fails."""
        index = self.pos + 2
        on: set[str] = set()
        off: set[str] = set()
        target = "on"
        while index < len(self.pattern) and self.pattern[index] not in ":)":
            char = self.pattern[index]
            if char == "-" and target == "on":
                target = "off"
            elif char in _FLAGS:
                (on if target == "on" else off).add(char)
            else:
                raise self.fail(f"the group (?{char}")
            index += 1
        if index >= len(self.pattern):
            raise self.fail("unclosed flag group")
        fold = ("i" in on) or (self.fold[-1] and "i" not in off)
        if self.pattern[index] == ":":
            self.fold.append(fold)
            self.out.append("(")
        elif self.pos == 0:
            self.fold[-1] = fold
        else:
            raise self.fail("a flag group (?flags) after the start")
        self.pos = index + 1

    def char_class(self) -> str:
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        members: set[int] = set()
        beyond = False  # every non-ASCII code point is in (through \\S, \\W or \\D)
        first = True
        while True:
            char = self.peek()
            if not char:
                raise self.fail("unclosed character class")
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if char == "[" and self.peek(1) == ":":
                members |= self.posix()
                continue
            low, letter = self.class_atom()
            if letter is not None:
                shorthand = _SHORTHAND[letter.lower()]
                members |= shorthand if letter.islower() else _ASCII - shorthand
                beyond = beyond or letter.isupper()
                continue
            assert low is not None
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high, other = self.class_atom()
                if high is None or other is not None or high < low:
                    raise self.fail("a bad range in a class")
                members |= set(range(low, high + 1))
            else:
                members.add(low)
        if any(code >= 0x80 for code in members):
            raise self.fail("a character class with a non-ASCII member")
        ascii_members = frozenset(members)
        if self.fold[-1]:
            ascii_members = _fold(ascii_members)
        if beyond != negated:
            # Every non-ASCII code point is in: written as the ASCII bytes left out.
            return _set_text(ascii_members if negated else _ASCII - ascii_members, negated=True)
        return _set_text(_ASCII - ascii_members if negated else ascii_members, negated=False)

    def class_atom(self) -> tuple[int | None, str | None]:
        if self.peek() == "\\":
            return self.read_escape(in_class=True)
        char = self.peek()
        self.pos += 1
        return ord(char), None

    def posix(self) -> set[int]:
        end = self.pattern.find(":]", self.pos + 2)
        if end < 0:
            raise self.fail("unclosed POSIX class")
        name = self.pattern[self.pos + 2 : end]
        if name not in _POSIX:
            raise self.fail(f"POSIX class [:{name}:]")
        self.pos = end + 2
        return set(_POSIX[name])


def translate(pattern: str) -> str:
    """``pattern`` (a signature regex) as a POSIX extended regular expression for one line of
    the exported messages (see the module docstring).

    Raises:
        Untranslatable: ERE cannot say it.
    """
    return _Writer(pattern).run()


@dataclass(frozen=True)
class Translation:
    """The catalogue as ERE: the translated patterns (with their signature codes) and the
    signatures left out, each with why."""

    patterns: tuple[tuple[str, str], ...]
    left_out: tuple[tuple[str, str], ...]


def translate_all(regexes: list[tuple[str, str]], grep: str | None = "grep") -> Translation:
    """Translate ``(code, regex)`` pairs; when ``grep`` is given, also leave out the patterns
    it rejects (:func:`grep_rejects`)."""
    kept: list[tuple[str, str]] = []
    left_out: list[tuple[str, str]] = []
    for code, regex in regexes:
        try:
            ere = translate(regex)
        except Untranslatable as exc:
            left_out.append((code, str(exc)))
            continue
        if "\n" in ere:  # cannot be one line of a patterns file
            left_out.append((code, "a newline in the translated pattern"))
            continue
        problem = grep_rejects(ere, grep) if grep else None
        if problem:
            left_out.append((code, f"grep: {problem}"))
        else:
            kept.append((code, ere))
    return Translation(tuple(kept), tuple(left_out))


def grep_rejects(pattern: str, grep: str = "grep") -> str | None:
    """What ``grep -E`` (``LC_ALL=C``) says about ``pattern`` (an error or a warning), or
    None when it takes it silently."""
    done = subprocess.run(
        [grep, "-E", "-c", "-e", pattern],
        input=b"",
        capture_output=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    message = done.stderr.decode(errors="replace").strip()
    if done.returncode > 1 or message:
        return message.splitlines()[0] if message else f"exit {done.returncode}"
    return None
