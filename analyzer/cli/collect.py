"""``culprit collect``: build a bundle from a live GKE/TPU workload or ModelArts training job
(or print the commands that would), and verify a collected bundle."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from analyzer import defaults
from analyzer.cli import options
from analyzer.cli.exits import EXIT_FAILED
from analyzer.cli.render import console
from analyzer.errors import UsageError

if TYPE_CHECKING:
    from analyzer.api import CollectResult, RunSettings
    from analyzer.cli.progress import CollectBars


def _settings(
    concurrency: int,
    timeout: float,
    source_cap: int,
    total_cap: int,
    attempts: int,
    backoff: float,
    no_redact: bool,
) -> RunSettings:
    from analyzer import api

    return api.RunSettings(
        concurrency=concurrency,
        timeout_s=timeout,
        attempts=attempts,
        backoff_s=backoff,
        source_cap=source_cap,
        total_cap=total_cap,
        redact=not no_redact,
    )


def _script_or_collect(
    script: Callable[[], str],
    collect: Callable[[Path, CollectBars], CollectResult],
    out: Path | None,
    *,
    print_commands: bool,
    quiet: bool,
) -> None:
    """Print the commands, or run them into ``out`` with progress bars and report."""
    if print_commands:
        sys.stdout.write(script())
        return
    if out is None:
        raise UsageError("collect needs -o BUNDLE_DIR (or --print-commands)")
    from analyzer.cli.progress import CollectBars

    with CollectBars(enabled=not quiet) as bars:
        result = collect(out, bars)
    _report(result)


def _report(result: CollectResult) -> None:
    """The summary: what was collected, every command that was not (stderr), what next."""
    screen, errors = console(), console(stderr=True)
    plan = result.plan
    screen.print(
        f"{result.bundle}: {result.collected} of {len(plan.steps)} commands collected "
        f"({result.bytes / 2**20:,.1f} MiB)",
        markup=False,
    )
    for note in plan.notes:
        errors.print(f"note: {note}", markup=False, style="yellow")
    for failed in result.failed:
        errors.print(
            f"{failed.status}: {failed.id}: {failed.error or '(no reason recorded)'}",
            markup=False,
            style="yellow" if failed.status == "truncated" else "red",
        )
    screen.print(
        f"record: {result.bundle / 'culprit-collect'} (plan.json, results.jsonl, manifest.json)",
        markup=False,
    )
    screen.print(f"next: culprit analyze {result.bundle} -o OUT", markup=False)
    if any(r.status in ("failed", "skipped") for r in result.failed):
        raise typer.Exit(EXIT_FAILED)


def gke(
    project: Annotated[str, typer.Option(help="The Google Cloud project.")],
    cluster: Annotated[str, typer.Option(help="The GKE cluster's name.")],
    location: Annotated[str, typer.Option(help="The cluster's region or zone.")],
    namespace: Annotated[str, typer.Option(help="The workload's namespace.")],
    jobset: Annotated[str | None, typer.Option(help="The JobSet's name.")] = None,
    selector: Annotated[
        str | None,
        typer.Option(help="A label selector for the workload's pods (key=value[,key=value])."),
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="How far back, from now: 90s, 30m, 2h, 1d (default 2h).")
    ] = None,
    start: Annotated[
        str | None, typer.Option(help="Start of the window (ISO 8601 with zone).")
    ] = None,
    end: Annotated[str | None, typer.Option(help="End of the window (ISO 8601 with zone).")] = None,
    context: Annotated[
        str | None, typer.Option(help="The kubectl context of the cluster (default: current).")
    ] = None,
    out: options.CollectOut = None,
    print_commands: options.PrintCommands = False,
    concurrency: options.Concurrency = defaults.COLLECT_CONCURRENCY,
    timeout: options.CommandTimeout = defaults.COLLECT_TIMEOUT_S,
    source_cap: options.SourceCap = defaults.COLLECT_SOURCE_CAP,
    total_cap: options.TotalCap = defaults.COLLECT_TOTAL_CAP,
    attempts: options.Attempts = defaults.COLLECT_ATTEMPTS,
    backoff: options.Backoff = defaults.COLLECT_BACKOFF_S,
    no_redact: options.CollectNoRedact = False,
    quiet: options.Quiet = False,
) -> None:
    """Collect a GKE workload's bundle: its pods, nodes and events, every container's log
    (current and previous), Cloud Logging for its containers, nodes and instances, the
    cluster's audit entries and ML Diagnostics logs, with a checksummed record.

    Example: culprit collect gke --project P --cluster C --location L --namespace N --jobset J -o b/
    """
    from analyzer import api

    if since is None and start is None and end is None:
        since = defaults.COLLECT_SINCE
    target = api.GkeTarget(
        project=project,
        cluster=cluster,
        location=location,
        namespace=namespace,
        jobset=jobset,
        selector=selector,
        window=api.collection_window(since, start, end),
        context=context,
    )
    settings = _settings(concurrency, timeout, source_cap, total_cap, attempts, backoff, no_redact)
    _script_or_collect(
        lambda: api.gke_script(target, settings),
        lambda bundle, bars: api.collect_gke(target, bundle, settings, bars),
        out,
        print_commands=print_commands,
        quiet=quiet,
    )


def modelarts(
    job_id: Annotated[str, typer.Option(help="The training job's id (a UUID).")],
    region: Annotated[str, typer.Option(help="The region (cn-north-4, ap-southeast-1…).")],
    project_id: Annotated[
        str | None,
        typer.Option(help="The project id (default: the one of KooCLI's profile)."),
    ] = None,
    task_id: Annotated[
        list[str] | None,
        typer.Option(help="A task (worker-0); repeatable (default: every task of the job)."),
    ] = None,
    out: options.CollectOut = None,
    print_commands: options.PrintCommands = False,
    concurrency: options.Concurrency = defaults.COLLECT_CONCURRENCY,
    timeout: options.CommandTimeout = defaults.COLLECT_TIMEOUT_S,
    source_cap: options.SourceCap = defaults.COLLECT_SOURCE_CAP,
    total_cap: options.TotalCap = defaults.COLLECT_TOTAL_CAP,
    attempts: options.Attempts = defaults.COLLECT_ATTEMPTS,
    backoff: options.Backoff = defaults.COLLECT_BACKOFF_S,
    no_redact: options.CollectNoRedact = False,
    quiet: options.Quiet = False,
) -> None:
    """Collect a ModelArts training job's bundle: its details, events and stages, every task's
    log preview and its whole log from OBS, with a checksummed record.

    Example: culprit collect modelarts --job-id JOB_UUID --region cn-north-4 -o bundle/
    """
    from analyzer import api

    target = api.ModelArtsTarget(
        job_id=job_id, region=region, project_id=project_id, tasks=tuple(task_id or ())
    )
    settings = _settings(concurrency, timeout, source_cap, total_cap, attempts, backoff, no_redact)
    _script_or_collect(
        lambda: api.modelarts_script(target, settings),
        lambda bundle, bars: api.collect_modelarts(target, bundle, settings, bars),
        out,
        print_commands=print_commands,
        quiet=quiet,
    )


def verify(
    bundle: Annotated[Path, typer.Argument(help="A bundle folder `culprit collect` wrote.")],
) -> None:
    """Check a collected bundle against its manifest: every file there with its size and
    sha256, none added; list the commands that failed. Exit 1 if a file is missing or changed.

    Example: culprit collect verify bundle/
    """
    from analyzer import api

    screen = console()
    verified = api.verify_collection(bundle)
    state = "every command ran" if verified.complete else "interrupted: commands did not run"
    screen.print(
        f"{bundle}: {verified.platform} collection, {state}; {verified.members} files, "
        f"{verified.bytes / 2**20:,.1f} MiB",
        markup=False,
    )
    for line in verified.failed:
        screen.print(f"not collected: {line}", markup=False)
    if verified.intact:
        screen.print("every file matches the manifest", markup=False)
        return
    errors = console(stderr=True)
    for problem in verified.problems:
        errors.print(f"damaged: {problem}", markup=False, style="red")
    raise typer.Exit(EXIT_FAILED)
