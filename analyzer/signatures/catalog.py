"""Load the signature catalogue (and any extra signature folders) and check it.

A catalogue folder holds ``<family>/<name>.toml`` files, one signature each. Loading collects
*every* problem (a TOML syntax error, a field that does not validate, a duplicate code, a
family that is not the folder's) with its file and line before failing, so a signature
author fixes them all in one round. :func:`lint` adds the checks that need more than one
file or a regex engine: knowledge pages exist, the regex compiles in all three engines, each
example matches and each counter-example does not.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from analyzer.errors import SignatureError
from analyzer.signatures.model import FAMILIES, Signature
from analyzer.signatures.parsed import ParsedFiles, cache_dir, digest

#: The packaged catalogue and knowledge pages: beside the ``analyzer`` package in a source
#: checkout (or an editable install), under ``<prefix>/share/culprit`` in a wheel install.
_SOURCE_ROOT: Final = Path(__file__).resolve().parents[2]
_SHARE_ROOT: Final = Path(sys.prefix) / "share" / "culprit"


def _data_dir(name: str) -> Path:
    for root in (_SOURCE_ROOT, _SHARE_ROOT):
        if (root / name).is_dir():
            return root / name
    return _SOURCE_ROOT / name


CATALOGUE_DIR: Final = _data_dir("signatures")
KNOWLEDGE_DIR: Final = _data_dir("knowledge")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a signature file."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Entry:
    """A loaded signature, the file it came from and that file's text (read once), as text
    (newlines read as ``\\n``) and as the bytes the catalogue's digest is taken over."""

    signature: Signature
    path: Path
    text: str
    data: bytes

    def line_of(self, key: str) -> int | None:
        """The line of the file where ``key`` is assigned."""
        return line_of(self.text, key)


@dataclass(frozen=True)
class Catalogue:
    """Every signature in use, in a stable order (family order, then code)."""

    entries: tuple[Entry, ...]
    folders: tuple[Path, ...]

    @property
    def signatures(self) -> tuple[Signature, ...]:
        return tuple(entry.signature for entry in self.entries)

    @functools.cached_property
    def digest(self) -> str:
        """sha256 over the bytes of the signature files, in catalogue order (the same as
        ``cat`` of those files piped to ``sha256sum``); the bytes as they were loaded, so an
        analysis asking three times reads the files once."""
        digest = hashlib.sha256()
        for entry in self.entries:
            digest.update(entry.data)
        return digest.hexdigest()

    def find(self, key: str) -> Entry:
        """The signature whose code or name is ``key``.

        Raises:
            SignatureError: no such signature.
        """
        for entry in self.entries:
            if key in (entry.signature.code, entry.signature.name):
                return entry
        raise SignatureError(f"no signature has code or name {key!r}")

    def __len__(self) -> int:
        return len(self.entries)


def line_of(text: str, key: str) -> int | None:
    """The line where ``key`` is assigned at the start of a line (first occurrence)."""
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=", re.M)
    found = pattern.search(text)
    return None if found is None else text.count("\n", 0, found.start()) + 1


def front_matter(path: Path) -> dict[str, object]:
    """The TOML front matter of a knowledge page (between ``+++`` lines at its top)."""
    return front_matter_of(path.read_text(encoding="utf-8"))


def front_matter_of(text: str) -> dict[str, object]:
    """The TOML front matter of a knowledge page's text (:func:`front_matter`)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "+++":
        raise ValueError("the page does not start with a +++ front matter block")
    try:
        end = lines.index("+++", 1)
    except ValueError:
        raise ValueError("the front matter block is not closed with +++") from None
    return tomllib.loads("\n".join(lines[1:end]))


def _toml_line(error: tomllib.TOMLDecodeError, text: str) -> int | None:
    found = re.search(r"at line (\d+)", str(error))
    if found:
        return int(found.group(1))
    return text.count("\n") + 1 if "end of document" in str(error) else None


def _validation_problems(path: str, text: str, error: ValidationError) -> list[Problem]:
    problems = []
    for item in error.errors():
        location = [str(part) for part in item["loc"]]
        key = next((part for part in reversed(location) if not part.isdigit()), None)
        # Errors of the whole model are about the regex and its groups.
        line = line_of(text, key or "regex")
        field = ".".join(location) or "regex"
        problems.append(Problem(path, line, f"{field}: {item['msg']}"))
    return problems


def parse_file(
    path: Path, *, display: str | None = None, parsed: ParsedFiles | None = None
) -> tuple[Entry | None, list[Problem]]:
    """One signature file: its entry, or the problems that keep it from loading (``parsed``:
    the parsed files to take its table from, by default those of the cache folder)."""
    shown = display or str(path)
    try:
        data = path.read_bytes()
        text = _text(data, path)
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(shown, None, f"cannot read: {exc}")]
    try:
        tables = _parsed_files(cache_dir()) if parsed is None else parsed
        return Entry(_signature(text, tables), path, text, data), []
    except tomllib.TOMLDecodeError as exc:
        return None, [Problem(shown, _toml_line(exc, text), f"not valid TOML: {exc}")]
    except ValidationError as exc:
        return None, _validation_problems(shown, text, exc)


def _text(data: bytes, path: Path) -> str:
    """``data`` (the bytes of ``path``) as ``path.read_text(encoding="utf-8")`` reads them:
    universal newlines."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # read_text's own error: its decoder, reading in chunks, says where differently.
        return path.read_text(encoding="utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


#: Validated signatures by the digest of their file's text. A process that analyzes many
#: inputs (accuracy, replay, the dashboard, the tests) loads the catalogue every time;
#: Signature is frozen, so sharing one instance is safe.
_VALIDATED: dict[str, Signature] = {}


@functools.cache
def _parsed_files(folder: Path | None) -> ParsedFiles:
    return ParsedFiles(folder)


def _signature(text: str, parsed: ParsedFiles) -> Signature:
    key = digest(text)
    table = parsed.table(text, key)
    found = _VALIDATED.get(key)
    if found is None:
        found = _VALIDATED[key] = Signature.model_validate(table)
    return found


def _listing(folder: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The ``*.toml`` files of ``folder`` (strays) and of its sub-folders (family, name),
    sorted by name, as ``folder.glob`` finds them (hidden names and links included), listed
    with ``os.scandir``: pathlib's glob is most of listing the catalogue."""
    strays: list[str] = []
    families: list[str] = []
    try:
        with os.scandir(folder) as found:
            for item in found:
                if _toml(item):
                    strays.append(item.name)
                elif item.is_dir():
                    families.append(item.name)
    except OSError:  # unreadable: glob finds nothing in it either
        return [], []
    files: list[tuple[str, str]] = []
    for family in families:
        try:
            with os.scandir(folder / family) as found:
                files += [(family, item.name) for item in found if _toml(item)]
        except OSError:
            continue
    # The order of paths: by their parts, compared as the platform compares names.
    return sorted(strays, key=os.path.normcase), sorted(
        files, key=lambda file: (os.path.normcase(file[0]), os.path.normcase(file[1]))
    )


def _toml(item: os.DirEntry[str]) -> bool:
    return os.path.normcase(item.name).endswith(".toml") and item.is_file()


def collect(folders: Sequence[Path]) -> tuple[list[Entry], list[Problem]]:
    """Every signature of ``folders`` and every problem found while loading them."""
    entries: list[Entry] = []
    problems: list[Problem] = []
    parsed = _parsed_files(cache_dir())
    for folder in folders:
        if not folder.is_dir():
            problems.append(Problem(str(folder), None, "not a signature folder"))
            continue
        strays, files = _listing(folder)
        problems += [
            Problem(f"{folder.name}/{name}", None, "signature files live in <family>/ folders")
            for name in strays
        ]
        for family, name in files:
            path = folder / family / name
            shown = f"{folder.name}/{family}/{name}"
            entry, found = parse_file(path, display=shown, parsed=parsed)
            problems += found
            if entry is None:
                continue
            signature = entry.signature
            if path.parent.name != signature.family:
                line = entry.line_of("family")
                message = f"family {signature.family!r} is not the folder {path.parent.name!r}"
                problems.append(Problem(shown, line, message))
            prefix = FAMILIES[signature.family]
            if signature.code.split("-")[0] != prefix:
                message = f"code {signature.code!r} does not start with {prefix}- (its family)"
                problems.append(Problem(shown, entry.line_of("code"), message))
            if path.stem != signature.name:
                message = f"file is named {path.name!r}; name it {signature.name}.toml"
                problems.append(Problem(shown, entry.line_of("name"), message))
            entries.append(entry)
    problems += _duplicates(entries)
    parsed.save()
    return entries, problems


def _duplicates(entries: Iterable[Entry]) -> list[Problem]:
    problems = []
    for attribute in ("code", "name"):
        seen: dict[str, Entry] = {}
        for entry in entries:
            value = getattr(entry.signature, attribute)
            if value in seen:
                first = seen[value].path
                message = f"{attribute} {value!r} is already used by {first}"
                problems.append(Problem(str(entry.path), entry.line_of(attribute), message))
            else:
                seen[value] = entry
    return problems


def _order(entry: Entry) -> tuple[int, str]:
    families = list(FAMILIES)
    return families.index(entry.signature.family), entry.signature.code


def load(extra: Sequence[Path] = (), *, builtin: bool = True) -> Catalogue:
    """The packaged catalogue (unless ``builtin`` is false) plus the ``extra`` folders.

    Raises:
        SignatureError: any file does not load; the message lists every problem.
    """
    folders = ([CATALOGUE_DIR] if builtin else []) + [Path(p) for p in extra]
    entries, problems = collect(folders)
    if problems:
        raise SignatureError(summarize(problems), path=problems[0].path, line=problems[0].line)
    return Catalogue(tuple(sorted(entries, key=_order)), tuple(folders))


def summarize(problems: Sequence[Problem]) -> str:
    """One message for many problems: the count and the first few, one per line."""
    shown = "\n".join(f"  {problem}" for problem in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    return f"{len(problems)} problem(s) in the signature catalogue:\n{shown}{more}"
