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

#: A row's time must lie in these years (inclusive); a time outside them is ``out_of_range``
#: (:data:`analyzer.schema.TS_QUALITIES`): a negative epoch, a placeholder (9999-12-31,
#: 0001-01-01), a stamp nanoseconds since 1970 cannot hold. Not options (nor the outlier days
#: below): no incident of a training job lies outside them.
TS_EARLIEST_YEAR: Final = 1970
TS_LATEST_YEAR: Final = 2100
#: A row whose time lies more than this many days from every row of its file's main stretch
#: (the rows around the file's median time, without a gap this long between them) is also
#: ``out_of_range`` (:mod:`analyzer.case.stamps`): a clock reset to 1970 at boot or one
#: mistyped stamp in a file must not open an attempt or sort before the incident.
TS_FILE_OUTLIER_DAYS: Final = 30

# -- where the work runs and how rows are matched ---------------------------------------------

#: Ingest and matching run in this process (:data:`analyzer.engine.ENGINES`).
ENGINE: Final = "local"
#: The matching backend (:data:`analyzer.signatures.backends.BACKENDS`).
BACKEND: Final = "polars"

# -- writing a case ---------------------------------------------------------------------------

#: Seconds an ingest waits for another one writing the same case before it gives up; 0 gives
#: up at once (:func:`analyzer.case.lock.case_lock`).
LOCK_WAIT_S: Final = 0.0
#: An ingest that would need more space than is free is refused before it writes
#: (:mod:`analyzer.case.space`); the estimate is the largest measured, so it may refuse one
#: that would just fit.
SPACE_CHECK: Final = True

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

# -- collecting a bundle (``culprit collect``, :mod:`analyzer.collect`) ------------------------

#: How far back a collection reaches when neither ``--since`` nor ``--start`` is given.
COLLECT_SINCE: Final = "2h"
#: Bytes one command may write into the bundle (its output is cut there, and says so).
COLLECT_SOURCE_CAP: Final = 1 << 30
#: Bytes all commands together may write; the commands after it are recorded as skipped.
COLLECT_TOTAL_CAP: Final = 16 << 30
#: Commands running at the same time.
COLLECT_CONCURRENCY: Final = 4
#: Seconds one command may run before it is stopped.
COLLECT_TIMEOUT_S: Final = 600.0
#: Attempts of a command refused for quota (RESOURCE_EXHAUSTED, "Quota exceeded", HTTP 429).
COLLECT_ATTEMPTS: Final = 5
#: Seconds before the first retry after a quota error; doubled for each further one.
COLLECT_BACKOFF_S: Final = 2.0

# -- the dashboard (culprit serve) ------------------------------------------------------------

#: One SQL query of the dashboard is stopped after this many seconds
#: (:class:`analyzer.serve.queries.QueryLimits`).
SERVE_QUERY_TIMEOUT_S: Final = 10.0
#: Memory one SQL query of the dashboard may use (DuckDB ``memory_limit``; no spilling).
SERVE_QUERY_MEMORY: Final = "1GB"
#: SQL queries the dashboard runs at once; more are refused with 503 until one ends.
SERVE_MAX_QUERIES: Final = 4
