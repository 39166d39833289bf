"""The Jinja2 set-up every HTML page of culprit shares: autoescaping, strict undefined names."""

from __future__ import annotations

from pathlib import Path

import jinja2


def html_environment(folder: Path) -> jinja2.Environment:
    """Templates from ``folder``; every value is escaped unless marked safe, and a name the
    template does not get is an error rather than an empty string."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
