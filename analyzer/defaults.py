"""The defaults a user can override, each written once.

The library modules that own a knob take its default from here (``BundleLimits.max_ratio``,
``ReadOptions.max_line_bytes``, the keyword defaults of :mod:`analyzer.api` ...), and so do the
command-line options (:mod:`analyzer.cli.options`), so the two cannot drift apart.

Why one table instead of a constant in each owner: the command line must read every default
to print ``--help``, and most owners import polars, pyarrow or duckdb (seconds of start-up).
This module imports nothing, so ``culprit --help`` stays fast; a test
(``tests/cli/test_options.py``) checks each option against the owner's actual default.
"""

from __future__ import annotations

from typing import Final

# -- reading a bundle -------------------------------------------------------------------------

#: A compressed stream may expand to at most this multiple of its size (a likely bomb beyond):
#: :class:`analyzer.bundle.BundleLimits` and :class:`analyzer.streams.ExpansionBudget`.
MAX_EXPANSION_RATIO: Final = 200.0
#: A longer line keeps only this many bytes and is quarantined as cut
#: (:class:`analyzer.case.inputs.ReadOptions`).
MAX_LINE_BYTES: Final = 1 << 20

# -- where the work runs and how rows are matched ---------------------------------------------

#: Ingest and matching run in this process (:data:`analyzer.engine.ENGINES`).
ENGINE: Final = "local"
#: The matching backend (:data:`analyzer.signatures.backends.BACKENDS`).
BACKEND: Final = "polars"

# -- diagnosis --------------------------------------------------------------------------------

#: Clock-skew tolerance between hosts, in seconds (:mod:`analyzer.diagnose.run`).
SKEW_S: Final = 2.0
#: A global silence this long (seconds) separates two attempts (:mod:`analyzer.diagnose.attempts`).
SILENCE_S: Final = 600.0

# -- what culprit writes ----------------------------------------------------------------------

#: The report layout (:data:`analyzer.api.TEMPLATES`).
TEMPLATE: Final = "default"
#: What ``culprit report`` writes (:data:`analyzer.api.REPORT_FORMATS`).
REPORT_FORMAT: Final = "md"
#: Hosts listed by a case summary (:func:`analyzer.case.info.summarize`).
TOP_HOSTS: Final = 20
#: Rows of context per host on each side of the first error in a handoff
#: (:mod:`analyzer.handoff`).
HANDOFF_CONTEXT: Final = 5

# -- the dashboard (culprit serve) ------------------------------------------------------------

#: One SQL query of the dashboard is stopped after this many seconds
#: (:class:`analyzer.serve.queries.QueryLimits`).
SERVE_QUERY_TIMEOUT_S: Final = 10.0
#: Memory one SQL query of the dashboard may use (DuckDB ``memory_limit``; no spilling).
SERVE_QUERY_MEMORY: Final = "1GB"
#: SQL queries the dashboard runs at once; more are refused with 503 until one ends.
SERVE_MAX_QUERIES: Final = 4
