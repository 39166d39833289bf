"""Build the ``extra`` column: a compact JSON object of the fields a row has beyond the schema."""

from __future__ import annotations

import json

import polars as pl


def compact_json(fields: dict[str, pl.Expr], raw: dict[str, pl.Expr] | None = None) -> pl.Expr:
    """A JSON object of the non-null ``fields`` per row (null when every field is null).

    ``fields`` are JSON-encoded by polars (strings escaped, numbers and booleans typed);
    ``raw`` values are already JSON text (objects taken verbatim from the input) and are
    embedded as they are. Keys keep the given order.
    """
    fragments = []
    for key, value in fields.items():
        encoded = pl.struct(value.alias(key)).struct.json_encode()
        fragment = encoded.str.slice(1, encoded.str.len_chars() - 2)
        fragments.append(pl.when(value.is_not_null()).then(fragment))
    for key, value in (raw or {}).items():
        prefix = pl.lit(json.dumps(key) + ":")
        fragments.append(pl.when(value.is_not_null()).then(pl.concat_str([prefix, value])))
    joined = pl.concat_list(fragments).list.drop_nulls().list.join(",")
    return pl.when(joined.str.len_bytes() > 0).then(
        pl.concat_str([pl.lit("{"), joined, pl.lit("}")])
    )
