"""culprit's exit codes, in one place so scripts and CI jobs can rely on them.

Only the root command (:mod:`analyzer.cli.application`) turns exceptions into codes; a
command itself only ever exits with :data:`EXIT_FAILED`, when a check it ran found problems.
"""

from __future__ import annotations

from typing import Final

#: A check found differences or problems (replay, accuracy floor, signatures lint/test): not
#: an error of culprit or of its input.
EXIT_FAILED: Final = 1
#: The library refused on purpose (:class:`analyzer.errors.AnalyzerError`): a bad input or
#: option, said in one line on stderr.
EXIT_ERROR: Final = 2
#: Anything else: a bug in culprit (``--debug`` shows the traceback).
EXIT_BUG: Final = 3
#: Ctrl+C, as shells report a SIGINT.
EXIT_INTERRUPTED: Final = 130
#: The reader of stdout went away (``culprit … | head``), as shells report a SIGPIPE: what was
#: printed before is all the reader wanted, and nothing is said.
EXIT_BROKEN_PIPE: Final = 141
