"""Parsed signature files kept on disk between processes.

Loading the catalogue parses some 500 small TOML files, and ``tomllib`` does that in pure
Python: most of the start-up of ``culprit analyze FILE`` on a ten-line file. The parsed
tables are therefore kept in one JSON file, keyed by the SHA-256 of each file's text, so an
edited file is always parsed again, whatever its size or modification time. What comes from
the cache is validated by the same pydantic model as a freshly parsed file.

Where: ``$CULPRIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/culprit``, else ``~/.cache/culprit``;
``CULPRIT_CACHE_DIR=off`` turns it off. A cache that cannot be read or written (a read-only
home, a damaged file) is ignored: it only ever saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Final

#: The environment variable naming the cache folder (or ``off``).
CACHE_ENV: Final = "CULPRIT_CACHE_DIR"
#: The cache file; its name changes when what it holds changes.
CACHE_FILE: Final = "signature-files-v1.json"

Table = dict[str, Any]


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in {"", "off", "0", "no"} else Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "culprit"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ParsedFiles:
    """The parsed tables of signature files by the digest of their text: what the cache file
    held, plus what was parsed since; :meth:`save` writes back the tables last asked for."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._stored: dict[str, Table] = self._read()
        self._asked: dict[str, Table] = {}

    def _read(self) -> dict[str, Table]:
        if self.folder is None:
            return {}
        try:
            data = json.loads((self.folder / CACHE_FILE).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {key: value for key, value in data.items() if isinstance(value, dict)}

    def table(self, text: str, key: str | None = None) -> Table:
        """The TOML table of ``text`` (whose :func:`digest` is ``key``, when the caller has it
        already), from the cache or parsed now.

        Raises:
            tomllib.TOMLDecodeError: ``text`` is not TOML.
        """
        key = key or digest(text)
        found = self._stored.get(key)
        if found is None:
            found = tomllib.loads(text)
        self._asked[key] = found
        return found

    def save(self) -> None:
        """Keep the tables asked for since the last save, when they differ from the file's."""
        asked, self._asked = self._asked, {}
        if self.folder is None or not asked or asked.keys() == self._stored.keys():
            return
        try:
            encoded = json.dumps(asked, sort_keys=True)
        except (TypeError, ValueError):  # a TOML date: JSON cannot hold it; parse each time
            return
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".signatures-", dir=self.folder)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(encoded)
                Path(temporary).replace(self.folder / CACHE_FILE)
            finally:
                with contextlib.suppress(OSError):
                    Path(temporary).unlink()
        self._stored = asked
