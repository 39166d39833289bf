"""The matching engines' writers: Python ``regex`` (the reference backend), RE2 (DuckDB) and
Rust ``regex`` (polars), each given the pattern rewritten so that it implements the matching
contract of :mod:`analyzer.signatures.compile` (see the table in :mod:`..dialect`)."""

from __future__ import annotations

from typing import ClassVar, Final

from analyzer.signatures.dialect.charsets import (
    MAX_CODE_POINT,
    Ranges,
    complement,
    is_ascii_letter,
)
from analyzer.signatures.dialect.tree import (
    Char,
    CharClass,
    End,
    Group,
    SetFlags,
    Shorthand,
    UnportableRegex,
    WordBoundary,
)
from analyzer.signatures.dialect.writer import Writer

#: Characters written escaped inside a class (special in at least one engine there).
_CLASS_SPECIAL: Final = frozenset("\\]{[}^-&~|")
_SHORT_ESCAPE: Final = {"\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", "\v": "\\v"}


class ContractWriter(Writer):
    """What the three matching engines share; each sets the tokens where it differs."""

    #: ``(?i)`` is spelled out (``[Aa]``, classes closed under ASCII case): the engine's own
    #: flag folds non-ASCII letters too (``k`` = KELVIN SIGN).
    spells_out_case: ClassVar[bool] = True
    #: The shorthands written as explicit ASCII classes (the engine's own differ).
    explicit_shorthands: ClassVar[str] = ""
    #: How an unnamed group opens: non-capturing where only the named groups may capture
    #: (DuckDB's ``regexp_extract`` takes them by position).
    capture_opening: ClassVar[str] = "(?:"
    #: ``\b`` / ``\B`` (``{}``: as written).
    boundary: ClassVar[str] = "{}"

    def char(self, node: Char) -> str:
        if node.flags.i and self.spells_out_case and is_ascii_letter(node.code):
            return "[" + chr(node.code).upper() + chr(node.code).lower() + "]"
        return node.source

    def shorthand(self, node: Shorthand) -> str:
        if node.letter in self.explicit_shorthands:
            return self.set_text(node.ranges)
        return node.source

    def word_boundary(self, node: WordBoundary) -> str:
        return self.boundary.format(node.source)

    def char_class(self, node: CharClass) -> str:
        return self.set_text(node.matched) if self.rewrites(node) else node.source

    def rewrites(self, node: CharClass) -> bool:
        """Whether the class is written as the set it matches rather than as written."""
        return True

    def opening(self, node: Group) -> str:
        if node.kind == "capture":
            return self.capture_opening
        if node.kind == "flags":
            return f"(?{self.flag_text(node.on, node.off)}:"
        return node.opening

    def set_flags(self, node: SetFlags) -> str:
        text = self.flag_text(node.on, node.off)
        return f"(?{text})" if text else ""

    def flag_text(self, on: str, off: str) -> str:
        """The flags as this engine gets them (``i`` dropped where it is spelled out)."""
        drop = "i" if self.spells_out_case else ""
        written_on = "".join(flag for flag in on if flag != drop)
        written_off = "".join(flag for flag in off if flag != drop)
        return written_on + ("-" + written_off if written_off else "")

    # -- a set of code points as a class ------------------------------------------------------

    def set_text(self, ranges: Ranges) -> str:
        """A class matching exactly ``ranges`` (written negated when that is shorter)."""
        if ranges == ((0, MAX_CODE_POINT),):
            return "(?s:.)"
        if not ranges:
            raise UnportableRegex("a character class that matches nothing")
        if ranges[-1][1] == MAX_CODE_POINT:
            return "[^" + self.ranges_text(complement(ranges)) + "]"
        return "[" + self.ranges_text(ranges) + "]"

    def ranges_text(self, ranges: Ranges) -> str:
        parts = []
        for lo, hi in ranges:
            if lo == hi:
                parts.append(self.class_char(lo))
            elif hi == lo + 1:
                parts.append(self.class_char(lo) + self.class_char(hi))
            else:
                parts.append(self.class_char(lo) + "-" + self.class_char(hi))
        return "".join(parts)

    def class_char(self, code: int) -> str:
        """One member of a class, escaped where some engine would read it otherwise."""
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
        return self.wide_char(code)

    def wide_char(self, code: int) -> str:
        return f"\\x{{{code:x}}}"


class PythonWriter(ContractWriter):
    """Python ``regex`` with its ASCII flag: ``\\d \\w \\b`` and ``(?i)`` are ASCII already;
    ``\\s`` also takes ``\\v``, and ``$`` also matches before a final newline."""

    spells_out_case = False
    explicit_shorthands = "sS"
    capture_opening = "("

    def char(self, node: Char) -> str:
        _refuse_wide_hex(node.wide_hex_at)
        return super().char(node)

    def char_class(self, node: CharClass) -> str:
        _refuse_wide_hex(node.wide_hex_at)
        return super().char_class(node)

    def rewrites(self, node: CharClass) -> bool:
        return "s" in node.shorthands.lower()

    def end(self, node: End) -> str:
        # Python's "\Z" is the very end, as the others' "$" outside (?m).
        return "$" if node.flags.m else "\\Z"

    def wide_char(self, code: int) -> str:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _refuse_wide_hex(at: int | None) -> None:
    if at is not None:
        raise UnportableRegex(
            f"\\x{{...}} (Python's regex does not read it): write \\xHH (at offset {at})"
        )


class Re2Writer(ContractWriter):
    """RE2 (DuckDB): ASCII classes and boundaries already; ``(?i)`` folds Unicode."""

    def rewrites(self, node: CharClass) -> bool:
        return node.flags.i


class RustWriter(ContractWriter):
    """Rust ``regex`` (polars): Unicode classes and boundaries, so every class is written as
    the ASCII set it matches; ``\\b``/``\\B`` are allowed in ASCII form through ``(?-u:…)``."""

    explicit_shorthands = "dDwWsS"
    boundary = "(?-u:{})"
