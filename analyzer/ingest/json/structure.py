"""The structure of JSON text found with numpy, and the first place where it stops being JSON.

:func:`scan` finds the structural characters outside strings (escape-aware, its state carried
across blocks) and the nesting depth before each; the array framing
(:mod:`analyzer.ingest.json.array`) cuts elements out of a stream with it.

:func:`first_fault` checks, for a stretch of a JSON array (or of top-level objects), what the
depth alone cannot tell: whether the tokens inside each element follow one another as JSON
allows. A missing ``}``, a ``"`` too few or a ``}`` too many shifts the depth or the string
state for everything after it, so one bad element would swallow (or split into bogus
elements) the rest of the array; the fault says where the damage shows, so the framing can
quarantine that element and take up the array again at the next element. The check looks
only at what such damage always shows, each with a few vectorized passes over the tokens: a
close bracket that closes no element, a line break inside a string, a string followed by
anything but ``:``, ``,``, ``}`` or ``]``, an open bracket inside an element that follows
anything but ``:``, ``[`` or ``,`` (or a ``,`` inside an object), a close bracket that does
not match its open one. It is no full validation: the reader's JSON parser checks every
element anyway, and quarantines an element that is not JSON but leaves its neighbours alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

_QUOTE: Final = 34
_BACKSLASH: Final = 92
_OPEN: Final = (123, 91)  # { [
_CLOSE: Final = (125, 93)  # } ]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _table(members: bytes) -> BoolArray:
    """A lookup table of bytes: ``table[buf]`` is ``np.isin(buf, members)``, in one pass."""
    table = np.zeros(256, dtype=np.bool_)
    table[np.frombuffer(members, dtype=np.uint8)] = True
    return table


IS_OPEN: Final = _table(b"{[")
IS_CLOSE: Final = _table(b"}]")
_BLANK: Final = _table(b" \t\r\n")
#: What may follow the end of a string, and what may come before an open bracket inside an
#: element (0: nothing found within reach, let through).
_AFTER_STRING: Final = _table(b"\0:,}]")
_BEFORE_OPEN: Final = _table(b"\0:[,")
#: Longest run of blanks :func:`_neighbour` looks through.
_REACH: Final = 256
#: A token's level and position in one sortable key (positions below 2**38).
_SHIFT: Final = 38
_LEVELS: Final = 1 << 23


@dataclass
class ScanState:
    """Where a scan stands at the end of a block: nesting depth and string state."""

    depth: int = 0
    in_string: bool = False
    escaped: bool = False


@dataclass
class Tokens:
    """The structural characters of a stretch of JSON text that starts outside any string, and
    its quotes."""

    positions: IntArray
    chars: npt.NDArray[np.uint8]
    depth: IntArray  # before each structural character
    quotes: IntArray  # every quote that opens or closes a string, in order
    opens: BoolArray  # which structural characters are open brackets
    closes: BoolArray  # ...and which close brackets
    after: IntArray  # the depth after each structural character
    start_depth: int
    #: The scan state at the end of the stretch.
    end: ScanState


FaultKind = Literal["stray", "reopen", "element"]


@dataclass(frozen=True)
class Fault:
    """Where a stretch of JSON stops being JSON.

    ``stray``: a close bracket between elements that closes nothing (skip that byte).
    ``reopen``: an object after the end of the array (the array's ``]`` came too early; read
    on as if the array went on). ``element``: the tokens at ``position`` cannot follow the
    ones before; ``start`` is the element (or the string between elements) that holds them.
    """

    kind: FaultKind
    position: int
    start: int
    what: str


def _quotes(buf: npt.NDArray[np.uint8], escaped: bool) -> tuple[IntArray, bool]:
    """Positions of the quotes not escaped by a backslash, and whether the block ends inside
    an escape (an odd run of backslashes at its very end)."""
    quotes = np.flatnonzero(buf == _QUOTE)
    # The block may start with an escaped character: neither a quote nor a backslash there
    # counts.
    first = 1 if escaped and len(buf) else 0
    if first:
        quotes = quotes[quotes != 0]
    # Only a quote right after a backslash can be escaped: the runs of backslashes are
    # measured for those few, not searched for every quote.
    after_slash = quotes >= first + 1
    after_slash[after_slash] = buf[quotes[after_slash] - 1] == _BACKSLASH
    ends_with_slash = len(buf) > first and buf[-1] == _BACKSLASH
    if not (ends_with_slash or after_slash.any()):
        return quotes.astype(np.int64), False
    slashes = np.flatnonzero(buf[first:] == _BACKSLASH) + first
    run_start = np.ones(len(slashes), dtype=np.bool_)
    run_start[1:] = slashes[1:] != slashes[:-1] + 1
    first_of_run = np.maximum.accumulate(np.where(run_start, np.arange(len(slashes)), 0))
    last = np.searchsorted(slashes, quotes[after_slash]) - 1  # the backslash before each
    escaped_quote = (last - first_of_run[last] + 1) % 2 == 1
    keep = np.ones(len(quotes), dtype=np.bool_)
    keep[np.flatnonzero(after_slash)[escaped_quote]] = False
    ends_escaped = ends_with_slash and (len(slashes) - first_of_run[-1]) % 2 == 1
    return quotes[keep].astype(np.int64), bool(ends_escaped)


def _structural(buf: npt.NDArray[np.uint8]) -> IntArray:
    """Positions of the bytes ``{[}],`` (five comparisons cost less than one table lookup
    per byte)."""
    found = buf == 44
    for char in (*_OPEN, *_CLOSE):
        found |= buf == char
    return np.flatnonzero(found)


def _scan(
    block: bytes, state: ScanState
) -> tuple[IntArray, npt.NDArray[np.uint8], IntArray, IntArray, BoolArray, BoolArray, IntArray]:
    buf = np.frombuffer(block, dtype=np.uint8)
    quotes, ends_escaped = _quotes(buf, state.escaped)
    found = _structural(buf)
    quotes_before = np.searchsorted(quotes, found)
    outside = (quotes_before % 2 == 1) == state.in_string
    positions = found[outside].astype(np.int64)
    chars = buf[positions]
    opens, closes = IS_OPEN[chars], IS_CLOSE[chars]
    delta = opens.astype(np.int64) - closes
    depth_after = state.depth + np.cumsum(delta)
    depth_before = depth_after - delta
    if len(positions):
        state.depth = int(depth_after[-1])
    state.in_string = state.in_string != (len(quotes) % 2 == 1)
    state.escaped = ends_escaped and state.in_string
    return positions, chars, depth_before, quotes, opens, closes, depth_after


def scan(block: bytes, state: ScanState) -> tuple[IntArray, npt.NDArray[np.uint8], IntArray]:
    """Structural characters of ``block`` outside strings.

    Returns their positions, the characters, and the depth *before* each; ``state`` is updated
    to the state after the block.
    """
    positions, chars, depth, *_ = _scan(block, state)
    return positions, chars, depth


def tokens(data: bytes, depth: int) -> Tokens:
    """The tokens of ``data``, which starts outside any string at nesting ``depth``."""
    state = ScanState(depth=depth)
    return Tokens(*_scan(data, state), depth, state)


def first_fault(data: bytes, tok: Tokens, newlines: IntArray, *, objects: bool) -> Fault | None:
    """The first place in ``data`` where it stops being a JSON array's elements (or, with
    ``objects``, a sequence of top-level objects); None when there is none.

    ``newlines`` are the positions of ``\\n`` in ``data``. A cut at the end of ``data`` (a
    string or an element still open) is no fault: the next block may finish it.
    """
    found = (
        _stray(tok, objects),
        _broken_string(tok, newlines, objects),
        _after_string(data, tok),
        _bad_open(data, tok),
        _bad_close(tok),
    )
    faults = [f for f in found if f is not None]
    return min(faults, key=lambda f: f.position) if faults else None


def _stray(tok: Tokens, objects: bool) -> Fault | None:
    """A close bracket that closes no element, or an object after the array closed."""
    chars, depth = tok.chars, tok.depth
    if objects:
        stray = tok.closes & (depth <= 1)
        reopen = np.zeros(len(chars), dtype=np.bool_)
    else:
        stray = ((chars == _CLOSE[0]) & (depth <= 1)) | ((chars == _CLOSE[1]) & (depth <= 0))
        reopen = (chars == _OPEN[0]) & (depth <= 0)
    hits = np.flatnonzero(stray | reopen)
    if not hits.size:
        return None
    index = int(hits[0])
    position = int(tok.positions[index])
    if reopen[index]:
        return Fault("reopen", position, position, "an object after the end of the array")
    what = f"a stray '{chr(chars[index])}' between elements"
    return Fault("stray", position, position, what)


def _depth_at(tok: Tokens, places: IntArray) -> IntArray:
    """Nesting depth at byte positions that hold no structural character."""
    if not tok.positions.size:
        return np.full(len(places), tok.start_depth, dtype=np.int64)
    index = np.searchsorted(tok.positions, places) - 1
    return np.where(index >= 0, tok.after[np.maximum(index, 0)], tok.start_depth)


def _element_start(tok: Tokens, position: int) -> int:
    """Start of the element open at ``position`` (the last ``{``/``[`` at depth 1 before it)."""
    before = tok.positions < position
    opens = np.flatnonzero(before & tok.opens & (tok.depth == 1))
    return int(tok.positions[opens[-1]]) if opens.size else position


def _broken_string(tok: Tokens, newlines: IntArray, objects: bool) -> Fault | None:
    """A line break inside a string: JSON strings never hold one, so a ``"`` is missing (or
    one too many) and the string state is upside down from there on."""
    if not newlines.size or not tok.quotes.size:
        return None
    inside = np.searchsorted(tok.quotes, newlines) % 2 == 1
    places = newlines[inside]
    if not places.size:
        return None
    depth = _depth_at(tok, places)
    # Outside the array (before it, after it) text is quarantined as it stands.
    places = places[depth >= 1] if not objects else places
    if not places.size:
        return None
    position = int(places[0])
    opened = int(tok.quotes[np.searchsorted(tok.quotes, position) - 1])
    start = _element_start(tok, position) if int(_depth_at(tok, places[:1])[0]) >= 2 else opened
    return Fault("element", position, start, "a line break inside a string (a '\"' is missing?)")


def _after_string(data: bytes, tok: Tokens) -> Fault | None:
    """A string inside an element followed by something no JSON allows there: a ``"`` is
    missing or one too many, and what were strings is now read as text between them."""
    ends = tok.quotes[1::2]
    if not ends.size:
        return None
    following = _neighbour(np.frombuffer(data, dtype=np.uint8), ends, 1)
    bad = ends[~_AFTER_STRING[following]]
    if bad.size:
        # Strings between elements are junk, quarantined as such: only those inside count.
        bad = bad[_depth_at(tok, bad) >= 2]
    if not bad.size:
        return None
    where = int(bad[0])
    what = "text after a string (a '\"' is missing?)"
    return Fault("element", where, _element_start(tok, where), what)


def _bad_open(data: bytes, tok: Tokens) -> Fault | None:
    """An open bracket inside an element where no value can start: after anything but
    ``:``, ``[`` or ``,``, or after a ``,`` inside an object. The next element's ``{`` looks
    like this when the element before it lost its ``}``."""
    inner = tok.opens & (tok.depth >= 2)
    places = tok.positions[inner]
    if not places.size:
        return None
    before = _neighbour(np.frombuffer(data, dtype=np.uint8), places, -1)
    bad = ~_BEFORE_OPEN[before]
    after_comma = np.flatnonzero(before == ord(","))
    if after_comma.size:
        container = _container(tok, places[after_comma], tok.depth[inner][after_comma])
        bad[after_comma[container == _OPEN[0]]] = True
    if not bad.any():
        return None
    index = int(np.flatnonzero(bad)[0])
    where = int(places[index])
    char, previous = chr(data[where]), chr(before[index])
    what = (
        f"'{char}' where a key was expected (a '}}' is missing?)"
        if previous == ","
        else f"'{char}' after '{previous}' (a '}}' or ',' is missing?)"
    )
    return Fault("element", where, _element_start(tok, where), what)


def _bad_close(tok: Tokens) -> Fault | None:
    """A close bracket inside an element that does not match the bracket it closes.

    At each nesting level brackets alternate, open then close: sorted by level (a stable
    sort, so in order within a level), each close follows the open it closes.
    """
    brackets = tok.opens | tok.closes
    levels = np.where(tok.opens, tok.after, tok.depth)[brackets]
    inner = levels >= 2
    if not inner.any():
        return None
    levels = levels[inner]
    chars = tok.chars[brackets][inner]
    places = tok.positions[brackets][inner]
    if int(levels.max()) < (1 << 15):
        levels = levels.astype(np.int16)  # a stable sort of 16-bit keys is a radix sort
    order = np.argsort(levels, kind="stable")
    chars, levels, places = chars[order], levels[order], places[order]
    closing = IS_CLOSE[chars]
    paired = np.zeros(len(chars), dtype=np.bool_)
    paired[1:] = closing[1:] & ~closing[:-1] & (levels[1:] == levels[:-1])
    opener = np.zeros(len(chars), dtype=np.uint8)
    opener[1:] = chars[:-1]
    wanted = np.where(chars == _CLOSE[0], _OPEN[0], _OPEN[1])
    bad = np.flatnonzero(paired & (opener != wanted))
    if not bad.size:
        return None
    index = int(bad[np.argmin(places[bad])])
    where = int(places[index])
    what = f"'{chr(chars[index])}' closes a '{chr(opener[index])}'"
    return Fault("element", where, _element_start(tok, where), what)


def _neighbour(buf: npt.NDArray[np.uint8], places: IntArray, step: int) -> npt.NDArray[np.uint8]:
    """The first non-blank byte after (``step`` 1) or before (-1) each place; 0 where there is
    none within :data:`_REACH` bytes or before the edge of the data."""
    at = places + step
    inside = (at >= 0) & (at < len(buf))
    found = np.zeros(len(places), dtype=np.uint8)
    found[inside] = buf[at[inside]]
    # Most neighbours are right there; the loop only follows the runs of blanks.
    todo = np.flatnonzero(_BLANK[found])
    found[todo] = 0
    for _ in range(_REACH):
        if not todo.size:
            break
        at[todo] += step
        here = at[todo]
        inside = (here >= 0) & (here < len(buf))
        todo, here = todo[inside], here[inside]
        byte = buf[here]
        blank = _BLANK[byte]
        found[todo[~blank]] = byte[~blank]
        todo = todo[blank]
    return found


def _container(tok: Tokens, places: IntArray, levels: IntArray) -> npt.NDArray[np.uint8]:
    """The open bracket (``{`` or ``[``; 0 when it opened before the data) that holds each
    place, given the nesting level there: the last open bracket before it whose depth after
    is that level."""
    opens = tok.opens
    if not opens.any():
        return np.zeros(len(places), dtype=np.uint8)
    keys = _key(tok.after[opens], tok.positions[opens])
    order = np.argsort(keys, kind="stable")
    keys, chars = keys[order], tok.chars[opens][order]
    wanted = _key(levels, places)
    index = np.searchsorted(keys, wanted) - 1
    safe = np.maximum(index, 0)
    same_level = (index >= 0) & ((keys[safe] >> _SHIFT) == (wanted >> _SHIFT))
    return np.where(same_level, chars[safe], 0).astype(np.uint8)


def _key(levels: IntArray, places: IntArray) -> IntArray:
    clipped = np.clip(levels, 1 - _LEVELS, _LEVELS - 1) + _LEVELS
    return (clipped.astype(np.int64) << _SHIFT) | places
