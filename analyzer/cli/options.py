"""Options and arguments that more than one command takes, or whose default is the library's.

Each is a typer ``Annotated`` alias, so a command declares ``skew: Skew = defaults.SKEW_S``
and every command spells the option the same way. typer does not let an ``Annotated`` alias
carry its default, so the default is written where the alias is used, and always as the
library's constant from :mod:`analyzer.defaults`, never as a literal
(``tests/cli/test_options.py`` checks each against the library).

Where two commands word the help of the same option differently, there are two aliases:
``--help`` is part of the interface and stays as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# -- shared by several commands ---------------------------------------------------------------

CaseDir = Annotated[Path, typer.Argument(help="A case directory.")]
ExtraSignatures = Annotated[
    list[Path] | None,
    typer.Option(
        "--signatures", help="An extra signature folder (<family>/<name>.toml); repeatable."
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
ReadJobs = Annotated[
    int | None,
    typer.Option(help="Worker processes reading files (default: one per core)."),
]
AnalysisJobs = Annotated[
    int | None, typer.Option(help="Parallel analyses (default: one per core).")
]
NoRedact = Annotated[
    bool, typer.Option("--no-redact", help="Quote messages without redacting secrets.")
]

# -- reading a bundle (defaults: BundleLimits, ReadOptions) ------------------------------------

MaxExpansion = Annotated[
    float, typer.Option(help="Refuse a compressed stream expanding more than this ratio.")
]
MaxTotalBytes = Annotated[
    int | None,
    typer.Option(help="Stop when the bundle decodes to more bytes than this in total."),
]
MaxLineBytes = Annotated[int, typer.Option(help="Keep at most this many bytes of one line.")]

# -- writing a case ---------------------------------------------------------------------------

Scratch = Annotated[
    Path | None,
    typer.Option(
        help="Directory where remote inputs (gs://, s3://) are mirrored before they are read "
        "(default: the system's temporary directory).",
    ),
]
SpaceCheck = Annotated[
    bool,
    typer.Option(
        "--space-check/--no-space-check",
        help="Refuse an ingest before it writes when it needs more space than is free (the "
        "estimate is the largest measured, so it may refuse one that would just fit).",
    ),
]
Wait = Annotated[
    float,
    typer.Option(
        "--wait",
        help="Seconds to wait for another culprit process writing the same case (0: refuse "
        "at once).",
        metavar="SECONDS",
    ),
]

# -- matching and where the work runs ---------------------------------------------------------

#: ``culprit match`` names its default in the help; ``culprit analyze`` does not.
MatchBackend = Annotated[
    str, typer.Option(help="Matching engine: polars (default), duckdb or python (slow).")
]
Backend = Annotated[str, typer.Option(help="Matching engine: polars, duckdb or python.")]
Engine = Annotated[
    str,
    typer.Option(
        help="Where ingest and matching run: local (default), or ray (shards as Ray tasks; "
        "pip install 'culprit[ray]'). Same findings either way."
    ),
]

# -- diagnosis --------------------------------------------------------------------------------

Skew = Annotated[float, typer.Option(help="Clock-skew tolerance between hosts, in seconds.")]
Silence = Annotated[
    float, typer.Option(help="A global silence this long (seconds) separates attempts.")
]

# -- what culprit writes ----------------------------------------------------------------------

#: ``culprit analyze`` renders report.md; ``culprit report`` says it is the Markdown's layout.
Template = Annotated[
    str, typer.Option(help="Report layout: default, or modelarts-zh (ModelArts 诊断 layout).")
]
MarkdownTemplate = Annotated[str, typer.Option(help="Markdown layout: default, or modelarts-zh.")]
ReportFormat = Annotated[
    str,
    typer.Option("--format", help="md (report.md), html (report.html) or json (findings)."),
]
TopHosts = Annotated[int, typer.Option(help="How many hosts to list.")]
HandoffContext = Annotated[
    int, typer.Option(help="Rows of context per host on each side of the first error.")
]
TrustedKeys = Annotated[
    list[Path] | None,
    typer.Option(
        "--trusted-key",
        help="Refuse a handoff not signed by this Ed25519 public key (PEM, ssh-ed25519 line "
        "or raw); repeatable.",
    ),
]
HandoffSha256 = Annotated[
    str | None,
    typer.Option(
        "--sha256", help="Refuse a handoff archive whose sha256 is not this (given out of band)."
    ),
]

# -- collecting a bundle (defaults: RunSettings) ------------------------------------------------

PrintCommands = Annotated[
    bool,
    typer.Option(
        "--print-commands",
        help="Print the commands as a bash script (with why and the permission each needs) "
        "instead of running them; only the discovery listing runs here.",
    ),
]
CollectOut = Annotated[
    Path | None,
    typer.Option("-o", "--out", help="The bundle folder to collect into (re-running resumes it)."),
]
Concurrency = Annotated[int, typer.Option(help="Commands running at the same time.")]
CommandTimeout = Annotated[
    float, typer.Option("--timeout", help="Seconds one command may run before it is stopped.")
]
SourceCap = Annotated[
    int, typer.Option(help="Bytes one command may write (its output is cut there, and says so).")
]
TotalCap = Annotated[
    int, typer.Option(help="Bytes all commands may write; the rest are recorded as skipped.")
]
Attempts = Annotated[
    int, typer.Option(help="Attempts of a command refused for quota (429, RESOURCE_EXHAUSTED).")
]
Backoff = Annotated[
    float, typer.Option(help="Seconds before the first retry after a quota error (doubled).")
]
CollectNoRedact = Annotated[
    bool,
    typer.Option(
        "--no-redact", help="Write what the commands print without redacting tokens and keys."
    ),
]
