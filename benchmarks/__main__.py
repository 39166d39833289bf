"""``python -m benchmarks run [--quick] [--no-record] [--only …] [--rebuild-table]``: every
performance figure in one command (:mod:`benchmarks.run`). The single benchmarks keep their own
entry points (``python -m benchmarks.ingest``, ``.match``, ``.analyze``, ``.generate`` …)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

#: The commands, each with its module's one-line summary.
COMMANDS = {"run": "every performance figure and the targets table (benchmarks.run)"}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        usage = "usage: python -m benchmarks {run} [options]\n\n" + "".join(
            f"  {name:<6}{summary}\n" for name, summary in COMMANDS.items()
        )
        known = not args or args[0] in ("-h", "--help")
        print(usage, end="", file=sys.stdout if known else sys.stderr)
        if not known:
            print(f"unknown command {args[0]!r}", file=sys.stderr)
        return 0 if known else 2
    from benchmarks.run import main as run

    return run(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
