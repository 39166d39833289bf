"""Cloud Logging queries (the Logging query language) for ``gcloud logging read``: quoted
values, ``field=("a" OR "b")`` lists, the time window, and lists split so that no query
passes the language's 20,000-character limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

#: A query may be at most 20,000 characters (Logging query language reference); the rest of
#: a query around a list stays under the margin.
MAX_QUERY: Final = 20_000
_MARGIN: Final = 3_000


def quoted(value: str) -> str:
    """A string literal of the query language."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def any_of(field: str, values: Sequence[str], operator: str = "=") -> str:
    """``field="a"`` or ``field=("a" OR "b" …)``."""
    if len(values) == 1:
        return f"{field}{operator}{quoted(values[0])}"
    return f"{field}{operator}(" + " OR ".join(quoted(v) for v in values) + ")"


def log_names(project: str, ids: Sequence[str]) -> str:
    """``logName=…`` for log ids of ``project`` (``/`` in an id written ``%2F``)."""
    return any_of("logName", [f"projects/{project}/logs/{i.replace('/', '%2F')}" for i in ids])


def in_window(start: str, end: str) -> str:
    return f"timestamp>={quoted(start)} AND timestamp<={quoted(end)}"


def conjunction(*terms: str) -> str:
    """The terms joined by ``AND``, each in parentheses when it holds an ``OR``."""
    return " AND ".join(f"({t})" if " OR " in t and not t.endswith(")") else t for t in terms)


def chunks(values: Sequence[str], field: str, room: int = MAX_QUERY - _MARGIN) -> list[list[str]]:
    """``values`` in groups whose ``any_of`` list fits ``room`` characters."""
    groups: list[list[str]] = []
    current: list[str] = []
    size = len(field) + 3
    for value in values:
        cost = len(quoted(value)) + 4
        if current and size + cost > room:
            groups.append(current)
            current, size = [], len(field) + 3
        current.append(value)
        size += cost
    if current:
        groups.append(current)
    return groups
