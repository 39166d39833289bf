"""Output helpers shared by the commands: the console, plain lines, table cells, and tables as
text.

rich and pyarrow are imported inside the functions: this module is on the import path of
``culprit --help``, which must not wait for them, and :func:`print_lines` prints without
rich.console (a thirtieth of a second of a small analysis) whenever rich would print the
text as given.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

import typer

if TYPE_CHECKING:
    import pyarrow as pa
    from rich.console import Console


def console(stderr: bool = False) -> Console:
    """A console that prints text as given: no syntax highlighting, long lines not cut, and
    no emoji codes replaced (a quoted log line saying ``:fire:`` is quoted as it was)."""
    return _console_class()(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would end the process with status 1 itself; a reader that went away
            # (`culprit … | head`) is the root command's to answer, like any other print's.
            raise BrokenPipeError

    return _Console


#: What rich does not print as given: tabs (expanded) and control codes (some dropped, which
#: keeps a log line's escape sequences off the user's terminal).
_CONTROL: Final = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def print_lines(lines: Sequence[str], *, stderr: bool = False) -> None:
    """Print each line as ``console(stderr).print(line, markup=False)`` would: as given, when
    no line holds a tab or a control code, else through rich."""
    stream = sys.stderr if stderr else sys.stdout
    if any(_CONTROL.search(line) for line in lines):
        screen = console(stderr=stderr)
        for line in lines:
            screen.print(line, markup=False)
        return
    stream.write("".join(f"{line}\n" for line in lines))
    # rich flushes every print: what goes to stderr next stays after these lines.
    stream.flush()


def tolerate_any_encoding(*streams: TextIO) -> None:
    """Let ``streams`` that do not encode UTF-8 (a latin-1 or ASCII locale) write any text,
    with what they cannot encode as backslash escapes: every verdict holds an em dash, and a
    quoted log line anything, which would otherwise end the command with an encoding error
    halfway through its output."""
    for stream in streams:
        try:
            utf8 = codecs.lookup(stream.encoding).name == "utf-8"
        except (AttributeError, LookupError, TypeError):
            utf8 = False
        reconfigure = getattr(stream, "reconfigure", None)
        if not utf8 and reconfigure is not None:
            reconfigure(errors="backslashreplace")


def cell(value: Any) -> str:
    """A value as a table cell: empty for null, integers with thousands separators."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def print_rows(out: Console, title: str, rows: list[dict[str, Any]]) -> None:
    """Print ``rows`` (all with the same keys) as a titled table; nothing when empty."""
    from rich.table import Table

    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for column in rows[0]:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*[cell(value) for value in row.values()])
    out.print(table)


def text_times(table: pa.Table) -> pa.Table:
    """Timestamps as ISO 8601 text with all nine fractional digits (Python datetimes would
    drop the nanoseconds citations rely on)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for index, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            utc = table.column(index).cast(pa.timestamp(field.type.unit, tz="UTC"))
            text = pc.strftime(utc, format="%Y-%m-%dT%H:%M:%SZ")
            table = table.set_column(index, field.name, text)
    return table


def write_table(table: pa.Table, output: str, out: Path | None, max_rows: int) -> None:
    """Write a query result as ``table`` (at most ``max_rows`` shown), ``csv``, ``json`` (one
    object per line) or ``parquet`` (needs ``out``), to ``out`` or stdout."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if output == "parquet":
        assert out is not None
        pq.write_table(table, out)
        return
    table = text_times(table)
    if output == "csv":
        if out is not None:
            pacsv.write_csv(table, out)
        else:
            import io

            buffer = io.BytesIO()
            pacsv.write_csv(table, buffer)
            sys.stdout.write(buffer.getvalue().decode())
        return
    if output == "json":
        text = "\n".join(json.dumps(row, default=str) for row in table.to_pylist())
        if out is not None:
            out.write_text(text + "\n")
        else:
            typer.echo(text)
        return
    from rich.table import Table

    shown = table.slice(0, max_rows)
    grid = Table(show_lines=False)
    for name in table.column_names:
        grid.add_column(name, overflow="fold")
    for row in shown.to_pylist():
        grid.add_row(*[cell(value) for value in row.values()])
    screen = console()
    screen.print(grid)
    if table.num_rows > max_rows:
        screen.print(f"... {table.num_rows - max_rows:,} more rows (--max-rows, or --format csv)")
