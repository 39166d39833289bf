"""``python -m benchmarks run [--quick] [--no-record] [--only …] [--rebuild-table]``: every
performance figure in one command (:mod:`benchmarks.run`); each benchmark also has its own
entry point (``python -m benchmarks.ingest``, ``.match``, ``.analyze``, ``.generate`` …)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["run"]:
        from benchmarks.run import main as run

        return run(args[1:])
    known = not args or args[0] in ("-h", "--help")
    usage = "usage: python -m benchmarks {run} [options]\n\n  run   every performance figure "
    print(
        usage + "and the targets table (benchmarks.run)", file=sys.stdout if known else sys.stderr
    )
    if not known:
        print(f"unknown command {args[0]!r}", file=sys.stderr)
    return 0 if known else 2


if __name__ == "__main__":
    raise SystemExit(main())
