"""Walk a bundle safely: directories, archives and single files, without extracting to disk.

A bundle is one or more inputs: a directory, a ``.tar`` (optionally ``.gz``/``.zst``), a
``.zip``, or a single log file (optionally ``.gz``/``.zst``). :meth:`Bundle.members` yields every
file in them as a :class:`Member` with its bundle-relative path. Members that would escape the
bundle (``../``, absolute names, links pointing outside) or that are not regular files are
yielded with ``status="refused"`` and a reason, never opened and never silently skipped;
directories that cannot be listed are yielded as ``unreadable``. Archives nested inside the
bundle are walked too, up to a depth limit, each within an expansion budget of its own; a
damaged archive gives every member it still holds, then says what was lost.
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
from typing import IO, Literal

from analyzer.bundle import salvage
from analyzer.bundle.archives import (
    Seekable,
    TarMemberStream,
    TarSource,
    tar_extract,
    zip_mtime,
    zip_open,
)
from analyzer.bundle.members import (
    COLLECTION_DETAIL,
    BundleLimits,
    FileStamp,
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
    hash_file_or_none,
    input_prefixes,
    is_link,
    iter_tree,
    join,
    os_reason,
    relative,
    tree_size,
    unreadable_directory,
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
            if path.is_dir():
                try:
                    os.scandir(path).close()
                except OSError as exc:
                    raise BundleError(
                        f"directory cannot be read ({os_reason(exc)})", path=str(path)
                    ) from None
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
        """A cheap identity of the inputs from names, sizes, modification times and status
        change times.

        The status change time (ctime) is there because an mtime can be set back: a file
        edited without changing its size, its mtime restored, looked unchanged. No tool can
        set a ctime, and any write, ``touch`` or ``chmod`` moves it; a case whose fingerprint
        differs is still reused when its content hash agrees (:meth:`content_hash`).
        """
        listing: list[object] = []
        for path in self.inputs:
            if path.is_dir():
                for file in sorted(iter_tree(path)):
                    try:
                        st = file.lstat()
                    except OSError:  # gone since it was listed: not part of the bundle
                        continue
                    rel = str(file.relative_to(path))
                    listing.append([rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
            else:
                st = path.stat()
                listing.append([str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns])
        return hashlib.sha256(json.dumps(listing).encode()).hexdigest()

    def content_hash(self) -> str:
        """sha256 over the content of every regular input file, by bundle path.

        Equal to :func:`content_hash_of` over the ``on_disk`` members of an ingest of the same
        bundle, so a case can tell whether a bundle changed without ingesting it again. A file
        that cannot be read counts as absent, as its inventory record has no sha256.
        """
        hashed = [(rel, hash_file_or_none(file)) for rel, file in self._disk_files()]
        return content_hash_of([(rel, sha) for rel, sha in hashed if sha is not None])

    def plain_files(self) -> tuple[int, int]:
        """How many regular files on disk are not archives, and their bytes (what worker
        processes can read)."""
        sizes = [size for _, size in self.plain_file_sizes()]
        return len(sizes), sum(sizes)

    def plain_file_sizes(self) -> list[tuple[str, int]]:
        """Bundle path and size of every regular file on disk that is read as a file (not
        walked as an archive), in bundle order."""
        sizes = []
        for rel, file in self._disk_files():
            if archive_kind(file.name) and self.limits.max_depth >= 1:
                continue
            if is_collection_record(rel):
                continue
            try:
                sizes.append((rel, file.stat().st_size))
            except OSError:
                continue
        return sizes

    def disk_files(self) -> list[tuple[str, Path]]:
        """Bundle path and location of every regular file on disk (archives too)."""
        return list(self._disk_files())

    def _disk_files(self) -> Iterator[tuple[str, Path]]:
        for path, prefix in zip(self.inputs, self._prefixes, strict=True):
            if not path.is_dir():
                yield prefix or display_name(path.name), path
                continue
            for file in sorted(iter_tree(path)):
                try:
                    st = file.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    yield join(prefix, relative(file, path)), file

    # -- directories -------------------------------------------------------------------------

    def _walk_directory(self, root: Path, prefix: str) -> Iterator[Member]:
        real_root = os.path.realpath(root)
        refused: list[OSError] = []
        for dirpath, dirnames, filenames in os.walk(
            root, followlinks=False, onerror=refused.append
        ):
            # os.walk reports a directory it cannot list here and skips it: say so instead.
            yield from self._unlisted(refused, root, prefix)
            dirnames.sort()
            for name in sorted(filenames) + sorted(d for d in dirnames if is_link(dirpath, d)):
                full = Path(dirpath) / name
                rel = join(prefix, relative(full, root))
                try:
                    st = full.lstat()
                except OSError as exc:
                    yield _gone(rel, exc)
                    continue
                if stat.S_ISLNK(st.st_mode):
                    yield directory_link(full, rel, real_root)
                elif not stat.S_ISREG(st.st_mode):
                    yield Member(rel, 0, None, "refused", detail="not a regular file")
                else:
                    yield from self._disk_file(full, rel)
        yield from self._unlisted(refused, root, prefix)

    def _unlisted(self, refused: list[OSError], root: Path, prefix: str) -> Iterator[Member]:
        """The directories os.walk could not list, as ``unreadable`` members."""
        while refused:
            exc = refused.pop(0)
            where = Path(exc.filename) if exc.filename is not None else root
            if where == root:
                rel = prefix or display_name(root.resolve().name)
            else:
                rel = join(prefix, relative(where, root))
            yield unreadable_directory(rel, exc)

    def _disk_file(self, path: Path, rel: str) -> Iterator[Member]:
        try:
            st = path.stat()
        except OSError as exc:
            yield _gone(rel, exc)
            return
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
                sha256=hash_file_or_none(path),
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
                budget=self.budget,
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
            stamp=FileStamp.of(st),
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
        budget: ExpansionBudget,
        on_disk: Path | None = None,
    ) -> Iterator[Member]:
        # A single archive given as the only input has no prefix: its members are the bundle.
        inner = "" if len(self.inputs) == 1 and on_disk in self.inputs else prefix
        detail: str | None = None
        try:
            if kind == "zip":
                yield from self._walk_zip(archive, opener, inner, depth, budget, on_disk)
            else:
                yield from self._walk_tar(archive, opener, inner, depth, budget)
        except ExpansionLimitError as exc:
            if exc.scope == "bundle":
                raise
            detail = exc.message
        except (CorruptStreamError, tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
            if isinstance(exc, CorruptStreamError):
                reason = exc.message
            elif isinstance(exc, OSError) and exc.filename is not None:
                reason = f"cannot be opened ({os_reason(exc)})"
            else:
                reason = str(exc)
            detail = f"archive cannot be read on: {reason}"
        if detail is not None:
            if on_disk is not None and archive.sha256 is None:
                archive.sha256 = hash_file_or_none(on_disk)
            yield Member(archive.path, 0, None, "damaged", detail=detail)

    def _nested(self, rel: str, stored: int, budget: ExpansionBudget) -> ExpansionBudget:
        return budget.nested(rel, stored)

    def _walk_tar(
        self,
        archive: Member,
        opener: Callable[[], Readable],
        prefix: str,
        depth: int,
        budget: ExpansionBudget,
    ) -> Iterator[Member]:
        content = Content(opener(), budget, archive.path)
        source = TarSource(content)
        last: tuple[tarfile.TarInfo, str] | None = None
        try:
            try:
                with tarfile.open(  # type: ignore[call-overload]
                    fileobj=source, mode="r|", tarinfo=source.headers()
                ) as tar:
                    for info in tar:
                        last = (info, join(prefix, display_name(info.name)))
                        yield from self._tar_member(tar, info, source, prefix, depth, budget)
                        # A nested archive whose allowance is spent is refused from here on.
                        budget.check_spent(last[1])
            except (tarfile.TarError, CorruptStreamError):
                if not source.ended:
                    raise
            damage = source.damage(*(last if last is not None else (None, None)))
            if damage is not None:
                raise CorruptStreamError(damage, decoded_bytes=source.position, path=archive.path)
            archive.sha256 = content.finish()
        finally:
            content.close()

    def _tar_member(
        self,
        tar: tarfile.TarFile,
        info: tarfile.TarInfo,
        source: TarSource,
        prefix: str,
        depth: int,
        budget: ExpansionBudget,
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
        opener: Callable[[], Readable] = (
            partial(tar_extract, tar, info)
            if info.sparse is not None
            else partial(TarMemberStream, tar, info, source, rel)
        )
        if archive_kind(clean) and depth < self.limits.max_depth:
            nested = Member(rel, info.size, float(info.mtime), "archive")
            yield nested
            yield from self._walk_archive(
                nested,
                opener
                if info.sparse is not None
                else partial(TarMemberStream, tar, info, source, rel, soft=True),
                rel,
                kind=archive_kind(clean),
                depth=depth + 1,
                budget=self._nested(rel, info.size, budget),
            )
            return
        yield Member(rel, info.size, float(info.mtime), "file", opener=opener, budget=budget)

    def _walk_zip(
        self,
        archive: Member,
        opener: Callable[[], Readable],
        prefix: str,
        depth: int,
        budget: ExpansionBudget,
        on_disk: Path | None,
    ) -> Iterator[Member]:
        spool = Seekable(opener, on_disk)
        with spool as handle:
            archive.sha256 = spool.sha256
            broken: salvage.Scan | None = None
            try:
                zipped = zipfile.ZipFile(handle)
            except zipfile.BadZipFile as exc:
                found = salvage.scan(handle, budget)
                if not found.members and found.reached == 0:
                    raise exc from None  # not a zip at all
                broken = found
            if broken is not None:
                yield from self._salvaged(broken, handle, prefix, depth, budget)
                raise CorruptStreamError(broken.detail(), decoded_bytes=0, path=archive.path)
            with zipped:
                for info in sorted(zipped.infolist(), key=lambda i: i.filename):
                    yield from self._zip_member(
                        info,
                        partial(self._zip_opener, zipped, info, budget),
                        prefix,
                        depth,
                        budget,
                        link=zipped,
                    )

    @staticmethod
    def _zip_opener(
        zipped: zipfile.ZipFile, info: zipfile.ZipInfo, budget: ExpansionBudget, rel: str
    ) -> Callable[[], Readable]:
        return partial(zip_open, zipped, info, budget, rel)

    def _salvaged(
        self,
        found: salvage.Scan,
        handle: IO[bytes],
        prefix: str,
        depth: int,
        budget: ExpansionBudget,
    ) -> Iterator[Member]:
        """The members of a zip found from their local headers."""

        def opener_of(entry: salvage.Salvaged, rel: str) -> Callable[[], Readable]:
            return partial(salvage.SalvagedMember, handle, entry, budget, rel)

        for entry in sorted(found.members, key=lambda e: e.info.filename):
            if not salvage.supported(entry):
                clean = safe_relative(entry.info.filename)
                rel = join(prefix, display_name(clean or entry.info.filename))
                why = (
                    f"compression method {entry.info.compress_type} cannot be read without the "
                    "zip's central directory"
                )
                yield Member(rel, entry.info.file_size, None, "refused", detail=why)
                continue
            yield from self._zip_member(
                entry.info, partial(opener_of, entry), prefix, depth, budget, link=None
            )

    def _zip_member(
        self,
        info: zipfile.ZipInfo,
        opener_of: Callable[[str], Callable[[], Readable]],
        prefix: str,
        depth: int,
        budget: ExpansionBudget,
        *,
        link: zipfile.ZipFile | None,
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
        if stat.S_ISLNK(mode) and link is not None:
            target = link.read(info).decode("utf-8", "replace")
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
        refusal = self._zip_refusal(info, budget)
        if refusal is not None:
            yield Member(rel, info.file_size, mtime, "refused", detail=refusal)
            return
        if archive_kind(clean) and depth < self.limits.max_depth:
            nested = Member(rel, info.file_size, mtime, "archive")
            yield nested
            yield from self._walk_archive(
                nested,
                opener_of(rel),
                rel,
                kind=archive_kind(clean),
                depth=depth + 1,
                budget=self._nested(rel, info.compress_size, budget),
            )
            return
        yield Member(rel, info.file_size, mtime, "file", opener=opener_of(rel), budget=budget)

    def _zip_refusal(self, info: zipfile.ZipInfo, budget: ExpansionBudget) -> str | None:
        """Why a zip member is refused before reading by its declared size, if it is."""
        allowed = max(self.limits.floor_bytes, int(info.compress_size * self.limits.max_ratio))
        if info.file_size > allowed:
            return (
                f"declared size {info.file_size:,} bytes is more than "
                f"{self.limits.max_ratio:g}x its compressed size {info.compress_size:,}; "
                "refusing a likely zip bomb (raise --max-expansion to allow it)"
            )
        left = budget.remaining if budget.parent is not None else None
        if left is not None and info.file_size > left:
            return (
                f"declared size {info.file_size:,} bytes is more than the {left:,} bytes left "
                f"of what the archive {budget.archive} may expand to "
                f"({self.limits.max_ratio:g}x its {budget.stored:,} stored bytes); refusing a "
                "likely nested archive bomb (raise --max-expansion to allow it)"
            )
        return None


def _gone(rel: str, exc: OSError) -> Member:
    """A file listed but removed (or made unreadable) before it could be read."""
    return Member(
        rel, 0, None, "unreadable", detail=f"gone before it could be read ({os_reason(exc)})"
    )
