"""The time span a collection asks for: ``--since 2h`` (back from now) or ``--start`` and
``--end`` (ISO 8601), as UTC stamps that Cloud Logging filters and ``kubectl logs
--since-time`` both read."""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from analyzer.errors import UsageError

_SINCE: Final = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _instant(text: str, option: str) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not an ISO 8601 time (2026-11-29T18:00:00Z)"
        ) from None
    if when.tzinfo is None:
        raise UsageError(f"{option} {text!r} needs a zone (Z or +08:00)")
    return when.astimezone(dt.UTC)


def stamp(when: dt.datetime) -> str:
    """``2026-11-29T18:00:00Z``."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def window(
    since: str | None, start: str | None, end: str | None, now: dt.datetime | None = None
) -> tuple[str, str]:
    """The span as two UTC stamps.

    Raises:
        UsageError: ``--since`` with ``--start``/``--end``, one of ``--start``/``--end``
            alone, an unreadable value, or an end before the start.
    """
    if since is not None and (start is not None or end is not None):
        raise UsageError("give --since or --start/--end, not both")
    if (start is None) != (end is None):
        raise UsageError("--start and --end go together")
    if start is not None and end is not None:
        first, last = _instant(start, "--start"), _instant(end, "--end")
    else:
        match = _SINCE.match(since or "")
        if match is None:
            raise UsageError(f"--since {since!r} is not a duration (90s, 30m, 2h, 1d)")
        last = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).replace(microsecond=0)
        first = last - dt.timedelta(seconds=float(match[1]) * _UNITS[match[2]])
    if last <= first:
        raise UsageError("--end must be after --start")
    return stamp(first), stamp(last)
