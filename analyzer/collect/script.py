"""A plan as a bash script (``culprit collect … --print-commands``): the exact commands culprit
would run, each word shell-quoted, with why it is needed and the permission it takes above
it, writing the same bundle layout and the same record (``plan.json``, ``results.jsonl``,
``manifest.json``) with the same caps, timeouts, retries on quota and resumption, so that a
customer can review it, run it without culprit, and ship the folder.

The script needs bash and the usual tools (coreutils ``head``, ``wc``, ``date``,
``sha256sum`` or ``shasum``; ``awk``, ``grep``, ``sed``; ``timeout`` when present) and the
CLIs the plan calls. It reads no credential: the CLIs use their own.
"""

from __future__ import annotations

import shlex
from importlib.resources import files
from typing import Final

from analyzer import __version__
from analyzer.collect.plan import (
    FORMAT,
    MANIFEST_FILE,
    PARTIAL_DIR,
    PLAN_FILE,
    RECORD_DIR,
    RESULTS_FILE,
    STDERR_DIR,
    VERSION_ARGV,
    Capture,
    Plan,
    Step,
)
from analyzer.collect.process import QUOTA
from analyzer.collect.record import now, plan_json
from analyzer.collect.runner import RunSettings

_PLAN_END: Final = "CULPRIT_PLAN_JSON"

#: The functions every script carries (analyzer/collect/helpers.sh, shipped with the package).
_HELPERS: Final = (files("analyzer.collect") / "helpers.sh").read_text(encoding="utf-8")


def _word(arg: str | Capture, variable: str) -> str:
    return shlex.quote(arg) if isinstance(arg, str) else f'"${variable}"'


def _command(step: Step) -> str:
    return " ".join(_word(a, "url") for a in step.argv)


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())


def _step(number: int, step: Step) -> list[str]:
    lines = [
        "",
        _comment(f"{number}. {step.id}: {step.why}."),
        _comment(f"Needs: {step.permission}."),
    ]
    head = f"{shlex.quote(step.id)} {step.cap} "
    if not step.captures:
        lines.append(
            f"run {head}{shlex.quote(step.output)} {shlex.quote(step.tool)} -- {_command(step)}"
        )
        return lines
    if len(step.captures) > 1:
        raise ValueError(f"step {step.id}: one captured argument at most")
    capture = step.captures[0]
    what = shlex.quote(f"`{' '.join(capture.argv[:3])} …`")
    output = shlex.quote(step.output)
    if step.name_from_url:
        folder = shlex.quote(step.output.rsplit("/", 1)[0])
        output = f'"$(named {folder} "$url" {output})"'
    lines += [
        f"if ! done_already {shlex.quote(step.id)}; then",
        f"  if url=$(capture {shlex.quote(step.id)} -- {shlex.join(capture.argv)}); then",
        f"    run {head}{output} {shlex.quote(step.tool)} -- {_command(step)}",
        "  else",
        f"    failed_capture {shlex.quote(step.id)} {shlex.quote(step.tool)} {what}",
        "  fi",
        "fi",
    ]
    return lines


def render(plan: Plan, settings: RunSettings) -> str:
    """The bash script of ``plan`` (see the module docstring)."""
    versions = "\n".join(
        f"      {tool}) {shlex.join(VERSION_ARGV[tool])} ;;"
        for tool in plan.tools
        if tool in VERSION_ARGV
    )
    helpers = _HELPERS.replace("__VERSIONS__", versions).replace("__STDERR__", STDERR_DIR)
    target = " ".join(f"{k}={v}" for k, v in plan.target.items())
    window = "" if plan.window is None else f", {plan.window[0]} to {plan.window[1]}"
    head = [
        "#!/usr/bin/env bash",
        _comment(f"culprit collect {plan.platform}: {target}{window}."),
        _comment(f"Written by culprit {__version__} at {now()}: {len(plan.steps)} commands."),
        "#",
        "# Review every command below, then run:  bash THIS_SCRIPT BUNDLE_DIR",
        "# and send BUNDLE_DIR (a .tar.gz of it will do). `culprit analyze BUNDLE_DIR` reads it",
        "# and `culprit collect verify BUNDLE_DIR` checks it against its manifest.",
        "#",
        "# Every command only reads. The CLIs use their own credentials (their configuration and",
        "# your environment, passed through untouched); this script reads none and writes none.",
        "# Outputs are stored as the CLIs print them: culprit is not running here, so they are",
        "# not redacted (culprit's reports redact what they quote). Run it again to resume: a",
        "# command whose output is complete is skipped.",
        "",
        "set -u -o pipefail",
        'B=${1:?"usage: bash THIS_SCRIPT BUNDLE_DIR"}',
        f'M="$B/{RECORD_DIR}"',
        f"FORMAT={shlex.quote(FORMAT)}",
        f"TOOL_VERSION={shlex.quote(__version__)}",
        f"PLATFORM={shlex.quote(plan.platform)}",
        f"STEPS={len(plan.steps)}",
        f"TOTAL_CAP={plan.total_cap}",
        f"TIMEOUT={settings.timeout_s:g}",
        f"ATTEMPTS={settings.attempts}",
        f"BACKOFF={settings.backoff_s:g}",
        f"QUOTA={shlex.quote(QUOTA)}",
        "total=0",
        f'mkdir -p "$B/{STDERR_DIR}" "$B/{PARTIAL_DIR}"',
        f'rm -f "$B/{PARTIAL_DIR}"/*',
        helpers.rstrip(),
        "",
        f"cat > \"$B/{PLAN_FILE}\" <<'{_PLAN_END}'",
        plan_json(plan),
        _PLAN_END,
    ]
    body: list[str] = []
    for number, step in enumerate(plan.steps, 1):
        body += _step(number, step)
    tail = [
        "",
        "manifest true",
        f'rm -rf "$B/{PARTIAL_DIR}"',
        f'echo "culprit-collect: done; the record is in $B/{RECORD_DIR} '
        f'({RESULTS_FILE.rsplit("/", 1)[-1]}, {MANIFEST_FILE.rsplit("/", 1)[-1]})" >&2',
        "",
    ]
    return "\n".join(head + body + tail)
