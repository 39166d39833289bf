"""Sets of code points as sorted, merged ``(low, high)`` ranges: what a character class or a
class shorthand matches, computed once and written back by each engine's writer."""

from __future__ import annotations

from typing import Final

MAX_CODE_POINT: Final = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]


def normalize(pairs: list[tuple[int, int]]) -> Ranges:
    """``pairs`` sorted, with overlapping and adjacent ranges merged."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(pairs):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def complement(ranges: Ranges) -> Ranges:
    """Every code point not in ``ranges``."""
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


def case_closed(ranges: Ranges) -> Ranges:
    """``ranges`` plus the other ASCII case of every ASCII letter in it."""
    extra: list[tuple[int, int]] = []
    for lo, hi in ranges:
        for first, last, shift in ((0x41, 0x5A, 32), (0x61, 0x7A, -32)):
            a, b = max(lo, first), min(hi, last)
            if a <= b:
                extra.append((a + shift, b + shift))
    return normalize([*ranges, *extra])


def is_ascii_letter(code: int) -> bool:
    return 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A


def _ranges(*pairs: tuple[str, str]) -> Ranges:
    return normalize([(ord(lo), ord(hi)) for lo, hi in pairs])


DIGIT: Final = _ranges(("0", "9"))
WORD: Final = _ranges(("0", "9"), ("A", "Z"), ("_", "_"), ("a", "z"))
#: RE2's ``\\s`` (no vertical tab), which the matching contract adopts.
SPACE: Final = _ranges(("\t", "\n"), ("\f", "\r"), (" ", " "))
ASCII: Final = _ranges(("\x00", "\x7f"))
#: ASCII POSIX classes, as RE2 and Rust define them (and GNU grep in the C locale).
POSIX: Final[dict[str, Ranges]] = {
    "alnum": _ranges(("0", "9"), ("A", "Z"), ("a", "z")),
    "alpha": _ranges(("A", "Z"), ("a", "z")),
    "ascii": ASCII,
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
#: The class each shorthand letter stands for (an upper-case letter: its complement).
SHORTHAND: Final[dict[str, Ranges]] = {"d": DIGIT, "w": WORD, "s": SPACE}


def shorthand_ranges(letter: str) -> Ranges:
    """What ``\\d``, ``\\D``, ``\\w``, ``\\W``, ``\\s`` or ``\\S`` matches under the contract."""
    ranges = SHORTHAND[letter.lower()]
    return complement(ranges) if letter.isupper() else ranges


def codes(ranges: Ranges) -> frozenset[int]:
    """The code points of ``ranges`` as a set (for small, ASCII sets only)."""
    return frozenset(code for lo, hi in ranges for code in range(lo, hi + 1))
