"""Running a plan into a bundle folder: a few commands at a time, each with a deadline, a
byte cap and retries with back-off when a quota refuses it; each output redacted and moved
into place only when the command is done, then one line in ``results.jsonl``. A command
whose output and result are complete is not run again (re-running resumes), and Ctrl-C stops
the running commands and leaves the bundle as it is: every file it holds is complete and
recorded, and ``manifest.json`` says the collection is not.
"""

from __future__ import annotations

import fcntl
import io
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from analyzer import defaults
from analyzer.collect import process
from analyzer.collect.plan import (
    LOCK_FILE,
    PARTIAL_DIR,
    PLAN_FILE,
    RECORD_DIR,
    RESULTS_FILE,
    VERSION_ARGV,
    Capture,
    Plan,
    Step,
    output_of,
)
from analyzer.collect.record import (
    COLLECTED,
    CollectionManifest,
    StepResult,
    append_result,
    complete,
    now,
    plan_json,
    read_results,
    write_atomic,
    write_manifest,
)
from analyzer.collect.redaction import output_redactor, redact_file
from analyzer.errors import CollectError


@dataclass(frozen=True)
class RunSettings:
    """How commands are run (defaults: :mod:`analyzer.defaults`)."""

    concurrency: int = defaults.COLLECT_CONCURRENCY
    timeout_s: float = defaults.COLLECT_TIMEOUT_S
    attempts: int = defaults.COLLECT_ATTEMPTS
    backoff_s: float = defaults.COLLECT_BACKOFF_S
    source_cap: int = defaults.COLLECT_SOURCE_CAP
    total_cap: int = defaults.COLLECT_TOTAL_CAP
    redact: bool = True

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.attempts < 1:
            raise CollectError("--concurrency and --attempts must be at least 1")
        if self.timeout_s <= 0 or self.backoff_s < 0:
            raise CollectError("--timeout must be positive and --backoff not negative")
        if self.source_cap < 1 or self.total_cap < 1:
            raise CollectError("byte caps must be at least 1")


class Progress(Protocol):
    """Where a collection reports what it is doing (the command line draws bars)."""

    def started(self, step: Step) -> None:
        """``step`` began running."""

    def advanced(self, step: Step, count: int) -> None:
        """``step`` wrote ``count`` more bytes."""

    def finished(self, step: Step, result: StepResult, skipped: bool) -> None:
        """``step`` ended (``skipped``: it was complete already)."""


class NullProgress:
    """Reports nothing."""

    def started(self, step: Step) -> None:
        return None

    def advanced(self, step: Step, count: int) -> None:
        return None

    def finished(self, step: Step, result: StepResult, skipped: bool) -> None:
        return None


class Interrupted(Exception):
    """A command was stopped because the collection is being interrupted."""


class _Budget:
    """Bytes all commands may still write (the total cap), shared by the threads."""

    def __init__(self, left: int) -> None:
        self._left = left
        self._lock = threading.Lock()

    def take(self, wanted: int) -> int:
        with self._lock:
            granted = min(wanted, max(self._left, 0))
            self._left -= granted
            return granted

    def give_back(self, count: int) -> None:
        with self._lock:
            self._left += count

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return self._left <= 0


class _CappedSink:
    """A file that takes at most the step's cap and what the total budget grants, and says
    how much it took."""

    def __init__(
        self, handle: IO[bytes], cap: int, budget: _Budget, report: Callable[[int], None]
    ) -> None:
        self.handle = handle
        self.cap = cap
        self.budget = budget
        self.report = report
        self.written = 0
        self.by_total = False

    def write(self, data: bytes, /) -> int:
        room = min(len(data), self.cap - self.written)
        granted = self.budget.take(room)
        if granted < room:
            self.by_total = True
        self.handle.write(data[:granted])
        self.written += granted
        if granted:
            self.report(granted)
        return granted


class Runner:
    """Runs the steps of a plan into ``bundle`` (see the module docstring)."""

    def __init__(
        self,
        bundle: Path,
        settings: RunSettings,
        progress: Progress | None = None,
    ) -> None:
        self.bundle = bundle
        self.settings = settings
        self.progress = progress or NullProgress()
        self.children = process.Children()
        self.redactor = output_redactor(enabled=settings.redact)
        self._lock = threading.Lock()
        self._versions: dict[str, str | None] = {}
        self._version_locks: dict[str, threading.Lock] = {}
        bundle.mkdir(parents=True, exist_ok=True)
        (bundle / RECORD_DIR).mkdir(exist_ok=True)
        self._lock_file = (bundle / LOCK_FILE).open("a")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise CollectError(
                "another culprit collect is writing into this folder", path=str(bundle)
            ) from None
        # Left by a collection that was killed: unredacted, never part of the bundle.
        shutil.rmtree(bundle / PARTIAL_DIR, ignore_errors=True)
        (bundle / PARTIAL_DIR).mkdir(parents=True)
        self.results = read_results(bundle)
        done = sum(r.bytes for r in self.results.values() if r.status in COLLECTED)
        self.budget = _Budget(settings.total_cap - done)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock_file.close()  # releases the lock

    # -- the record ---------------------------------------------------------------------------

    def claim(self, platform: str, target: dict[str, str]) -> None:
        """Refuse a folder that holds another collection (another platform, job or cluster);
        the same one is resumed. Nothing in the folder is changed either way."""
        path = self.bundle / PLAN_FILE
        if not path.exists():
            return
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CollectError(f"not JSON: {exc}", path=PLAN_FILE) from None
        if old.get("platform") != platform or old.get("target") != target:
            raise CollectError(
                "the folder holds another collection (another job or cluster); "
                "collect into a new folder",
                path=str(self.bundle),
            )

    def write_plan(self, plan: Plan) -> None:
        """Write ``plan.json`` (the whole plan, or the discovery so far)."""
        write_atomic(self.bundle / PLAN_FILE, (plan_json(plan) + "\n").encode())

    def _record(self, result: StepResult) -> StepResult:
        with self._lock:
            append_result(self.bundle, result)
            self.results[result.id] = result
        return result

    def version(self, tool: str) -> str | None:
        """The tool's version line, asked once per collection."""
        with self._lock:
            lock = self._version_locks.setdefault(tool, threading.Lock())
        with lock:
            if tool not in self._versions:
                argv = VERSION_ARGV.get(tool)
                self._versions[tool] = (
                    None
                    if argv is None
                    else process.first_line(argv, timeout=30.0, children=self.children)
                )
            return self._versions[tool]

    # -- one command --------------------------------------------------------------------------

    def _retrying(
        self, argv: list[str], handle: IO[bytes], cap: int, report: Callable[[int], None]
    ) -> tuple[process.Outcome, int, bool]:
        """Run ``argv`` into ``handle`` until it succeeds, fails for another reason than
        quota, or has had its attempts (waiting ``backoff × 2^n`` between them; each attempt
        starts the file again). The outcome, the attempts made and whether the total cap
        cut it.

        Raises:
            Interrupted: the collection is being stopped.
        """
        settings = self.settings
        attempt = 0
        while True:
            attempt += 1
            handle.seek(0)
            handle.truncate()
            sink = _CappedSink(handle, cap, self.budget, report)
            outcome = process.run(argv, sink, timeout=settings.timeout_s, children=self.children)
            if self.children.stopping.is_set():
                self.budget.give_back(sink.written)
                raise Interrupted
            if outcome.succeeded or sink.by_total:
                return outcome, attempt, sink.by_total
            self.budget.give_back(sink.written)
            stderr = outcome.stderr.decode("utf-8", "replace")
            if attempt >= settings.attempts or not process.is_quota(stderr):
                return outcome, attempt, False
            pause = settings.backoff_s * 2 ** (attempt - 1)
            if not process.sleep_until(time.monotonic() + pause, self.children.stopping):
                raise Interrupted

    def _capture(self, capture: Capture) -> tuple[str | None, str | None]:
        """The text a capture prints, or why it could not be had (redacted)."""
        buffer = io.BytesIO()
        outcome, _attempts, _ = self._retrying(
            list(capture.argv), buffer, process.CAPTURE_CAP, lambda n: None
        )
        # A URL is not part of the bundle: it does not count against the total cap.
        self.budget.give_back(len(buffer.getvalue()))
        if not outcome.succeeded:
            return None, self.redactor(_why(capture.argv, outcome, self.settings))
        text = buffer.getvalue().decode("utf-8", "replace").strip()
        if not text:
            return None, f"`{' '.join(capture.argv[:3])} …` printed nothing"
        return text, None

    def run_step(self, step: Step) -> StepResult:
        """Run one step (or skip it when complete) and record it."""
        previous = self.results.get(step.id)
        if complete(self.bundle, previous):
            assert previous is not None
            self.progress.finished(step, previous, True)
            return previous
        self.progress.started(step)
        start = now()
        if self.budget.exhausted:
            result = StepResult(
                id=step.id,
                tool=step.tool,
                start=start,
                status="skipped",
                end=now(),
                error=f"the total byte cap ({self.settings.total_cap:,} bytes) is reached",
            )
            self.progress.finished(step, self._record(result), False)
            return result
        argv: list[str] = []
        url: str | None = None
        for arg in step.argv:
            if isinstance(arg, str):
                argv.append(arg)
                continue
            value, problem = self._capture(arg)
            if value is None:
                result = StepResult(
                    id=step.id,
                    tool=step.tool,
                    start=start,
                    status="failed",
                    end=now(),
                    version=self.version(arg.tool),
                    error=f"its argument from `{' '.join(arg.argv[:3])} …` failed: {problem}",
                )
                self.progress.finished(step, self._record(result), False)
                return result
            url = value
            argv.append(value)
        output = output_of(step, url)
        raw = self.bundle / PARTIAL_DIR / f"{step.id}.raw"
        try:
            with raw.open("w+b") as handle:
                outcome, attempts, by_total = self._retrying(
                    argv, handle, step.cap, lambda n: self.progress.advanced(step, n)
                )
        except Interrupted:
            raw.unlink(missing_ok=True)
            raise
        version = self.version(step.tool)
        stderr = self.redactor(outcome.stderr.decode("utf-8", "replace")).strip() or None
        if not outcome.succeeded and not by_total:
            raw.unlink(missing_ok=True)
            result = StepResult(
                id=step.id,
                tool=step.tool,
                start=start,
                status="failed",
                exit_status=outcome.exit_status,
                end=now(),
                attempts=attempts,
                version=version,
                error=self.redactor(_why(step.shown(), outcome, self.settings)),
                stderr=stderr,
            )
            self.progress.finished(step, self._record(result), False)
            return result
        target = self.bundle / output
        target.parent.mkdir(parents=True, exist_ok=True)
        staged = self.bundle / PARTIAL_DIR / f"{step.id}.out"
        size, digest, _changed = redact_file(raw, staged, self.redactor)
        staged.replace(target)
        raw.unlink(missing_ok=True)
        cut = outcome.truncated or by_total
        error = None
        if by_total:
            error = f"cut at the total byte cap ({self.settings.total_cap:,} bytes)"
        elif outcome.truncated:
            error = f"cut at its byte cap ({step.cap:,} bytes)"
        result = StepResult(
            id=step.id,
            tool=step.tool,
            start=start,
            status="truncated" if cut else "ok",
            exit_status=outcome.exit_status,
            end=now(),
            attempts=attempts,
            bytes=size,
            sha256=digest,
            output=output,
            version=version,
            error=error,
            stderr=stderr if cut else None,
        )
        self.progress.finished(step, self._record(result), False)
        return result

    # -- many commands ------------------------------------------------------------------------

    def run_all(self, steps: Iterable[Step]) -> list[StepResult]:
        """Run ``steps``, at most ``concurrency`` at a time, in order of submission.

        Raises:
            KeyboardInterrupt: after stopping every running command (the bundle keeps what
                was complete).
        """
        pending = list(steps)
        results: dict[str, StepResult] = {}
        executor = ThreadPoolExecutor(max_workers=self.settings.concurrency)
        futures: dict[Future[StepResult], Step] = {}
        try:
            for step in pending:
                futures[executor.submit(self.run_step, step)] = step
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    results[futures[future].id] = future.result()
        except BaseException:
            self.children.stop_all()
            executor.shutdown(wait=True, cancel_futures=True)
            raise
        executor.shutdown(wait=True)
        return [results[s.id] for s in pending]

    def discover(self, step: Step) -> bytes:
        """Run a discovery step now and return what it wrote.

        Raises:
            CollectError: it failed (its error output says why).
        """
        result = self.run_step(step)
        if result.status not in COLLECTED or result.output is None:
            raise CollectError(
                f"{step.id} failed: {result.error} (the rest of the plan depends on it; "
                f"recorded in {RESULTS_FILE})",
                path=str(self.bundle),
            )
        return (self.bundle / result.output).read_bytes()

    def finish(self, plan: Plan, *, interrupted: bool) -> CollectionManifest:
        """Write ``manifest.json`` and remove what half-done commands left."""
        shutil.rmtree(self.bundle / PARTIAL_DIR, ignore_errors=True)
        return write_manifest(self.bundle, plan, interrupted=interrupted)


def _why(argv: Iterable[str], outcome: process.Outcome, settings: RunSettings) -> str:
    """One line on why a command failed, its error output's last line included."""
    words = list(argv)
    shown = " ".join(words[:4]) + (" …" if len(words) > 4 else "")
    if outcome.error is not None:
        return outcome.error
    if outcome.timed_out:
        return f"`{shown}` ran out of time ({settings.timeout_s:g} s)"
    text = outcome.stderr.decode("utf-8", "replace").strip().splitlines()
    last = next((line.strip() for line in reversed(text) if line.strip()), "")
    return f"`{shown}` exited with status {outcome.exit_status}" + (f": {last}" if last else "")
