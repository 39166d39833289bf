"""The command tree of ``culprit`` as click builds it, for tests that walk every command."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from analyzer.cli import app


def command_tree() -> Any:
    """The root command (a click group) that ``culprit`` runs."""
    return typer.main.get_command(app)


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``command`` (itself included), with its words."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, (*path, name))


def parameter(path: tuple[str, ...], name: str) -> Any:
    """The option or argument ``name`` (the Python parameter's name) of the command ``path``."""
    command = command_tree()
    for word in path:
        command = command.commands[word]
    matches = [p for p in command.params if p.name == name]
    assert matches, f"culprit {' '.join(path)} has no parameter {name!r}"
    return matches[0]
