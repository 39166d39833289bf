"""The ingest progress bar: drawn on a terminal, and not even built when nothing is shown."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from rich.console import Console

from analyzer.cli import progress


def _drive(bar: progress.ProgressBar) -> None:
    with bar:
        bar.start(100)
        bar.file("/some/long/path/" + "x" * 80 + "/worker-0.log")
        bar.advance(60)
        bar.advance(40)


@pytest.mark.parametrize("enabled", ["True", "False"])
def test_nothing_shown_imports_no_progress_machinery(enabled: str) -> None:
    code = (
        "import sys\n"
        "from analyzer.cli.progress import ProgressBar\n"
        f"bar = ProgressBar(enabled={enabled})\n"  # stderr is a pipe here: not a terminal
        "with bar:\n"
        "    bar.start(10); bar.file('a.log'); bar.advance(10)\n"
        "assert 'rich.progress' not in sys.modules\n"
        # Not even the console: nothing forces a terminal, and a pipe is none.
        "assert 'rich.console' not in sys.modules\n"
    )
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=environ)


class _Stream(io.StringIO):
    def __init__(self, tty: bool | None) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        if self.tty is None:
            raise ValueError("I/O operation on closed file")
        return self.tty


@pytest.mark.parametrize("variable", [None, "FORCE_COLOR", "TTY_COMPATIBLE"])
@pytest.mark.parametrize("tty", [True, False, None])
def test_a_terminal_is_ruled_out_only_when_rich_would_rule_it_out(
    monkeypatch: pytest.MonkeyPatch, variable: str | None, tty: bool | None
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    if variable is not None:
        monkeypatch.setenv(variable, "1")
    stream = _Stream(tty)
    rich_says = Console(file=stream).is_terminal
    # Never "no" where rich says "yes"; "maybe" (then rich is asked) only when it may be one.
    assert progress._may_be_a_terminal(stream) is (variable is not None or tty is True)
    if not progress._may_be_a_terminal(stream):
        assert rich_says is False


@pytest.mark.parametrize("enabled", [True, False])
def test_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
    # pytest's stderr is no terminal: the variable makes the bar ask the console below.
    monkeypatch.setenv("FORCE_COLOR", "1")
    screen = io.StringIO()
    monkeypatch.setattr(
        progress,
        "console",
        lambda stderr: Console(file=screen, force_terminal=True, width=120),
    )
    bar = progress.ProgressBar(enabled=enabled)
    _drive(bar)
    # Drawn while running and erased at the end (transient) when enabled; never otherwise.
    assert bool(screen.getvalue()) is enabled
