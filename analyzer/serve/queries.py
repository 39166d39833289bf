"""The SQL box's queries under limits: time, memory, threads, and how many run at once.

A query runs on a thread of its own, never on the server's thread pool, so the pages answer
whatever the queries do. The request that started it waits asynchronously and stops it with
DuckDB's ``interrupt()`` when

* it has run for ``timeout_s`` (the page says so),
* the client has gone away (nobody waits for the answer), or
* the request is cancelled: the server is stopping (Ctrl-C), and :meth:`QueryGate.stop_all`
  stops every query at once when the signal arrives.

DuckDB clears a pending interrupt when the next statement starts, so a stop is repeated until
the thread is done. A slot of the gate is freed by the query's thread when it ends, not by the
request, so ``max_queries`` bounds the queries actually running; one more is refused (503).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import anyio
import duckdb

from analyzer import defaults
from analyzer.case.store import Case
from analyzer.errors import QueryError, UsageError
from analyzer.serve.sql import Confinement, QueryResult, run_query

#: How often a waiting request looks at its query, its deadline and its client.
POLL_S: Final = 0.05
#: How long a stopped query may take to notice before the request answers without it (its
#: thread keeps its slot until it does end).
STOP_GRACE_S: Final = 5.0
#: How much less the query threads count for the scheduler than the pages' (Linux ``nice``).
QUERY_NICENESS: Final = 10
#: A DuckDB size: a number and a unit (``1GB``, ``512MiB``, ``1.5 GB``).
_SIZE: Final = re.compile(r"\d+(\.\d+)?\s*([KMGT]i?B|B)", re.IGNORECASE)


@dataclass(frozen=True)
class QueryLimits:
    """Limits of the SQL box, each overridable on the command line (``culprit serve
    --query-timeout --query-memory --max-queries``).

    Raises:
        UsageError: a limit that is not positive, or a memory size DuckDB would not read.
    """

    timeout_s: float = defaults.SERVE_QUERY_TIMEOUT_S
    memory: str = defaults.SERVE_QUERY_MEMORY
    max_queries: int = defaults.SERVE_MAX_QUERIES

    def __post_init__(self) -> None:
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise UsageError(
                f"--query-timeout must be a positive number of seconds, not {self.timeout_s}"
            )
        if self.max_queries < 1:
            raise UsageError(f"--max-queries must be at least 1, not {self.max_queries}")
        if not _SIZE.fullmatch(self.memory.strip()):
            raise UsageError(
                f"--query-memory {self.memory!r} is not a size such as 1GB, 512MB or 2GiB"
            )

    @property
    def confinement(self) -> Confinement:
        """One query's memory, and its share of the cores (all queries at once use them all,
        no more: each DuckDB thread is a thread of this server)."""
        threads = max(1, (os.cpu_count() or 1) // self.max_queries)
        return Confinement(memory=self.memory.strip(), threads=threads)


#: Why a query was stopped, as the page says it.
TIMED_OUT: Final = "timed out"
GONE: Final = "client gone"
STOPPING: Final = "server stopping"


@dataclass(eq=False)
class QueryRun:
    """One query on its own thread, stoppable from any other."""

    case: Case
    sql: str
    limits: QueryLimits
    on_end: Callable[[QueryRun], None]
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _done: threading.Event = field(default_factory=threading.Event)
    _connection: duckdb.DuckDBPyConnection | None = None
    _stopped: str | None = None
    _result: QueryResult | None = None
    _error: BaseException | None = None

    def start(self) -> None:
        threading.Thread(target=self._run, name="culprit-sql", daemon=True).start()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def stopped(self) -> str | None:
        return self._stopped

    def stop(self, reason: str) -> None:
        """Interrupt the query (again: an interrupt between two statements is forgotten).
        The first reason given is the one the page states."""
        with self._lock:
            if self._stopped is None:
                self._stopped = reason
            if self._connection is not None:
                # Closed meanwhile: the query is over, nothing to stop.
                with contextlib.suppress(duckdb.ConnectionException):
                    self._connection.interrupt()

    def outcome(self) -> QueryResult:
        """The result of a finished query.

        Raises:
            QueryError: the query failed, or was stopped (why, in words).
        """
        if self._result is not None:
            return self._result
        if self._stopped is not None:
            raise QueryError(self._stop_message(self._stopped))
        if self._error is not None:
            raise self._error
        raise QueryError("the query ended without a result")

    def _run(self) -> None:
        _lower_priority()
        try:
            self._result = run_query(
                self.case, self.sql, self.limits.confinement, on_connect=self._attach
            )
        except QueryError as exc:
            self._error = exc
        except duckdb.InterruptException:
            self._error = QueryError("the query was interrupted")
        except duckdb.Error as exc:
            # Opening the case's views failed: a damaged file of the case.
            first = str(exc).strip().splitlines()
            self._error = QueryError(first[0] if first else type(exc).__name__)
        except Exception as exc:  # a bug must still end the request with a page, not hang it
            self._error = exc
        finally:
            with self._lock:
                self._connection = None
            # The slot first: a page that sees the query done may be asked for the next one.
            self.on_end(self)
            self._done.set()

    def _attach(self, connection: duckdb.DuckDBPyConnection) -> None:
        with self._lock:
            if self._stopped is not None:
                raise QueryError(self._stop_message(self._stopped))
            self._connection = connection

    def _stop_message(self, reason: str) -> str:
        if reason == TIMED_OUT:
            return (
                f"the query ran for more than {self.limits.timeout_s:g} s and was stopped "
                "(culprit serve --query-timeout sets the limit)"
            )
        if reason == STOPPING:
            return "the query was stopped: the server is shutting down"
        return "the query was stopped: the page that asked for it went away"


def _lower_priority() -> None:
    """Make this thread yield the cores to the pages: on Linux a thread has its own nice
    value (a query and its single DuckDB worker are this thread), so a page that diagnoses a
    case is not slowed tenfold by the queries beside it. Elsewhere nothing changes."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), QUERY_NICENESS)


class QueryGate:
    """The queries running now: at most ``limits.max_queries``."""

    def __init__(self, limits: QueryLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._running: set[QueryRun] = set()  # guarded by _lock

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def start(self, case: Case, sql: str) -> QueryRun | None:
        """Start ``sql`` over ``case`` on its own thread; None when the gate is full."""
        run = QueryRun(case, sql, self.limits, self._ended)
        with self._lock:
            if len(self._running) >= self.limits.max_queries:
                return None
            self._running.add(run)
        run.start()
        return run

    def stop_all(self) -> None:
        """Stop every running query (the server is stopping)."""
        with self._lock:
            running = list(self._running)
        for run in running:
            run.stop(STOPPING)

    async def finish(self, run: QueryRun, disconnected: Callable[[], Awaitable[bool]]) -> None:
        """Wait for ``run`` to end, stopping it at its deadline, when ``disconnected()`` says
        the client is gone, or when this wait is cancelled."""
        deadline = time.monotonic() + self.limits.timeout_s
        stopped_at: float | None = None
        try:
            while not run.done:
                now = time.monotonic()
                if now >= deadline:
                    run.stop(TIMED_OUT)
                elif run.stopped is None and await disconnected():
                    run.stop(GONE)
                elif run.stopped is not None:
                    run.stop(run.stopped)
                if run.stopped is not None:
                    stopped_at = stopped_at or now
                    if now - stopped_at > STOP_GRACE_S:
                        return
                await anyio.sleep(POLL_S)
        finally:
            if not run.done:
                run.stop(STOPPING)

    def _ended(self, run: QueryRun) -> None:
        with self._lock:
            self._running.discard(run)
