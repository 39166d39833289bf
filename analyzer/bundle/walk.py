"""Walk a bundle safely: directories, archives and single files, without extracting to disk.

A bundle is one or more inputs: a directory, a ``.tar`` (optionally ``.gz``/``.zst``), a
``.zip``, or a single log file (optionally ``.gz``/``.zst``). :meth:`Bundle.members` yields every
file in them as a :class:`Member` with its bundle-relative path. Members that would escape the
bundle (``../``, absolute names, links pointing outside) or that are not regular files are
yielded with ``status="refused"`` and a reason, never opened and never silently skipped.
Archives nested inside the bundle are walked too, up to a depth limit.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Literal

from analyzer.bundle.archives import Seekable, tar_extract, zip_mtime, zip_open
from analyzer.bundle.members import (
    COLLECTION_DETAIL,
    BundleLimits,
    Member,
    archive_kind,
    content_hash_of,
    display_name,
    is_collection_record,
    link_target_inside,
    safe_relative,
)
from analyzer.bundle.tree import (
    directory_link,
    file_opener,
    hash_file,
    input_prefixes,
    is_link,
    iter_tree,
    join,
    relative,
    tree_size,
)
from analyzer.errors import BundleError, ExpansionLimitError
from analyzer.streams import Content, CorruptStreamError, ExpansionBudget, Readable


class Bundle:
    """The inputs of one ingest run.

    Args:
        inputs: directories, archives or single files.
        limits: safety limits; see :class:`BundleLimits`.

    Raises:
        BundleError: an input does not exist or is not a file or directory.
    """

    def __init__(self, inputs: Sequence[Path], limits: BundleLimits | None = None) -> None:
        if not inputs:
            raise BundleError("no input given")
        self.inputs = [Path(p) for p in inputs]
        self.limits = limits or BundleLimits()
        for path in self.inputs:
            if not path.exists():
                raise BundleError("no such file or directory", path=str(path))
            if not (path.is_dir() or path.is_file()):
                raise BundleError("not a file or directory", path=str(path))
        self.input_bytes = sum(tree_size(p) for p in self.inputs)
        total = self.limits.max_total_bytes
        if total is None:
            total = max(self.limits.floor_bytes, int(self.input_bytes * self.limits.max_ratio))
        self.budget = ExpansionBudget(
            max_ratio=self.limits.max_ratio,
            floor_bytes=self.limits.floor_bytes,
            max_total_bytes=total,
        )
        self._prefixes = input_prefixes(self.inputs)

    def members(self) -> Iterator[Member]:
        """Every file of every input, in a deterministic order."""
        for path, prefix in zip(self.inputs, self._prefixes, strict=True):
            if path.is_dir():
                yield from self._walk_directory(path, prefix)
            else:
                yield from self._disk_file(path, prefix or display_name(path.name))

    def fingerprint(self) -> str:
        """A cheap identity of the inputs from names, sizes and modification times."""
        listing: list[object] = []
        for path in self.inputs:
            if path.is_dir():
                for file in sorted(iter_tree(path)):
                    st = file.lstat()
                    listing.append([str(file.relative_to(path)), st.st_size, st.st_mtime_ns])
            else:
                st = path.stat()
                listing.append([str(path.resolve()), st.st_size, st.st_mtime_ns])
        return hashlib.sha256(json.dumps(listing).encode()).hexdigest()

    def content_hash(self) -> str:
        """sha256 over the content of every regular input file, by bundle path.

        Equal to :func:`content_hash_of` over the ``on_disk`` members of an ingest of the same
        bundle, so a case can tell whether a bundle changed without ingesting it again.
        """
        return content_hash_of([(rel, hash_file(file)) for rel, file in self._disk_files()])

    def plain_files(self) -> tuple[int, int]:
        """How many regular files on disk are not archives, and their bytes (what worker
        processes can read)."""
        sizes = [size for _, size in self.plain_file_sizes()]
        return len(sizes), sum(sizes)

    def plain_file_sizes(self) -> list[tuple[str, int]]:
        """Bundle path and size of every regular file on disk that is read as a file (not
        walked as an archive), in bundle order."""
        return [
            (rel, file.stat().st_size)
            for rel, file in self._disk_files()
            if not (archive_kind(file.name) and self.limits.max_depth >= 1)
            and not is_collection_record(rel)
        ]

    def disk_files(self) -> list[tuple[str, Path]]:
        """Bundle path and location of every regular file on disk (archives too)."""
        return list(self._disk_files())

    def _disk_files(self) -> Iterator[tuple[str, Path]]:
        for path, prefix in zip(self.inputs, self._prefixes, strict=True):
            if not path.is_dir():
                yield prefix or display_name(path.name), path
                continue
            for file in sorted(iter_tree(path)):
                st = file.lstat()
                if stat.S_ISREG(st.st_mode):
                    yield join(prefix, relative(file, path)), file

    # -- directories -------------------------------------------------------------------------

    def _walk_directory(self, root: Path, prefix: str) -> Iterator[Member]:
        real_root = os.path.realpath(root)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames) + sorted(d for d in dirnames if is_link(dirpath, d)):
                full = Path(dirpath) / name
                rel = join(prefix, relative(full, root))
                st = full.lstat()
                if stat.S_ISLNK(st.st_mode):
                    yield directory_link(full, rel, real_root)
                elif not stat.S_ISREG(st.st_mode):
                    yield Member(rel, 0, None, "refused", detail="not a regular file")
                else:
                    yield from self._disk_file(full, rel)

    def _disk_file(self, path: Path, rel: str) -> Iterator[Member]:
        st = path.stat()
        if is_collection_record(rel):
            # Hashed like any file on disk, so the bundle's content hash stays the sum of
            # its members'.
            yield Member(
                rel,
                st.st_size,
                st.st_mtime,
                "collection",
                detail=COLLECTION_DETAIL,
                on_disk=True,
                sha256=hash_file(path),
            )
            return
        if archive_kind(path.name) and self.limits.max_depth >= 1:
            archive = Member(rel, st.st_size, st.st_mtime, "archive", on_disk=True)
            yield archive
            yield from self._walk_archive(
                archive,
                file_opener(path),
                rel,
                kind=archive_kind(path.name),
                depth=1,
                on_disk=path,
            )
            return
        yield Member(
            rel,
            st.st_size,
            st.st_mtime,
            "file",
            opener=file_opener(path),
            on_disk=True,
            disk_path=path,
        )

    # -- archives ----------------------------------------------------------------------------

    def _walk_archive(
        self,
        archive: Member,
        opener: Callable[[], Readable],
        prefix: str,
        *,
        kind: Literal["tar", "zip"] | None,
        depth: int,
        on_disk: Path | None = None,
    ) -> Iterator[Member]:
        # A single archive given as the only input has no prefix: its members are the bundle.
        inner = "" if len(self.inputs) == 1 and on_disk in self.inputs else prefix
        detail: str | None = None
        try:
            if kind == "zip":
                yield from self._walk_zip(archive, opener, inner, depth, on_disk)
            else:
                yield from self._walk_tar(archive, opener, inner, depth)
        except ExpansionLimitError as exc:
            if exc.scope == "bundle":
                raise
            detail = exc.message
        except (CorruptStreamError, tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
            reason = exc.message if isinstance(exc, CorruptStreamError) else str(exc)
            detail = f"archive cannot be read on: {reason}"
        if detail is not None:
            if on_disk is not None and archive.sha256 is None:
                archive.sha256 = hash_file(on_disk)
            yield Member(archive.path, 0, None, "damaged", detail=detail)

    def _walk_tar(
        self, archive: Member, opener: Callable[[], Readable], prefix: str, depth: int
    ) -> Iterator[Member]:
        content = Content(opener(), self.budget, archive.path)
        try:
            with tarfile.open(fileobj=content, mode="r|") as tar:  # type: ignore[call-overload]
                for info in tar:
                    yield from self._tar_member(tar, info, prefix, depth)
            archive.sha256 = content.finish()
        finally:
            content.close()

    def _tar_member(
        self, tar: tarfile.TarFile, info: tarfile.TarInfo, prefix: str, depth: int
    ) -> Iterator[Member]:
        clean = safe_relative(info.name)
        shown = display_name(info.name)
        if info.isdir():
            return
        if clean is None:
            yield Member(
                join(prefix, shown), 0, None, "refused", detail="member path escapes the bundle"
            )
            return
        rel = join(prefix, display_name(clean))
        if info.issym() or info.islnk():
            inside = link_target_inside(clean, info.linkname, relative_to_root=info.islnk())
            if not inside:
                yield Member(rel, 0, None, "refused", detail="link points outside the bundle")
            else:
                target = display_name(info.linkname)
                yield Member(rel, 0, None, "link", detail=f"link to {target} (read there)")
            return
        if not info.isfile():
            yield Member(rel, 0, None, "refused", detail="not a regular file")
            return
        if is_collection_record(rel):
            yield Member(rel, info.size, float(info.mtime), "collection", detail=COLLECTION_DETAIL)
            return
        if archive_kind(clean) and depth < self.limits.max_depth:
            nested = Member(rel, info.size, float(info.mtime), "archive")
            yield nested
            yield from self._walk_archive(
                nested,
                partial(tar_extract, tar, info),
                rel,
                kind=archive_kind(clean),
                depth=depth + 1,
            )
            return
        yield Member(
            rel, info.size, float(info.mtime), "file", opener=partial(tar_extract, tar, info)
        )

    def _walk_zip(
        self,
        archive: Member,
        opener: Callable[[], Readable],
        prefix: str,
        depth: int,
        on_disk: Path | None,
    ) -> Iterator[Member]:
        spool = Seekable(opener, on_disk)
        with spool as handle, zipfile.ZipFile(handle) as zipped:
            archive.sha256 = spool.sha256
            for info in sorted(zipped.infolist(), key=lambda i: i.filename):
                yield from self._zip_member(zipped, info, prefix, depth)

    def _zip_member(
        self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, prefix: str, depth: int
    ) -> Iterator[Member]:
        if info.is_dir():
            return
        clean = safe_relative(info.filename)
        if clean is None:
            shown = join(prefix, display_name(info.filename))
            yield Member(shown, 0, None, "refused", detail="member path escapes the bundle")
            return
        rel = join(prefix, display_name(clean))
        mtime = zip_mtime(info)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            target = archive.read(info).decode("utf-8", "replace")
            if link_target_inside(clean, target, relative_to_root=False):
                yield Member(rel, 0, None, "link", detail=f"link to {display_name(target)}")
            else:
                yield Member(rel, 0, None, "refused", detail="link points outside the bundle")
            return
        if is_collection_record(rel):
            yield Member(rel, info.file_size, mtime, "collection", detail=COLLECTION_DETAIL)
            return
        if info.flag_bits & 0x1:
            yield Member(rel, info.file_size, mtime, "refused", detail="member is encrypted")
            return
        allowed = max(self.limits.floor_bytes, int(info.compress_size * self.limits.max_ratio))
        if info.file_size > allowed:
            yield Member(
                rel,
                info.file_size,
                mtime,
                "refused",
                detail=(
                    f"declared size {info.file_size:,} bytes is more than "
                    f"{self.limits.max_ratio:g}x its compressed size {info.compress_size:,}; "
                    "refusing a likely zip bomb (raise --max-expansion to allow it)"
                ),
            )
            return
        if archive_kind(clean) and depth < self.limits.max_depth:
            nested = Member(rel, info.file_size, mtime, "archive")
            yield nested
            yield from self._walk_archive(
                nested,
                partial(zip_open, archive, info, self.budget, rel),
                rel,
                kind=archive_kind(clean),
                depth=depth + 1,
            )
            return
        yield Member(
            rel,
            info.file_size,
            mtime,
            "file",
            opener=partial(zip_open, archive, info, self.budget, rel),
        )
