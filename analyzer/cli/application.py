"""The ``culprit`` typer app: its global options, the table of every command, and the one place
that turns exceptions into messages and exit codes.

Commands are registered from :data:`COMMANDS` and :data:`GROUPS` below, in the order
``culprit --help`` lists them, rather than by decorators that run when their module is
imported: the table is the whole command line at a glance.

(The module is not called ``app.py``: :mod:`analyzer.cli` re-exports the ``app`` object, which
would hide a submodule of the same name.)
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from analyzer.cli import (
    analyze,
    case,
    collect,
    diff,
    handoff,
    ingest,
    match,
    query,
    replay,
    schema,
    serve,
    signatures,
)
from analyzer.cli.exits import EXIT_BROKEN_PIPE, EXIT_BUG, EXIT_ERROR, EXIT_INTERRUPTED
from analyzer.cli.render import tolerate_any_encoding
from analyzer.cli.version import version
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    # typer vendors click: the context its groups receive is that click's, not typer.Context.
    from typer._click import Context

Command = Callable[..., None]


@dataclass(frozen=True)
class Group:
    """A command with sub-commands (``culprit case info``)."""

    name: str
    help: str
    commands: tuple[tuple[str, Command], ...]


#: Every top-level command, by name.
COMMANDS: Final[tuple[tuple[str, Command], ...]] = (
    ("version", version),
    ("ingest", ingest.ingest),
    ("query", query.query),
    ("match", match.match),
    ("merge", match.merge),
    ("analyze", analyze.analyze),
    ("report", analyze.report),
    ("diff", diff.diff),
    ("replay", replay.replay),
    ("accuracy", replay.accuracy),
    ("handoff", handoff.handoff),
    ("serve", serve.serve),
)

#: Every group of sub-commands (``--help`` lists them after the commands).
GROUPS: Final[tuple[Group, ...]] = (
    Group(
        "collect",
        "Collect a bundle from a live GKE/TPU workload or ModelArts job (or print the "
        "commands), and verify one.",
        (("gke", collect.gke), ("modelarts", collect.modelarts), ("verify", collect.verify)),
    ),
    Group("case", "Look at a case.", (("info", case.case_info), ("hosts", case.case_hosts))),
    Group(
        "schema",
        "JSON Schemas of culprit's outputs.",
        (("findings", schema.schema_findings),),
    ),
    Group(
        "signatures",
        "List, show, lint and test the signature catalogue.",
        (
            ("list", signatures.signatures_list),
            ("show", signatures.signatures_show),
            ("lint", signatures.signatures_lint),
            ("test", signatures.signatures_test),
        ),
    ),
)


class _ReportingGroup(TyperGroup):
    """The root command: runs every command inside the error policy of culprit.

    Errors the library raises on purpose (:class:`analyzer.errors.AnalyzerError`) become one
    line on stderr and exit code 2; anything else is a bug and says so (exit 3; ``--debug``
    lets the traceback through). Commands therefore call the library directly and never catch.
    """

    def invoke(self, ctx: Context) -> Any:
        try:
            result = super().invoke(ctx)
            # What is still buffered goes now, so a reader that went away is found here.
            sys.stdout.flush()
            return result
        except AnalyzerError as exc:
            _fail(str(exc), EXIT_ERROR)
        except KeyboardInterrupt:
            sys.stderr.write("culprit: interrupted\n")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:
            # `culprit … | head` stopped reading: not a bug. stdout goes to /dev/null so the
            # interpreter's flush at exit does not hit the closed pipe again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(EXIT_BROKEN_PIPE) from None
        except (typer.Exit, typer.Abort, typer.TyperException):
            # Exits the commands chose, and usage errors of the argument parser (typer's
            # click), keep their own message and code.
            raise
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (a bug in culprit; rerun with "
                "--debug for the traceback)",
                EXIT_BUG,
            )


#: The library function (a name of :mod:`analyzer.api`) whose import is most of a command's
#: start-up, by command: imported as part of start-up (see :func:`_start_up`).
WORKFLOWS: Final[dict[str, str]] = {
    "analyze": "analyze",
    "report": "report",
    "ingest": "ingest",
    "match": "match",
    "merge": "merge",
    "query": "query",
    "diff": "diff",
}

#: True from :func:`main`'s start until the command runs: the garbage collector is off.
_starting = False

#: Settings for the process and the workers it starts, unless the user set them: numpy's
#: OpenBLAS starts a thread per core when numpy is imported (a sixteenth of a second of CPU
#: here, nearly a tenth of a small analysis), and culprit does no linear algebra.
ENVIRONMENT: Final = {"OPENBLAS_NUM_THREADS": "1"}


def _start_up() -> None:
    """No collections while typer builds the command, parses its options and the command's
    workflow is imported: what that allocates (modules, classes, typer's and pydantic's
    objects) lives as long as the process, so a collection frees none of it, yet walks all of
    it, again and again as imports grow the heap (a twentieth of a small analysis). And
    :data:`ENVIRONMENT`, before anything imports numpy; and any text printable on a terminal
    that does not encode UTF-8."""
    global _starting
    _starting = True
    gc.disable()
    for name, value in ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    tolerate_any_encoding(sys.stdout, sys.stderr)


def _end_start_up(command: str) -> None:
    """Import ``command``'s workflow, then collect from here on, with what start-up made
    frozen (never walked again). Nothing to do unless :func:`_start_up` ran (a test's
    runner invokes the app directly)."""
    global _starting
    if not _starting:
        return
    _starting = False
    workflow = WORKFLOWS.get(command)
    if workflow is not None:
        from analyzer import api

        getattr(api, workflow)
    gc.freeze()
    gc.enable()


class _Command(TyperCommand):
    """A command: start-up ends when its options are parsed and it is about to run."""

    def invoke(self, ctx: Context) -> Any:
        # The command's names below the root ("case info"): the root's own name is the
        # program's, "culprit" or "python -m analyzer".
        names = []
        at: Context | None = ctx
        while at is not None and at.parent is not None:
            names.append(at.info_name or "")
            at = at.parent
        _end_start_up(" ".join(reversed(names)))
        return super().invoke(ctx)


def _fail(message: str, code: int) -> NoReturn:
    sys.stderr.write(f"culprit: error: {message}\n")
    raise typer.Exit(code)


def _global_options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks of internal errors.")
    ] = False,
) -> None:
    # Nothing to do here: _ReportingGroup reads --debug from the context when a command fails.
    return None


def build_app(only: str | None = None) -> typer.Typer:
    """The ``culprit`` app with every command of :data:`COMMANDS` and :data:`GROUPS`, or only
    the command or group called ``only``."""
    root = typer.Typer(
        name="culprit",
        help="Offline log forensics for large ML training incidents.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        cls=_ReportingGroup,
    )
    root.callback()(_global_options)
    for name, command in COMMANDS:
        if only in (None, name):
            root.command(name, cls=_Command)(command)
    for group in GROUPS:
        if only not in (None, group.name):
            continue
        sub = typer.Typer(help=group.help, no_args_is_help=True)
        for name, command in group.commands:
            sub.command(name, cls=_Command)(command)
        root.add_typer(sub, name=group.name)
    return root


app = build_app()

#: The names :func:`main` can run alone.
_NAMES: Final = frozenset(name for name, _ in COMMANDS) | {group.name for group in GROUPS}


def invoked(args: Sequence[str]) -> str | None:
    """The command (or group) that ``args`` runs, when they name one known: the first
    argument that is not the root's one option."""
    for arg in args:
        if arg != "--debug":
            return arg if arg in _NAMES else None
    return None


def main() -> None:
    """Console-script entry point (``culprit``) and ``python -m analyzer``.

    typer turns every command's signature into parameters when the app runs, a fiftieth of a
    second for all of them: a command line that names its command gets an app of that one
    (the same command object, so the same parsing, help and errors); anything else, such as
    ``culprit --help`` or a mistyped name, gets the whole app. Start-up runs without garbage
    collections (:func:`_start_up`).
    """
    global _starting
    _start_up()
    try:
        build_app(invoked(sys.argv[1:]))()
    finally:
        # No command ran (a usage error, --help): the collector back on, nothing frozen.
        if _starting:
            _starting = False
            gc.enable()
