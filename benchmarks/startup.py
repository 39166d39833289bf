"""Start-up benchmark: ``python -m benchmarks.startup [--runs 5]`` (RESULTS.md, "Start-up").

Times ``culprit analyze FILE -o OUT --quiet`` on a 10-line log (klog lines of a training step
loop ending in an XLA runtime error; the verdict must cite a first error) in a fresh child
process each run, after one run that is not timed (it fills the catalogue's parse cache and the
page cache, as any earlier run of culprit on the machine has), each into an output directory of
its own (an existing case of the same file would be reused, not ingested). Beside it, in the
same run, the floors no culprit change can go under: the interpreter alone (``python -c
pass``) and importing polars and pyarrow, with the environment culprit's start-up sets
(:data:`analyzer.cli.application.ENVIRONMENT`: numpy's OpenBLAS on one thread, ~0.06 s of CPU
less than its default pool). Whether the analyzer's modules have their bytecode
compiled is recorded: a wheel install compiles them, while an editable install run with
``PYTHONDONTWRITEBYTECODE`` set compiles every module on every run (about 0.3 s more here).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from analyzer.cli.application import ENVIRONMENT
from benchmarks import REPO_DIR, measure, say
from benchmarks.families import STARTUP
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command

#: The 10-line file: a step loop, a late heartbeat, the failure and the exit.
TEN_LINES: Final = "".join(
    f"{line}\n"
    for line in (
        "I1129 18:00:00.000000    1 train.py:10] step 100 loss 2.31",
        "I1129 18:00:01.000000    1 train.py:10] step 101 loss 2.30",
        "I1129 18:00:02.000000    1 train.py:10] step 102 loss 2.29",
        "I1129 18:00:03.000000    1 train.py:10] step 103 loss 2.28",
        "W1129 18:00:04.000000    1 heartbeat.cc:55] heartbeat late from worker 3",
        "I1129 18:00:05.000000    1 train.py:10] step 104 loss 2.27",
        "E1129 18:00:06.000000    1 tpu_runtime.cc:120] TPU chip 2 reported a fatal hardware error",
        "E1129 18:00:07.000000    1 train.py:99] jaxlib.xla_extension.XlaRuntimeError: INTERNAL: "
        "Core halted unexpectedly",
        "I1129 18:00:08.000000    1 launcher.py:5] worker exiting with code 1",
        "I1129 18:00:09.000000    1 launcher.py:6] shutting down",
    )
)
FLOORS: Final = {
    "python -c pass": "pass",
    "import polars, pyarrow": (
        "import os; "
        f"[os.environ.setdefault(k, v) for k, v in {dict(ENVIRONMENT)!r}.items()]; "
        "import polars, pyarrow"
    ),
}


def compiled_share(package: Path) -> float:
    """The share of ``package``'s modules whose bytecode exists for this interpreter."""
    tag = sys.implementation.cache_tag
    modules = list(package.rglob("*.py"))
    compiled = [p for p in modules if (p.parent / "__pycache__" / f"{p.stem}.{tag}.pyc").exists()]
    return len(compiled) / len(modules) if modules else 0.0


def first_error_line(findings: Path) -> int | None:
    """The line the verdict cites as its first error."""
    first = json.loads(findings.read_text(encoding="utf-8"))["verdict"].get("first_error")
    return None if first is None else int(first["citation"]["line"])


def _timed(
    command: Callable[[int], list[str]], workdir: Path, name: str, runs: int
) -> list[measure.Run]:
    """``runs`` runs of ``command(k)``, ``k`` the run's number."""
    return [measure.run_once(command(k), workdir / f"{name}-{k}.log") for k in range(runs)]


def _python(code: str) -> Callable[[int], list[str]]:
    """The interpreter running ``code``, whatever the run."""
    return lambda _: [sys.executable, "-c", code]


def _summary(runs: list[measure.Run]) -> dict[str, Any]:
    walls = [r.seconds for r in runs]
    cpus = [r.user_s + r.system_s for r in runs]
    return {
        "wall_s": walls,
        "wall_median_s": statistics.median(walls),
        "cpu_s": cpus,
        "cpu_median_s": statistics.median(cpus),
        "peak_rss_mib": max(r.peak_rss_mib for r in runs),
        "load": [[r.load_before, r.load_after] for r in runs],
    }


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    parser = parser_for("benchmarks.startup", __doc__)
    parser.add_argument("--cache", type=Path, default=REPO_DIR / "benchmarks" / ".cache")
    add_recording_options(parser, runs=5)
    args = checked(parser, argv)
    command = recorded_command("benchmarks.startup", argv)
    start = measure.Start.now()
    with measure.work_directory(args.cache, "startup-", keep=False) as workdir:
        log = workdir / "ten.log"
        log.write_text(TEN_LINES, encoding="utf-8")
        culprit = measure.culprit_command()

        def analyze(out: str) -> list[str]:
            return [*culprit, "analyze", str(log), "-o", str(workdir / out), "--quiet"]

        measure.run_once(analyze("out-warm-up"), workdir / "warm-up.log")
        cited = first_error_line(workdir / "out-warm-up" / "findings.json")
        if cited is None:
            raise measure.BenchmarkError("the analysis of the 10 lines found no first error")
        say(f"culprit analyze, 10 lines, {args.runs} runs ...")
        timed = _timed(lambda k: analyze(f"out-{k}"), workdir, "analyze", args.runs)
        if any(
            first_error_line(workdir / f"out-{k}" / "findings.json") != cited
            for k in range(args.runs)
        ):
            raise measure.BenchmarkError("a timed run's verdict differs from the first run's")
        floors = {
            name: _summary(_timed(_python(code), workdir, f"floor{k}", args.runs))
            for k, (name, code) in enumerate(FLOORS.items())
        }
    result = {
        "command_timed": "culprit analyze FILE -o OUT --quiet",
        "lines": TEN_LINES.count("\n"),
        "first_error_line": cited,
        "bytecode_compiled_share": round(compiled_share(REPO_DIR / "analyzer"), 3),
        **_summary(timed),
        "floors": floors,
    }
    report = {
        **measure.run_stamp(STARTUP.kind, command, args.runs),
        "results": [result],
        "method": (
            "wall time of a fresh child process (interpreter start-up and imports included), "
            "after one untimed run; CPU and peak RSS from the kernel's rusage of the child"
        ),
        **start.provenance(),
    }
    finish(report, STARTUP, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
