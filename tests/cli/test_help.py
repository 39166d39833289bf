"""Every command and every option explains itself in ``--help``."""

from __future__ import annotations

from typer.testing import CliRunner

from analyzer.cli import app
from tests.cli.commands import command_tree, walk

runner = CliRunner(env={"COLUMNS": "200"})


def test_help_lists_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("ingest", "case", "query", "version"):
        assert command in result.stdout


def test_every_command_and_option_has_help_text() -> None:
    missing = []
    for path, command in walk(command_tree()):
        name = " ".join(("culprit", *path))
        if not (command.help or "").strip():
            missing.append(name)
        for param in command.params:
            # click adds --help itself, with its own text.
            if param.name != "help" and not (getattr(param, "help", None) or "").strip():
                missing.append(f"{name} {param.opts[0]}")
    assert missing == [], f"no help text: {missing}"


def test_every_command_has_help_with_an_example() -> None:
    for command in (["ingest"], ["case", "info"], ["query"]):
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0
        assert "Example: culprit" in result.stdout
