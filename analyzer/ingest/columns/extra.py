"""Build the ``extra`` column: a compact JSON object of the fields a row has beyond the schema.

Built with string concatenation over whole columns, because it runs on every row: only free
text goes through a JSON encoder, values known to need no escaping are quoted directly.
"""

from __future__ import annotations

import json
from typing import Literal

import polars as pl

#: How a value is written: ``text`` is JSON-escaped; ``token`` is a string known to need no
#: escaping (digits, ISO times, identifiers); ``number`` and ``bool`` are written bare; ``raw``
#: is already JSON text (an object copied from the input); ``members`` is a JSON object whose
#: members are spliced in at this place (the key is not used).
Kind = Literal["text", "token", "number", "bool", "raw", "members"]


def _value(value: pl.Expr, kind: Kind) -> pl.Expr:
    if kind == "text":
        encoded = pl.struct(value.alias("v")).struct.json_encode()
        return encoded.str.slice(5, encoded.str.len_chars() - 6)
    if kind == "token":
        return pl.concat_str([pl.lit('"'), value, pl.lit('"')])
    if kind == "bool":
        return pl.when(value).then(pl.lit("true")).otherwise(pl.lit("false"))
    return value.cast(pl.String)


def compact_json(fields: list[tuple[str, pl.Expr, Kind]]) -> pl.Expr:
    """A JSON object of the non-null ``fields`` (key, value, kind) per row, in the given
    order; null when every field is null."""
    parts = []
    for key, value, kind in fields:
        if kind == "members":
            inner = value.str.slice(1, value.str.len_chars() - 2)
            keep = value.is_not_null() & (inner.str.len_bytes() > 0)
            parts.append(pl.when(keep).then(pl.concat_str([pl.lit(","), inner])))
            continue
        prefix = pl.lit("," + json.dumps(key) + ":")
        parts.append(
            pl.when(value.is_not_null()).then(pl.concat_str([prefix, _value(value, kind)]))
        )
    joined = pl.concat_str(parts, ignore_nulls=True)
    return pl.when(joined.str.len_bytes() > 0).then(
        pl.concat_str([pl.lit("{"), joined.str.slice(1), pl.lit("}")])
    )


def append_json(extra: pl.Expr, fields: list[tuple[str, pl.Expr, Kind]]) -> pl.Expr:
    """``extra`` (a JSON object or null) with the non-null ``fields`` appended."""
    more = compact_json(fields)
    return (
        pl.when(extra.is_null())
        .then(more)
        .when(more.is_null())
        .then(extra)
        .otherwise(
            pl.concat_str(
                [extra.str.slice(0, extra.str.len_chars() - 1), pl.lit(","), more.str.slice(1)]
            )
        )
    )
