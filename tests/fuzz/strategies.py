"""Hypothesis strategies that damage valid reader samples (``tests/samples``).

A :class:`Mutation` is a small frozen dataclass with an ``apply(data) -> data`` method; its repr
is what hypothesis prints for a failing example, so a minimized failure reads as a recipe
("truncate at 17, then inject NUL at 3"). Positions are drawn as plain integers and taken modulo
the length of the data they apply to, so one mutation works on any sample (and shrinks to 0).

Mutations: truncation, splicing two samples (or one with itself), byte flips, NUL bytes,
invalid UTF-8, a giant line (2–3 MiB, over ``ReadOptions.max_line_bytes``), deeply nested JSON
as a line or an array element, JSON fields injected into objects (duplicate keys, wrong types,
out-of-range times), timestamps in the text replaced by out-of-range ones, mixed line endings,
byte-order marks (UTF-8, UTF-16, UTF-32, or the whole file as UTF-16), and repeated lines.
:func:`mutations` combines several per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hypothesis import strategies as st

from tests.helpers import SAMPLES

#: Every sample file, by family (the folder under tests/samples): family -> {name: bytes}.
FAMILIES: Final[dict[str, dict[str, bytes]]] = {
    family.name: {p.name: p.read_bytes() for p in sorted(family.iterdir()) if p.is_file()}
    for family in sorted(SAMPLES.iterdir())
    if family.is_dir()
}
#: Every sample file as ``family/name``.
ALL_SAMPLES: Final[dict[str, bytes]] = {
    f"{family}/{name}": data for family, files in FAMILIES.items() for name, data in files.items()
}

#: A giant line is this long at least (twice the default ``max_line_bytes``)...
GIANT_MIN: Final = 2 << 20
#: ...and at most this long, so the suite stays fast.
GIANT_MAX: Final = 3 << 20
#: How deep nested JSON goes at most.
DEEP_MAX: Final = 10_000

_POSITION = st.integers(min_value=0, max_value=1 << 24)


def _at(data: bytes, position: int) -> int:
    """``position`` as an offset into ``data`` (its end included)."""
    return position % (len(data) + 1)


def _line_starts(data: bytes) -> list[int]:
    """Offsets where a line starts (after each newline, and 0)."""
    return [0, *(match.end() for match in re.finditer(b"\n", data))]


def _line_start(data: bytes, index: int) -> int:
    starts = _line_starts(data)
    return starts[index % len(starts)]


def _insert_line(data: bytes, index: int, line: bytes) -> bytes:
    """``line`` as a line of its own before the ``index``-th line (mod the line count)."""
    at = _line_start(data, index)
    if at == len(data) and data and not data.endswith(b"\n"):
        return data + b"\n" + line + b"\n"
    return data[:at] + line + b"\n" + data[at:]


class Mutation:
    """Base of the mutations: a pure function of the bytes."""

    def apply(self, data: bytes) -> bytes:  # pragma: no cover - every mutation overrides it
        raise NotImplementedError


@dataclass(frozen=True)
class Truncate(Mutation):
    """Cut the file at a byte (possibly inside a line, a UTF-8 sequence or a JSON value)."""

    position: int

    def apply(self, data: bytes) -> bytes:
        return data[: _at(data, self.position)]


@dataclass(frozen=True)
class Splice(Mutation):
    """``data[:cut]`` + a piece of another sample (``None``: of the data itself) from
    ``start``, followed by the rest of ``data`` when ``keep_tail``."""

    other: str | None
    cut: int
    start: int
    length: int
    keep_tail: bool

    def apply(self, data: bytes) -> bytes:
        source = data if self.other is None else ALL_SAMPLES[self.other]
        start = _at(source, self.start)
        piece = source[start : start + self.length]
        cut = _at(data, self.cut)
        return data[:cut] + piece + (data[cut:] if self.keep_tail else b"")


@dataclass(frozen=True)
class FlipBytes(Mutation):
    """XOR bytes at some positions with non-zero masks."""

    flips: tuple[tuple[int, int], ...]

    def apply(self, data: bytes) -> bytes:
        if not data:
            return data
        out = bytearray(data)
        for position, mask in self.flips:
            out[position % len(out)] ^= mask
        return bytes(out)


@dataclass(frozen=True)
class InjectNul(Mutation):
    """Insert NUL bytes (in the first 8 KiB they make a file look binary)."""

    position: int
    count: int

    def apply(self, data: bytes) -> bytes:
        at = _at(data, self.position)
        return data[:at] + b"\x00" * self.count + data[at:]


#: Byte sequences that are not valid UTF-8: stray continuation bytes, cut sequences,
#: overlong forms, surrogates, code points above U+10FFFF, bytes that never occur.
INVALID_UTF8: Final = (
    b"\x80",
    b"\xbf\xbf",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\xc0\xaf",
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xfe",
    b"\xff",
    b"\xd6\xd0\xce\xc4",  # GBK
)


@dataclass(frozen=True)
class InjectInvalidUtf8(Mutation):
    """Insert a sequence that is not valid UTF-8."""

    position: int
    sequence: bytes

    def apply(self, data: bytes) -> bytes:
        at = _at(data, self.position)
        return data[:at] + self.sequence + data[at:]


_GIANT_PREFIX: Final = {
    "text": b"E1129 18:35:15.000000    1 train.cc:1] ",
    "json": (
        b'{"timestamp":"2026-11-29T18:35:15.000000Z","logName":"projects/p/logs/stderr",'
        b'"insertId":"giant","resource":{"type":"k8s_container"},"textPayload":"'
    ),
}
_GIANT_SUFFIX: Final = {"text": b"", "json": b'"}'}


@dataclass(frozen=True)
class GiantLine(Mutation):
    """A line of ``size`` bytes (over the 1 MiB line cap): klog text or a JSON entry, of ASCII
    or of 3-byte characters (so the cut at the cap can fall inside one, ``pad`` shifts it),
    inserted before a line or appended without a final newline."""

    line: int
    size: int
    kind: str
    wide: bool
    pad: int
    at_end: bool

    def apply(self, data: bytes) -> bytes:
        prefix = _GIANT_PREFIX[self.kind] + b"a" * self.pad
        unit = "€".encode() if self.wide else b"x"
        body = prefix + unit * (self.size // len(unit)) + _GIANT_SUFFIX[self.kind]
        if self.at_end:
            return data + body
        return _insert_line(data, self.line, body)


def deep_json(depth: int, kind: str, closed: bool) -> bytes:
    """``[[[…]]]`` or ``{"a":{"a":…}}`` ``depth`` levels deep (unclosed when not ``closed``)."""
    if kind == "array":
        return b"[" * depth + (b"]" * depth if closed else b"")
    return b'{"a":' * depth + b"1" + (b"}" * depth if closed else b"")


@dataclass(frozen=True)
class DeepNesting(Mutation):
    """Deeply nested JSON as a line of its own, or as the first element of the first array."""

    line: int
    depth: int
    kind: str
    closed: bool
    as_element: bool

    def apply(self, data: bytes) -> bytes:
        value = deep_json(self.depth, self.kind, self.closed)
        bracket = data.find(b"[")
        if self.as_element and bracket >= 0:
            return data[: bracket + 1] + value + b"," + data[bracket + 1 :]
        return _insert_line(data, self.line, value)


#: Fields the readers look at (Cloud Logging LogEntry, journald JSON, zap JSON, ModelArts and
#: ML Diagnostics API objects).
KNOWN_FIELDS: Final = (
    "timestamp",
    "receiveTimestamp",
    "severity",
    "textPayload",
    "jsonPayload",
    "protoPayload",
    "insertId",
    "logName",
    "resource",
    "labels",
    "sourceLocation",
    "trace",
    "split",
    "__REALTIME_TIMESTAMP",
    "__CURSOR",
    "MESSAGE",
    "PRIORITY",
    "_HOSTNAME",
    "SYSLOG_IDENTIFIER",
    "_PID",
    "ts",
    "level",
    "msg",
    "logger",
    "caller",
    "metadata",
    "status",
    "phase",
    "task_statuses",
    "running_records",
    "recover_records",
    "events",
    "stages",
    "sub_stages",
    "create_time",
    "start_time",
    "end_time",
    "duration",
    "start_at",
    "end_at",
    "recover_start_at",
    "record_order",
    "stage_order",
    "time",
    "message",
    "exit_code",
    "task",
    "name",
    "runPhase",
    "createTime",
    "updateTime",
    "startTime",
    "endTime",
    "analyzerReports",
    "workloadDetails",
    "recommendedActions",
    "detectionState",
    "details",
    "type",
)

#: JSON values of the wrong type or out of range for those fields.
ODD_VALUES: Final = (
    b"null",
    b"true",
    b"0",
    b"-1",
    b"1.5",
    b"1e20",
    b"-1e20",
    b"1e400",
    b"-1e400",
    b"100000000000000000000",
    b"-9223372036854775809",
    b"18446744073709551616",
    b"253402300800",
    b"-62135596801",
    b"9" * 5000,
    b"NaN",
    b"Infinity",
    b"{}",
    b'{"seconds":1,"nanos":5}',
    b'{"a":{"b":[1,{"c":null}]}}',
    b"[]",
    b'["ERROR"]',
    b"[1,2,300,-5,true,1.5]",
    b'[[["x"]]]',
    b'""',
    b'"   "',
    b'"0000-01-01T00:00:00Z"',
    b'"0001-01-01T00:00:00Z"',
    b'"9999-12-31T23:59:59.999999999Z"',
    b'"10000-01-01T00:00:00Z"',
    b'"-0001-01-01T00:00:00Z"',
    b'"2026-02-30T25:61:61Z"',
    b'"2026-11-29T18:35:15.0000000000000000001Z"',
    b'"2026-11-29T18:35:15+99:99"',
    b'"1e20"',
    b'"100000000000000000000"',
    b'"99999999999999999999999999.5"',
    b'"-1"',
    b'"\\u0000"',
    b'"\\ud800"',
    b'"\\udfff\\ud800"',
    b'"worker-99999999999"',
    b'"\\u001b[31mred\\u001b[0m"',
)


def _json_string(text: str) -> bytes:
    return b'"' + text.encode().replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


_VALUES = st.one_of(
    st.sampled_from(ODD_VALUES),
    st.integers(min_value=-(2**80), max_value=2**80).map(lambda n: str(n).encode()),
    st.builds(
        deep_json, st.integers(2, DEEP_MAX), st.sampled_from(["array", "object"]), st.just(True)
    ),
    st.text(max_size=20).map(_json_string),
)


@dataclass(frozen=True)
class InjectField(Mutation):
    """``"key": value`` inserted into the ``target``-th object (first member after its ``{``,
    or last member before its ``}``): duplicate keys, wrong types and out-of-range values of
    known fields. Without a ``{`` in the data, the member becomes a one-member object line."""

    target: int
    key: str
    value: bytes
    last: bool

    def apply(self, data: bytes) -> bytes:
        member = _json_string(self.key) + b":" + self.value
        brackets = [m.start() for m in re.finditer(rb"\}" if self.last else rb"\{", data)]
        if not brackets:
            return _insert_line(data, self.target, b"{" + member + b"}")
        at = brackets[self.target % len(brackets)]
        if self.last:
            return data[:at] + b"," + member + data[at:]
        return data[: at + 1] + member + b"," + data[at + 1 :]


#: Times in the text: ISO dates (and the ``YYYY/MM/DD`` of glog/klog file headers), klog/glog
#: ``Lmmdd hh:mm:ss``, syslog ``Mon dd``, epoch counts (seconds with a fraction, or 10 to 19
#: digits: s, ms, µs, ns).
_STAMP: Final = re.compile(
    rb"\d{4}([-/])\d{2}\1\d{2}(?=[T ])|(?<=[IWEF])\d{4}(?= \d{2}:)|"
    rb"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2}\b|\b\d{10,19}(?:\.\d+)?\b"
)
#: Replacements per style: (ISO date, klog mmdd, syslog month-day, epoch count).
_STAMP_STYLES: Final = {
    "year0": (b"0000-01-01", b"0101", b"Jan  0", b"0"),
    "year9999": (b"9999-12-31", b"1231", b"Dec 31", b"253402300799999999"),
    "huge": (b"99999-12-31", b"9999", b"Dec 99", b"100000000000000000000"),
    "negative": (b"-0001-01-01", b"-101", b"Feb 30", b"-1000000000"),
    "invalid": (b"2026-13-45", b"1345", b"Feb 31", b"1e20"),
    "float": (b"2026-02-29", b"0229", b"Feb 29", b"17644413001.9999999999"),
}


@dataclass(frozen=True)
class ReplaceStamps(Mutation):
    """Replace times in the text by out-of-range ones (year 0, 9999, 1e20 s, negative,
    invalid dates), the first ``limit`` of them (all when 0)."""

    style: str
    limit: int

    def apply(self, data: bytes) -> bytes:
        iso, klog, syslog, epoch = _STAMP_STYLES[self.style]

        def swap(match: re.Match[bytes]) -> bytes:
            found = match.group()
            if found[:1].isalpha():
                return syslog
            if found[4:5] in (b"-", b"/"):
                return iso.replace(b"-", found[4:5])
            if len(found) == 4:
                return klog
            return epoch

        return _STAMP.sub(swap, data, count=self.limit)


@dataclass(frozen=True)
class MixLineEndings(Mutation):
    """Replace the newlines in turn by ``endings`` (``\\n``, ``\\r\\n``, ``\\r`` …)."""

    endings: tuple[bytes, ...]

    def apply(self, data: bytes) -> bytes:
        turn = iter(range(1 << 62))
        return re.sub(b"\n", lambda _: self.endings[next(turn) % len(self.endings)], data)


BOMS: Final = {
    "utf8": b"\xef\xbb\xbf",
    "utf8x2": b"\xef\xbb\xbf\xef\xbb\xbf",
    "utf16le": b"\xff\xfe",
    "utf16be": b"\xfe\xff",
    "utf32le": b"\xff\xfe\x00\x00",
}


@dataclass(frozen=True)
class Bom(Mutation):
    """A byte-order mark at the start (``line`` None) or at the start of a line; ``whole``
    re-encodes the whole file as UTF-16 with its BOM instead."""

    kind: str
    line: int | None
    whole: bool

    def apply(self, data: bytes) -> bytes:
        if self.whole:
            return data.decode("utf-8", "replace").encode("utf-16")
        mark = BOMS[self.kind]
        if self.line is None:
            return mark + data
        at = _line_start(data, self.line)
        return data[:at] + mark + data[at:]


@dataclass(frozen=True)
class RepeatLines(Mutation):
    """Copy ``count`` lines from line ``start`` to before line ``to`` (duplicate entries)."""

    start: int
    count: int
    to: int

    def apply(self, data: bytes) -> bytes:
        starts = _line_starts(data)
        first = self.start % len(starts)
        last = min(first + self.count, len(starts) - 1)
        piece = data[starts[first] : starts[last]] if last > first else b""
        at = _line_start(data, self.to)
        return data[:at] + piece + data[at:]


def mutation() -> st.SearchStrategy[Mutation]:
    """Any one mutation."""
    return st.one_of(
        st.builds(Truncate, _POSITION),
        st.builds(
            Splice,
            st.one_of(st.none(), st.sampled_from(sorted(ALL_SAMPLES))),
            _POSITION,
            _POSITION,
            st.integers(0, 1 << 16),
            st.booleans(),
        ),
        st.builds(
            FlipBytes,
            st.lists(st.tuples(_POSITION, st.integers(1, 255)), min_size=1, max_size=8).map(tuple),
        ),
        st.builds(InjectNul, _POSITION, st.integers(1, 16)),
        st.builds(InjectInvalidUtf8, _POSITION, st.sampled_from(INVALID_UTF8)),
        st.builds(
            GiantLine,
            _POSITION,
            st.integers(GIANT_MIN, GIANT_MAX),
            st.sampled_from(sorted(_GIANT_PREFIX)),
            st.booleans(),
            st.integers(0, 2),
            st.booleans(),
        ),
        st.builds(
            DeepNesting,
            _POSITION,
            st.integers(2, DEEP_MAX),
            st.sampled_from(["array", "object"]),
            st.booleans(),
            st.booleans(),
        ),
        st.builds(InjectField, _POSITION, st.sampled_from(KNOWN_FIELDS), _VALUES, st.booleans()),
        st.builds(ReplaceStamps, st.sampled_from(sorted(_STAMP_STYLES)), st.integers(0, 3)),
        st.builds(
            MixLineEndings,
            st.lists(
                st.sampled_from([b"\n", b"\r\n", b"\r", b"\r\r\n", b"\n\r"]), min_size=1, max_size=4
            ).map(tuple),
        ),
        st.builds(
            Bom,
            st.sampled_from(sorted(BOMS)),
            st.one_of(st.none(), _POSITION),
            st.booleans(),
        ),
        st.builds(RepeatLines, _POSITION, st.integers(1, 8), _POSITION),
    )


def mutations(max_size: int = 4) -> st.SearchStrategy[list[Mutation]]:
    """Several mutations, applied in order (none: the sample as it is)."""
    return st.lists(mutation(), max_size=max_size)


def apply_all(data: bytes, steps: list[Mutation]) -> bytes:
    """``data`` after every mutation of ``steps``."""
    for step in steps:
        data = step.apply(data)
    return data
