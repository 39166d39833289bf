"""The writers of the matching benchmark's baselines: POSIX ERE for ``grep -E`` and the
catalogue's own text as ripgrep takes it.

Both run over the case's messages exported one per line, every newline inside a message
replaced by a space, so a pattern never meets a newline.

**ere** (``LC_ALL=C grep -E -f``): ERE has no inline flags, lazy quantifiers or shorthands, so

* groups of every kind become plain ``(...)``; ``(?m)`` and ``(?s)`` are dropped (``^`` and
  ``$`` are then the message's ends, as without ``(?m)``);
* ``\\d`` becomes ``[0-9]``, ``\\w`` ``[[:alnum:]_]``, ``\\s`` ``[[:space:]]`` and their
  negations ``[^...]``; a bracket expression is computed as a set of bytes and written back
  (``]`` first, ``-`` last), so ``[^,\\s\\[]`` and ``[\\s\\S]`` come out right;
* ``(?i)`` spells each ASCII letter as ``[Aa]`` and closes each class under ASCII case;
* a lazy quantifier loses its ``?``: ``grep -c`` only asks whether a line matches, and a lazy
  and a greedy quantifier match the same lines;
* ``\\b`` and ``\\B`` stay (GNU extensions; in the C locale a word character is
  ``[[:alnum:]_]``, as in the matching contract);
* a literal newline becomes a space (the character that replaced it) and ``[^\\n]`` any byte;
* escaped punctuation is written bare unless it is special in ERE (GNU grep warns about a
  "stray \\" before other characters), ``\\t`` and the other control escapes as the byte.

What ERE cannot say raises :class:`UnportableRegex`: a class with a non-ASCII member, a
possessive or repeated quantifier, a class that matches nothing, and any malformed pattern
(grep might read it some other way without a word).

**ripgrep** (``rg -c -f``) reads Rust ``regex`` syntax, the engine polars runs. It is given
the catalogue's own regexes, written as they are except where ripgrep requires: it joins all
``-f`` patterns into one alternation, where a group name may occur once, so named groups
become plain ``(``; it matches line by line and refuses a literal newline, so ``[^\\n]``
becomes ``.`` (the same in a line) and a ``\\n`` outside a class ``\\x20`` (the space that
replaced it). A ``\\n`` inside another class stays: ripgrep takes it.
"""

from __future__ import annotations

from typing import ClassVar, Final

from analyzer.signatures.dialect.charsets import ASCII, SHORTHAND, codes, is_ascii_letter
from analyzer.signatures.dialect.tree import (
    Char,
    CharClass,
    Group,
    Repeat,
    SetFlags,
    Shorthand,
    StrayClose,
    UnportableRegex,
)
from analyzer.signatures.dialect.writer import Writer

#: Characters written with a backslash outside a bracket expression.
_SPECIAL: Final = frozenset(".[]()*+?{}|^$\\")
_NEWLINE: Final = 0x0A
_ASCII: Final = codes(ASCII)
_LOWER_SHORTHAND: Final = {"d": "[0-9]", "w": "[[:alnum:]_]", "s": "[[:space:]]"}


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
    """One ASCII character outside a bracket expression."""
    if code == _NEWLINE:
        return " "
    if fold and is_ascii_letter(code):
        return bracket(frozenset((code & ~0x20, code | 0x20)))
    char = chr(code)
    return "\\" + char if char in _SPECIAL else char


def _set_text(members: frozenset[int], *, negated: bool) -> str:
    """A set of ASCII bytes (``negated``: every byte outside it) as ERE."""
    if negated:
        members = members - {_NEWLINE}
        return "." if not members else bracket(members, negated=True)
    if _NEWLINE in members:  # a newline is a space in the exported text
        members = (members - {_NEWLINE}) | {0x20}
    if not members:
        raise UnportableRegex("a character class that matches nothing")
    if len(members) == 1:
        return _char(next(iter(members)), fold=False)
    return bracket(members)


def _fold(members: frozenset[int]) -> frozenset[int]:
    """``members`` plus the other ASCII case of each ASCII letter in it."""
    return members | {code ^ 0x20 for code in members if is_ascii_letter(code)}


class EreWriter(Writer):
    """POSIX extended regular expressions with GNU grep's extensions, over bytes (``LC_ALL=C``)."""

    passes_malformed: ClassVar[bool] = False

    def char(self, node: Char) -> str:
        return _char(node.code, node.flags.i) if node.code < 0x80 else chr(node.code)

    def shorthand(self, node: Shorthand) -> str:
        if node.letter.islower():
            return _LOWER_SHORTHAND[node.letter]
        return _set_text(codes(SHORTHAND[node.letter.lower()]), negated=True)

    def char_class(self, node: CharClass) -> str:
        if any(hi >= 0x80 for _, hi in node.named):
            raise UnportableRegex("a character class with a non-ASCII member")
        members = codes(tuple((lo, min(hi, 0x7F)) for lo, hi in node.members if lo < 0x80))
        if node.flags.i:
            members = _fold(members)
        # A negated shorthand (\S, \W, \D) brings in every non-ASCII character: the class is
        # then written as the ASCII bytes it leaves out.
        beyond = any(letter.isupper() for letter in node.shorthands)
        if beyond != node.negated:
            return _set_text(members if node.negated else _ASCII - members, negated=True)
        return _set_text(_ASCII - members if node.negated else members, negated=False)

    def group(self, node: Group) -> str:
        if not node.closed:
            raise UnportableRegex("an unclosed group")
        return "(" + self.write(node.body) + ")"

    def set_flags(self, node: SetFlags) -> str:
        return ""  # (?i) is spelled out where it applies; (?m) and (?s) change nothing here

    def repeat(self, node: Repeat) -> str:
        if node.stacked:
            raise UnportableRegex("a possessive or repeated quantifier")
        return node.greedy

    def stray_close(self, node: StrayClose) -> str:
        raise UnportableRegex("an unbalanced )")


class RipgrepWriter(Writer):
    """The catalogue's own text, adapted only where ripgrep requires (see the module)."""

    def char(self, node: Char) -> str:
        return "\\x20" if node.source == "\\n" else node.source

    def char_class(self, node: CharClass) -> str:
        return "." if node.source == "[^\\n]" else node.source

    def opening(self, node: Group) -> str:
        return "(" if node.kind == "named" else node.opening
