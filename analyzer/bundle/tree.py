"""Files on disk: walking a directory without following links, hashing, sizes, and the
bundle-relative names of several inputs."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path

from analyzer.bundle.members import Member, display_name
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


def file_opener(path: Path) -> Callable[[], Readable]:
    return lambda: open(path, "rb")


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
