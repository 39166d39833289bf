"""The ingest progress bar: drawn on a terminal, and not even built when nothing is shown."""

from __future__ import annotations

import io
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


def test_nothing_shown_imports_no_progress_machinery() -> None:
    code = (
        "import sys\n"
        "from analyzer.cli.progress import ProgressBar\n"
        "bar = ProgressBar(enabled=True)\n"  # stderr is a pipe here: not a terminal
        "with bar:\n"
        "    bar.start(10); bar.file('a.log'); bar.advance(10)\n"
        "assert 'rich.progress' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.parametrize("enabled", [True, False])
def test_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
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
