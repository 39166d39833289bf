"""Plain lines printed as rich prints them (emoji codes left as written), without rich.console
when rich would change nothing; any text printable on a stream that does not encode UTF-8."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from analyzer.cli import render


def _rich(lines: list[str]) -> str:
    """What ``console().print(line, markup=False)`` writes for each line."""
    out = io.StringIO()
    screen = Console(file=out, highlight=False, soft_wrap=True, emoji=False)
    for line in lines:
        screen.print(line, markup=False)
    return out.getvalue()


PLAIN = [
    "Cause: first error PY-XLA-001 at 2026-11-29 18:00:07.000000 UTC (ten.log:8).",
    "Culprit: not determined — undetermined",
    "First error: ten.log:8",
    "a  \n  b  ",
    "",
    "[bold]not markup[/bold] **kept**",
    "中文" * 60,
    "e\u0301 \U0001f600 \u200b",
    "C:\\logs:x",
    "12:34:56 and 1:2:",
    "task /job:jax_worker/replica:0/task:13 — subject",
    "an unknown :no_such_emoji: code",
    # A log line quoted in a verdict keeps its emoji codes as written.
    "training :fire: ended",
    "an upper-case :FIRE: and :Thumbs_Up: code",
    "pass :thumbs_up-emoji: and :+1:",
    "code :100: and :1234:",
]
#: What rich changes: tabs, control codes.
RICH = [
    "tab\there",
    "bell\x07 cr\r back\x08 esc\x1b[31m",
]


@pytest.mark.parametrize("line", PLAIN + RICH)
@pytest.mark.parametrize("stderr", [False, True])
def test_a_line_prints_as_rich_prints_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, line: str, stderr: bool
) -> None:
    built: list[bool] = []
    console = render.console

    def counted(stderr: bool = False) -> Console:
        built.append(stderr)
        return console(stderr=stderr)

    monkeypatch.setattr(render, "console", counted)
    render.print_lines([line, "after"], stderr=stderr)
    assert built == ([stderr] if line in RICH else [])  # rich only where it changes the text
    out, err = capsys.readouterr()
    assert (err if stderr else out) == _rich([line, "after"])
    assert (out if stderr else err) == ""


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    st.lists(
        st.one_of(
            st.characters(codec="utf-8"),
            st.sampled_from(
                [
                    ":",
                    " ",
                    "\t",
                    "\n",
                    "\r",
                    ":smile:",
                    ":Fire:",
                    ":100:",
                    "18:00:07",
                    "/a:b/c:",
                    "[b]",
                ]
            ),
        ),
        max_size=40,
    ).map("".join)
)
def test_any_text_prints_as_rich_prints_it(text: str) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved, sys.stdout = sys.stdout, out
    try:
        render.print_lines([text])
    finally:
        sys.stdout = saved
    out.flush()
    assert out.buffer.getvalue().decode() == _rich([text])


def test_an_emoji_code_is_printed_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    render.print_lines(["First error: training :fire: ended", "tab\t:fire:"])
    assert capsys.readouterr().out == "First error: training :fire: ended\ntab     :fire:\n"


def test_plain_lines_need_no_rich_console() -> None:
    code = (
        "import sys\n"
        "from analyzer.cli.render import print_lines\n"
        "print_lines(['Cause: at 2026-11-29 18:00:07.000000 UTC (ten.log:8).', '/job:a/r:0'])\n"
        "assert 'rich.console' not in sys.modules\n"
        "assert 'rich' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    assert done.stdout.decode() == (
        "Cause: at 2026-11-29 18:00:07.000000 UTC (ten.log:8).\n/job:a/r:0\n"
    )


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_a_stream_that_is_not_utf8_prints_escapes(
    monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    monkeypatch.setattr(sys, "stdout", out)
    render.tolerate_any_encoding(out)
    render.print_lines(["Cause: x", "Culprit: y — z", "tab\t—"])
    out.flush()
    assert out.buffer.getvalue() == b"Cause: x\nCulprit: y \\u2014 z\ntab     \\u2014\n"


def test_a_utf8_stream_is_left_alone() -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    render.tolerate_any_encoding(out)
    assert out.errors == "strict"


def test_culprit_on_a_latin1_terminal_prints_its_verdict(tmp_path: Path) -> None:
    log = tmp_path / "ten.log"
    log.write_text("E1129 18:00:07.000000 1 x.cc:1] RuntimeError: boom\n" * 10)
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    done = subprocess.run(
        [sys.executable, "-m", "analyzer", "analyze", str(log), "-o", str(tmp_path / "out")],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("latin-1")
    assert b"Culprit: not determined \\u2014 undetermined" in done.stdout
