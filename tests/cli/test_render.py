"""Plain lines printed as rich prints them, without rich.console when rich would change
nothing."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich._emoji_codes import EMOJI
from rich.console import Console

from analyzer.cli import render


def _rich(lines: list[str]) -> str:
    """What ``console().print(line, markup=False)`` writes for each line."""
    out = io.StringIO()
    screen = Console(file=out, highlight=False, soft_wrap=True)
    for line in lines:
        screen.print(line, markup=False)
    return out.getvalue()


LINES = [
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
    "an upper-case :FIRE: and :Thumbs_Up: code",
    # rich changes these: emoji codes, tabs, control codes.
    "training :fire: ended",
    "pass :thumbs_up-emoji: and :+1:",
    "code :100: and :1234:",
    "tab\there",
    "bell\x07 cr\r back\x08 esc\x1b[31m",
    "an unknown :no_such_emoji: code",
]


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("stderr", [False, True])
def test_a_line_prints_as_rich_prints_it(
    capsys: pytest.CaptureFixture[str], line: str, stderr: bool
) -> None:
    render.print_lines([line, "after"], stderr=stderr)
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
    out = io.StringIO()
    saved, sys.stdout = sys.stdout, out
    try:
        render.print_lines([text])
    finally:
        sys.stdout = saved
    assert out.getvalue() == _rich([text])


def test_no_emoji_has_a_name_ruled_out_without_its_table() -> None:
    # Times (18:00:07) and paths (/job:a/replica:0) look like emoji codes (":00:",
    # ":a/replica:"); rich's table has no such name.
    assert not [name for name in EMOJI if render._NO_EMOJI.fullmatch(name)]
    assert render._NO_EMOJI.fullmatch("00")
    assert render._NO_EMOJI.fullmatch("jax_worker/replica")
    assert not render._NO_EMOJI.fullmatch("100")
    assert not render._NO_EMOJI.fullmatch("thumbs_up")


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
