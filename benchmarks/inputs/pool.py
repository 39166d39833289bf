"""The line pool and the block writer every generated input is built with.

An input is drawn from a pool of a few thousand distinct lines, grouped into units (one line,
or several consecutive lines such as a traceback) of a few categories. Units are drawn in
blocks of :data:`BLOCK_UNITS` with numpy and each block is rendered with polars (one
``concat_str`` per block, written straight from the Arrow buffer), so generating a GiB takes
seconds, not minutes.

Block ``k`` of an input is drawn from ``numpy.random.default_rng([seed, k])``: the bytes depend
only on the seed, the pool and the order of draws here and in each input's ``render``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import IO, Final

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from benchmarks.inputs.clock import FIRST_STEP, START_NS, STEP_NS

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
#: One pool line: family (how its stamp is rendered, defined per input), lead, body.
Line = tuple[int, str, str]
#: Renders a block (see :func:`draw_block`) as lines ending in a newline; it may draw more
#: random numbers from the block's generator.
Render = Callable[[pl.DataFrame, np.random.Generator], pl.Series]

BLOCK_UNITS: Final = 200_000


class Category(IntEnum):
    """What kind of unit a pool unit is; each input weights the categories (the share of units
    drawn from each), in this order."""

    # Routine lines. In the TPU and modelarts pools a single line, line 0, whose body the
    # renderer fills per row (the per-step print).
    CHATTER = 0
    INFO = 1
    WARNING = 2
    ERROR = 3
    MULTILINE = 4  # tracebacks and other rare multi-line sequences


@dataclass(frozen=True)
class Pool:
    """Distinct lines and the units (one or more consecutive lines) they form.

    A line is ``lead`` + a stamp rendered per row (its kind given by ``family``) + ``body``.
    For the absl/tsl families of the TPU inputs ``lead`` is only the level letter and the
    renderer builds the header around it. Line 0 is the per-step chatter, whose body is
    rendered per row (``completed step`` in the TPU inputs, ``step N | loss`` in modelarts).
    """

    family: npt.NDArray[np.int8]
    lead: pl.Series
    body: pl.Series
    unit_start: IntArray
    unit_len: IntArray
    flat: IntArray
    units_by_category: list[IntArray]


#: Makes one unit's lines, drawing from the generator it is given.
UnitMaker = Callable[[random.Random], Sequence[Line]]
#: ``count`` units of ``category``, each made by ``make``.
UnitsSpec = tuple[Category, UnitMaker, int]


def make_pool(r: random.Random, specs: Sequence[UnitsSpec]) -> Pool:
    """A pool of the units ``specs`` make from ``r``, in order; each unit's lines are
    consecutive pool lines."""
    units = [(category, make(r)) for category, make, count in specs for _ in range(count)]
    lines = [line for _, members in units for line in members]
    unit_len = np.array([len(members) for _, members in units], dtype=np.int64)
    category = np.array([category for category, _ in units], dtype=np.int64)
    return Pool(
        family=np.array([family for family, _, _ in lines], dtype=np.int8),
        lead=pl.Series("lead", [lead for _, lead, _ in lines], dtype=pl.String),
        body=pl.Series("body", [body for _, _, body in lines], dtype=pl.String),
        unit_start=np.concatenate([[0], np.cumsum(unit_len)[:-1]]).astype(np.int64),
        unit_len=unit_len,
        flat=np.arange(len(lines), dtype=np.int64),
        units_by_category=[
            np.flatnonzero(category == index).astype(np.int64) for index in Category
        ],
    )


@dataclass(frozen=True)
class Layout:
    """What an input's units are drawn from, and where they are placed on the clock.

    Units are drawn by category (``weights``, one per :class:`Category`), then uniformly
    within it; unit ``k`` of the input is stamped somewhere in
    ``[start_ns + k * unit_ns, start_ns + (k + 1) * unit_ns)`` and attributed to one of
    ``hosts`` hosts (or ranks).
    """

    pool: Pool
    weights: FloatArray
    hosts: int
    start_ns: int
    unit_ns: int


def draw_block(layout: Layout, rng: np.random.Generator, first_unit: int) -> pl.DataFrame:
    """``BLOCK_UNITS`` units from ``first_unit`` on, expanded to one row per line, in time
    order.

    ``host`` is the unit's host number, ``pts`` the line's stamp (ns), ``step`` the TPU
    inputs' training step at that stamp and ``millis`` a step time.
    """
    pool, unit_ns, n = layout.pool, layout.unit_ns, BLOCK_UNITS
    category = rng.choice(len(layout.weights), size=n, p=layout.weights)
    unit = np.zeros(n, dtype=np.int64)
    for index, members in enumerate(pool.units_by_category):
        mask = category == index
        unit[mask] = members[rng.integers(0, len(members), size=int(mask.sum()))]
    host = rng.integers(0, layout.hosts, size=n)
    unit_ts = layout.start_ns + (first_unit + np.arange(n, dtype=np.int64)) * unit_ns
    unit_ts += rng.integers(0, unit_ns, size=n)

    lengths = pool.unit_len[unit]
    of_row = np.repeat(np.arange(n, dtype=np.int64), lengths)
    firsts = np.cumsum(lengths) - lengths
    within = np.arange(of_row.size, dtype=np.int64) - np.repeat(firsts, lengths)
    line = pool.flat[pool.unit_start[unit][of_row] + within]
    # The lines of one unit are 7 µs apart; stamps have microsecond resolution.
    payload_ts = (unit_ts[of_row] + within * 7_000) // 1000 * 1000
    return pl.DataFrame(
        {
            "line": line,
            "family": pool.family[line],
            "host": host[of_row],
            "pts": payload_ts,
            "step": FIRST_STEP + (payload_ts - START_NS) // STEP_NS,
            "millis": rng.integers(2300, 2500, size=of_row.size)
            + (rng.random(of_row.size) < 0.002) * rng.integers(0, 9000, size=of_row.size),
        }
    )


def stamped(pool: Pool, frame: pl.DataFrame, stamps: Mapping[int, pl.Expr]) -> pl.Expr:
    """``lead + stamp + body`` of each row's pool line, the stamp picked by the line's family
    (no stamp for a family not in ``stamps``)."""
    line = frame["line"]
    family = pl.lit(pl.Series(pool.family).gather(line))
    stamp = pl.lit("")
    for kind, expr in stamps.items():
        stamp = pl.when(family == kind).then(expr).otherwise(stamp)
    return pl.concat_str([pl.lit(pool.lead.gather(line)), stamp, pl.lit(pool.body.gather(line))])


def write_lines(out: IO[bytes], lines: pl.Series) -> int:
    """Write a column of strings (each ending in a newline) as raw bytes; returns the count."""
    array = lines.to_arrow()
    assert array.null_count == 0, "a generated line is null"
    array = array.cast(pa.large_string())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    start, stop = int(offsets[0]), int(offsets[-1])
    out.write(memoryview(array.buffers()[2])[start:stop])
    return stop - start


def fill(
    path: Path,
    target: int,
    seed: int,
    layout: Layout,
    render: Render,
    head: bytes = b"",
    *,
    legacy_tail: bool = False,
) -> None:
    """Write ``head``, then blocks drawn as ``layout`` says and rendered by ``render``, to
    ``path`` until it holds about ``target`` bytes.

    The file ends with the last whole line that fits. ``legacy_tail`` keeps the bytes of the
    cached v1 ``cloud_logging`` and ``text`` inputs, which went on with one more block after
    cutting one and so end with a line from the next block (out of time order). The file is
    written under a ``.partial`` name and renamed when complete, so an interrupted run never
    leaves a truncated input in the cache.
    """
    partial = path.with_name(path.name + ".partial")
    written = 0
    with partial.open("wb") as out:
        out.write(head)
        written += len(head)
        block = 0
        while written < target:
            rng = np.random.default_rng([seed, block])
            frame = draw_block(layout, rng, block * BLOCK_UNITS)
            lines = render(frame, rng)
            sizes = lines.str.len_bytes().cum_sum().to_numpy()
            cut = written + int(sizes[-1]) > target
            if cut:
                keep = int(np.searchsorted(sizes, target - written, "right"))
                lines = lines.head(max(1, keep) if legacy_tail else keep)
            written += write_lines(out, lines)
            block += 1
            if cut and not legacy_tail:
                break
    partial.replace(path)
