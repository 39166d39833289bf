"""Build the ``extra`` column: a compact JSON object of the fields a row has beyond the schema.

Built with string concatenation over whole columns, because it runs on every row: only free
text goes through a JSON encoder, values known to need no escaping are quoted directly.

An eager ``select`` evaluates an expression again wherever it is used, so each field's value
is referenced once where null propagation allows it (``token``, ``number``), and the joined
members once: a value that costs (a regex over messages) is best passed as a column. A ``raw``
value (a sub-object, often most of the bytes) is referenced twice instead, so that its bytes are
copied once, straight into the joined members: pass it as a column.
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
        # ``{"v":…}`` without its wrapper (one reference to the encoding).
        encoded = pl.struct(value.alias("v")).struct.json_encode()
        return encoded.str.slice(5).str.strip_suffix("}")
    if kind == "token":
        return pl.concat_str([pl.lit('"'), value, pl.lit('"')])
    if kind == "bool":
        return pl.when(value).then(pl.lit("true")).otherwise(pl.lit("false"))
    return value.cast(pl.String)


def _prefix(key: str) -> str:
    return "," + json.dumps(key) + ":"


def _member(key: str, value: pl.Expr, kind: Kind) -> pl.Expr:
    """``,"key":value``, null where ``value`` is null (``raw`` values: :func:`members`)."""
    if kind == "members":
        inner = value.str.slice(1, value.str.len_chars() - 2)
        keep = value.is_not_null() & (inner.str.len_bytes() > 0)
        return pl.when(keep).then(pl.concat_str([pl.lit(","), inner]))
    prefix = pl.lit(_prefix(key))
    if kind in ("token", "number"):
        # concat_str is null where the value is: no second reference to it.
        return pl.concat_str([prefix, _value(value, kind)])
    return pl.when(value.is_not_null()).then(pl.concat_str([prefix, _value(value, kind)]))


def members(fields: list[tuple[str, pl.Expr, Kind]]) -> pl.Expr:
    """The non-null ``fields`` (key, value, kind) as JSON members, in the given order, each
    with a leading comma: ``,"a":1,"b":"x"``, or the empty string when every field is null."""
    parts: list[pl.Expr] = []
    for key, value, kind in fields:
        if kind == "raw":
            # The key and the value as two parts (both null where the value is): a member of
            # its own would copy the value's bytes once more before the join.
            parts += [pl.when(value.is_not_null()).then(pl.lit(_prefix(key))), value]
        else:
            parts.append(_member(key, value, kind))
    return pl.concat_str(parts, ignore_nulls=True)


def compact_json(fields: list[tuple[str, pl.Expr, Kind]]) -> pl.Expr:
    """A JSON object of the non-null ``fields`` (key, value, kind) per row, in the given
    order; null when every field is null."""
    # A member is never a lone comma, so "{}" means that no field was set.
    wrapped = pl.concat_str([pl.lit("{"), members(fields).str.slice(1), pl.lit("}")])
    return wrapped.replace("{}", None)


def append_members(extra: pl.Expr, more: pl.Expr) -> pl.Expr:
    """``extra`` (a JSON object or null) with ``more`` (what :func:`members` writes) appended.

    Both are referenced more than once: pass columns, not costly expressions.
    """
    return (
        pl.when(more == "")
        .then(extra)
        .when(extra.is_null())
        .then(pl.concat_str([pl.lit("{"), more.str.slice(1), pl.lit("}")]))
        .otherwise(
            pl.concat_str([extra.str.slice(0, extra.str.len_chars() - 1), more, pl.lit("}")])
        )
    )


def with_members(
    frame: pl.DataFrame, fields: list[tuple[str, pl.Expr, Kind]], name: str
) -> pl.DataFrame:
    """``frame`` with a column ``name`` holding :func:`members` of ``fields``, each value
    computed once (as a column of its own first, dropped afterwards)."""
    staged = [f"_{name}_{index}" for index in range(len(fields))]
    frame = frame.with_columns(
        value.alias(column) for (_, value, _), column in zip(fields, staged, strict=True)
    )
    spelled = [
        (key, pl.col(column), kind) for (key, _, kind), column in zip(fields, staged, strict=True)
    ]
    return frame.with_columns(members(spelled).alias(name)).drop(staged)
