"""The two ways to use a plan: collect a bundle folder with it, or print it as a script.

Both start the same way: the discovery commands run (they only list: pods and nodes, the
ModelArts job's details) and the plan is built from what they found. Collecting writes the
discovery outputs into the bundle and runs the rest; printing keeps them in memory and renders
every command, discovery included, so that the script collects the same files.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from analyzer.collect import gke, modelarts, process
from analyzer.collect.plan import Plan, Platform, Step
from analyzer.collect.record import COLLECTED, CollectionManifest, StepResult
from analyzer.collect.runner import Interrupted, Progress, Runner, RunSettings
from analyzer.collect.script import render
from analyzer.errors import CollectError

#: Builds a plan, running discovery steps through the callable it is given.
Builder = Callable[[Callable[[Step], bytes]], Plan]


@dataclass(frozen=True)
class CollectResult:
    """What a collection did."""

    bundle: Path
    plan: Plan
    #: The latest result of every step that ran (or was complete already), in plan order.
    results: list[StepResult]
    manifest: CollectionManifest

    @property
    def failed(self) -> list[StepResult]:
        """Steps that failed, were skipped at the total cap, or were cut at a cap."""
        return [r for r in self.results if r.status != "ok"]

    @property
    def collected(self) -> int:
        return sum(r.status in COLLECTED for r in self.results)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.results if r.status in COLLECTED)


def _builder_gke(target: gke.GkeTarget, settings: RunSettings) -> Builder:
    def build(discover: Callable[[Step], bytes]) -> Plan:
        return gke.plan(target, discover, cap=settings.source_cap, total_cap=settings.total_cap)

    return build


def _builder_modelarts(target: modelarts.ModelArtsTarget, settings: RunSettings) -> Builder:
    def build(discover: Callable[[Step], bytes]) -> Plan:
        return modelarts.plan(
            target, discover, cap=settings.source_cap, total_cap=settings.total_cap
        )

    return build


def _collect(
    platform: Platform,
    target: dict[str, str],
    window: tuple[str, str] | None,
    build: Builder,
    bundle: Path,
    settings: RunSettings,
    progress: Progress | None,
) -> CollectResult:
    with Runner(bundle, settings, progress) as runner:
        runner.claim(platform, target)
        return _run(platform, target, window, build, runner, settings)


def _run(
    platform: Platform,
    target: dict[str, str],
    window: tuple[str, str] | None,
    build: Builder,
    runner: Runner,
    settings: RunSettings,
) -> CollectResult:
    bundle = runner.bundle
    discovered: list[Step] = []

    def discover(step: Step) -> bytes:
        discovered.append(step)
        # The plan so far is on disk before anything runs: a collection cut short during
        # discovery is still a bundle with a record.
        runner.write_plan(Plan(platform, target, window, tuple(discovered), settings.total_cap))
        return runner.discover(step)

    plan = Plan(platform, target, window, (), settings.total_cap)
    try:
        plan = build(discover)
        runner.write_plan(plan)
        done = {s.id for s in discovered}
        runner.run_all([s for s in plan.steps if s.id not in done])
    except (KeyboardInterrupt, Interrupted):
        runner.children.stop_all()
        runner.finish(plan if plan.steps else _so_far(plan, discovered), interrupted=True)
        raise KeyboardInterrupt from None
    except BaseException:
        # A discovery that failed (or a bug): the record still says what was done.
        runner.children.stop_all()
        runner.finish(plan if plan.steps else _so_far(plan, discovered), interrupted=True)
        raise
    manifest = runner.finish(plan, interrupted=False)
    results = [runner.results[s.id] for s in plan.steps if s.id in runner.results]
    return CollectResult(bundle, plan, results, manifest)


def _so_far(plan: Plan, discovered: list[Step]) -> Plan:
    return Plan(plan.platform, plan.target, plan.window, tuple(discovered), plan.total_cap)


def collect_gke(
    target: gke.GkeTarget,
    bundle: Path,
    settings: RunSettings | None = None,
    progress: Progress | None = None,
) -> CollectResult:
    """Collect a GKE workload's bundle into the folder ``bundle`` (see :mod:`.gke`).

    Raises:
        CollectError: the workload's pods cannot be listed or none match.
        KeyboardInterrupt: after leaving the bundle with what was complete.
    """
    settings = settings or RunSettings()
    return _collect(
        "gke",
        target.as_record(),
        target.window,
        _builder_gke(target, settings),
        bundle,
        settings,
        progress,
    )


def collect_modelarts(
    target: modelarts.ModelArtsTarget,
    bundle: Path,
    settings: RunSettings | None = None,
    progress: Progress | None = None,
) -> CollectResult:
    """Collect a ModelArts training job's bundle into the folder ``bundle``.

    Raises:
        CollectError: the job's details cannot be had.
        KeyboardInterrupt: after leaving the bundle with what was complete.
    """
    settings = settings or RunSettings()
    return _collect(
        "modelarts",
        target.as_record(),
        None,
        _builder_modelarts(target, settings),
        bundle,
        settings,
        progress,
    )


def _probe(settings: RunSettings) -> Callable[[Step], bytes]:
    """Discovery for a printed plan: run the listing, keep its output in memory."""
    children = process.Children()

    def discover(step: Step) -> bytes:
        argv = [a for a in step.argv if isinstance(a, str)]
        for attempt in range(1, settings.attempts + 1):
            buffer = io.BytesIO()
            outcome = process.run(
                argv,
                process.Limited(buffer, step.cap),
                timeout=settings.timeout_s,
                children=children,
            )
            if outcome.succeeded:
                return buffer.getvalue()
            stderr = outcome.stderr.decode("utf-8", "replace")
            if attempt == settings.attempts or not process.is_quota(stderr):
                last = next((s for s in reversed(stderr.strip().splitlines()) if s.strip()), "")
                why = outcome.error or f"exited with status {outcome.exit_status}: {last}"
                raise CollectError(
                    f"{step.id} (`{' '.join(argv[:4])} …`) is needed to write the commands "
                    f"and failed: {why}"
                )
            time.sleep(settings.backoff_s * 2 ** (attempt - 1))
        raise AssertionError("unreachable")

    return discover


def gke_script(target: gke.GkeTarget, settings: RunSettings | None = None) -> str:
    """The GKE collection as a bash script (discovery runs here, read-only)."""
    settings = settings or RunSettings()
    return render(_builder_gke(target, settings)(_probe(settings)), settings)


def modelarts_script(target: modelarts.ModelArtsTarget, settings: RunSettings | None = None) -> str:
    """The ModelArts collection as a bash script (ShowTrainingJobDetails runs here, unless
    every task is given)."""
    settings = settings or RunSettings()
    return render(_builder_modelarts(target, settings)(_probe(settings)), settings)
