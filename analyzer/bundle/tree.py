"""Files on disk: walking a directory without following links, hashing, sizes, the
bundle-relative names of several inputs, and whether a file changed while it was read."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path

from analyzer.bundle.members import FileStamp, Member, display_name
from analyzer.streams import Readable


def directory_link(full: Path, rel: str, real_root: str) -> Member:
    target = os.path.realpath(full)
    if os.path.commonpath([target, real_root]) != real_root:
        return Member(rel, 0, None, "refused", detail="symlink points outside the bundle")
    shown = display_name(os.path.relpath(target, real_root))
    return Member(rel, 0, None, "link", detail=f"link to {shown} (read there)")


def relative(file: Path, root: Path) -> str:
    return display_name(str(file.relative_to(root)).replace(os.sep, "/"))


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(partial(handle.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_file_or_none(path: Path) -> str | None:
    """sha256 of a file, or ``None`` when it cannot be read (as its inventory record has)."""
    try:
        return hash_file(path)
    except OSError:
        return None


def file_opener(path: Path) -> Callable[[], Readable]:
    return lambda: open(path, "rb")


def os_reason(exc: OSError) -> str:
    """Why a file or directory cannot be read, without the machine's absolute path."""
    return (exc.strerror or type(exc).__name__).lower()


def unreadable_directory(rel: str, exc: OSError) -> Member:
    return Member(
        rel,
        0,
        None,
        "unreadable",
        detail=f"directory cannot be read ({os_reason(exc)}): the files in it are not in the case",
    )


def changed_since(path: Path, listed: FileStamp, stored_read: int) -> str | None:
    """How the file at ``path`` changed since it was listed as ``listed``, ``stored_read``
    bytes having been read from it to its end; ``None`` when it did not.

    A log rotated with copytruncate shrinks under the reader, one still written to grows, a
    rotation by rename puts another file at the path: the rows are then not the file's
    content, and saying nothing made 6 M lines look like a complete 1.89 M.
    """
    try:
        now = FileStamp.of(path.stat())
    except OSError as exc:
        return f"the file was removed while it was read ({os_reason(exc)})"
    if (now.inode, now.device) != (listed.inode, listed.device):
        return (
            "the file was replaced while it was read (another file is at its path now, as after "
            "a log rotation): the rows are from the file that was there when it was opened"
        )
    if stored_read < listed.size:
        return (
            f"the file shrank while it was read: {listed.size:,} bytes when listed, "
            f"{stored_read:,} to its end (cut in place, as a log rotated with copytruncate is); "
            f"the last {listed.size - stored_read:,} bytes are lost"
        )
    if now.size != listed.size or stored_read != listed.size:
        return (
            f"the file changed size while it was read: {listed.size:,} bytes when listed, "
            f"{stored_read:,} read, {now.size:,} now (still being written?)"
        )
    if now.mtime_ns != listed.mtime_ns:
        return (
            "the file was modified while it was read (same size, new modification time): the "
            "rows may mix its old and new content"
        )
    return None


def join(prefix: str, rel: str) -> str:
    return f"{prefix}/{rel}" if prefix else rel


def is_link(dirpath: str, name: str) -> bool:
    return (Path(dirpath) / name).is_symlink()


def iter_tree(root: Path) -> Iterator[Path]:
    for dirpath, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            yield Path(dirpath) / name


def tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for file in iter_tree(path):
        try:
            st = file.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
    return total


def input_prefixes(inputs: Sequence[Path]) -> list[str]:
    """Bundle-relative prefix of each input: none for one input, the input's name for several."""
    if len(inputs) == 1:
        return [""]
    used: set[str] = set()
    prefixes = []
    for path in inputs:
        base = display_name(path.resolve().name or "input")
        name, number = base, 1
        while name in used:
            number += 1
            name = f"{base}~{number}"
        used.add(name)
        prefixes.append(name)
    return prefixes
