"""The root command: the command table, the error policy and exit codes, the entry points,
and a ``--help`` that does not wait for the heavy libraries."""

from __future__ import annotations

import gc
import os
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import analyzer
import analyzer.cli
import analyzer.cli.version
from analyzer import api
from analyzer.cli import app, application
from analyzer.cli.application import COMMANDS, GROUPS, build_app, invoked, main
from analyzer.cli.exits import EXIT_BROKEN_PIPE, EXIT_BUG, EXIT_ERROR, EXIT_INTERRUPTED
from tests.conftest import EXAMPLE

runner = CliRunner(env={"COLUMNS": "200"})

#: Modules of analyzer/cli that hold no command.
SUPPORT_MODULES = {"application", "exits", "options", "progress", "render", "__main__"}


def test_every_command_module_is_in_the_table() -> None:
    registered = {command.__module__ for _, command in COMMANDS} | {
        command.__module__ for group in GROUPS for _, command in group.commands
    }
    modules = {
        f"analyzer.cli.{m.name}"
        for m in pkgutil.iter_modules(analyzer.cli.__path__)
        if m.name not in SUPPORT_MODULES
    }
    assert modules == registered


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["ingest", "/no/such/bundle", "-o", "/tmp/x"],
            "/no/such/bundle: no such file or directory",
        ),
        (["case", "info", "/no/such/case"], "/no/such/case: no such case directory"),
        (["ingest", str(EXAMPLE), "-o", "/tmp/x", "--tz", "Mars/Olympus"], "unknown time zone"),
        (["ingest", str(EXAMPLE), "-o", "/tmp/x", "--reader", "nope"], "unknown reader 'nope'"),
        (["case", "info", "/tmp", "--format", "xml"], "--format must be table or json"),
        (["serve", "/no/such/cases"], "/no/such/cases: no such file or directory"),
    ],
)
def test_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("culprit: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.output


def _explode(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("boom")


def test_a_bug_says_so_in_one_line_and_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "case_info", _explode)
    result = runner.invoke(app, ["case", "info", "/tmp"])
    assert result.exit_code == EXIT_BUG
    assert result.stderr == (
        "culprit: error: internal error: ZeroDivisionError: boom (a bug in culprit; rerun with "
        "--debug for the traceback)\n"
    )


def test_debug_lets_the_traceback_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "case_info", _explode)
    result = runner.invoke(app, ["--debug", "case", "info", "/tmp"])
    assert isinstance(result.exception, ZeroDivisionError)


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "case_info", interrupt)
    result = runner.invoke(app, ["case", "info", "/tmp"])
    assert result.exit_code == EXIT_INTERRUPTED
    assert result.stderr == "culprit: interrupted\n"


@pytest.mark.parametrize("command", ["signatures list", "analyze"])
def test_a_reader_that_stops_reading_is_not_a_bug(command: str, tmp_path: Path) -> None:
    """`culprit … | head -1`: the first line reaches the reader, then culprit ends as a process
    killed by SIGPIPE does, without a word (rich and the error policy used to call it a bug,
    or exit 1). The verdict of ``analyze`` is written in one piece, so a reader of its first
    line may have been handed all of it (culprit then rightly exits 0, as ``printf`` would):
    there the reader goes away before culprit prints."""
    args = command.split()
    if command == "analyze":
        log = tmp_path / "ten.log"
        log.write_text(
            "".join(f"E1129 18:00:0{k}.000000 1 a.py:1] RuntimeError: x {k}\n" for k in range(9))
        )
        args += [str(log), "-o", str(tmp_path / "out")]
    child = subprocess.Popen(
        [sys.executable, "-m", "analyzer", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline() if command != "analyze" else b""
    child.stdout.close()
    error = child.stderr.read()
    child.stderr.close()
    assert child.wait(timeout=120) == EXIT_BROKEN_PIPE, error
    assert first.strip() or command == "analyze"
    assert error == b""


def test_usage_errors_stay_the_parsers() -> None:
    result = runner.invoke(app, ["ingest", str(EXAMPLE)])
    assert result.exit_code == 2
    assert "Missing option" in result.output
    assert "culprit: error" not in result.output


@pytest.mark.parametrize("module", ["analyzer", "analyzer.cli"])
def test_python_dash_m_and_version(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip()
    assert runner.invoke(app, ["version"]).stdout.strip() == done.stdout.strip()


def test_help_does_not_import_the_heavy_libraries() -> None:
    # The reason analyzer.defaults exists: --help reads every default without loading these.
    script = (
        "import sys\n"
        "from analyzer.cli import main\n"
        "sys.argv = ['culprit', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('polars', 'pyarrow', 'duckdb', 'pydantic') if m in sys.modules]\n"
        "print('heavy:', *heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "heavy:"


ALONE = [name for name, _ in COMMANDS] + [group.name for group in GROUPS]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["analyze", "x", "-o", "y"], "analyze"),
        (["--debug", "case", "info", "/tmp"], "case"),
        (["--help"], None),
        (["--debug", "--help"], None),
        (["analyse", "x"], None),
        ([], None),
    ],
)
def test_the_command_a_command_line_runs(args: list[str], expected: str | None) -> None:
    assert invoked(args) == expected


@pytest.mark.parametrize("name", ALONE)
@pytest.mark.parametrize("extra", [["--help"], ["--no-such-option"]])
def test_a_command_alone_parses_as_in_the_whole_app(name: str, extra: list[str]) -> None:
    # main() builds only the command its arguments name: help, usage and errors are the same.
    args = [name, *extra]
    alone, whole = runner.invoke(build_app(name), args), runner.invoke(app, args)
    assert (alone.exit_code, alone.stdout, alone.stderr) == (
        whole.exit_code,
        whole.stdout,
        whole.stderr,
    )


@pytest.fixture
def collector() -> Iterator[list[tuple[str, bool]]]:
    """Where a command notes whether the garbage collector was on when it ran; afterwards the
    collector as it was (main freezes what start-up made)."""
    seen: list[tuple[str, bool]] = []
    yield seen
    gc.unfreeze()
    gc.enable()


def test_main_runs_the_command_its_arguments_name(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    collector: list[tuple[str, bool]],
) -> None:
    def version() -> None:
        collector.append(("version", gc.isenabled()))
        analyzer.cli.version.version()

    monkeypatch.setattr(application, "COMMANDS", (("version", version),))
    monkeypatch.setattr(sys, "argv", ["culprit", "--debug", "version"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == analyzer.__version__
    # Start-up ran without collections; the command runs with them, start-up's objects frozen.
    assert collector == [("version", True)]
    assert gc.get_freeze_count() > 0
    assert gc.isenabled()


def test_a_command_line_that_runs_nothing_leaves_the_collector_on(
    monkeypatch: pytest.MonkeyPatch, collector: list[tuple[str, bool]]
) -> None:
    for args in (["analyze", "--no-such-option"], ["--help"]):
        monkeypatch.setattr(sys, "argv", ["culprit", *args])
        with pytest.raises(SystemExit):
            main()
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0


def test_the_workflows_imported_at_start_up_are_commands_and_api_names() -> None:
    assert set(application.WORKFLOWS) <= {name for name, _ in COMMANDS}
    assert set(application.WORKFLOWS.values()) <= set(api.__all__)


def test_a_command_starts_with_its_workflow_imported() -> None:
    # A fresh interpreter: this one has imported every workflow already. The program's name
    # is the root's ("python -m analyzer" has spaces in it).
    script = (
        "import sys\n"
        "import typer.main\n"
        "from analyzer.cli import application\n"
        "def report() -> None:\n"
        "    print('analysis' if 'analyzer.flows.analysis' in sys.modules else 'none')\n"
        "application.COMMANDS = (('analyze', report), ('version', report))\n"
        "for command in ('version', 'analyze'):\n"
        "    application._start_up()\n"
        "    app = typer.main.get_command(application.build_app(command))\n"
        "    app.main([command], prog_name='python -m analyzer', standalone_mode=False)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["none", "analysis"]


@pytest.mark.parametrize("chosen", [None, "4"])
def test_start_up_keeps_numpy_to_one_blas_thread_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, collector: list[tuple[str, bool]], chosen: str | None
) -> None:
    # Recorded, so the test's own environment comes back afterwards.
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "unset by the test")
    if chosen is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", chosen)
    monkeypatch.setattr(sys, "argv", ["culprit", "--help"])
    with pytest.raises(SystemExit):
        main()
    assert os.environ["OPENBLAS_NUM_THREADS"] == (chosen or "1")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads listed by Linux /proc")
def test_numpy_starts_no_blas_threads_under_culprit() -> None:
    # What the setting is for: numpy imported after start-up runs one BLAS thread (the
    # process's threads: the main one, and none of OpenBLAS's per-core pool).
    script = (
        "import os, sys\n"
        "from analyzer.cli import application\n"
        "application._start_up()\n"
        "import numpy\n"
        "print(len(os.listdir('/proc/self/task')))\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.endswith("NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=environ
    )
    assert done.stdout.split() == ["1"]
