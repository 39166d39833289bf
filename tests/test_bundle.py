"""Tests of analyzer.bundle: walking directories, archives and files safely."""

from __future__ import annotations

import gc
import gzip
import hashlib
import io
import os
import random
import stat
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from analyzer import api
from analyzer.bundle import (
    Bundle,
    BundleLimits,
    Member,
    archive_kind,
    content_hash_of,
    content_of,
    display_name,
    safe_relative,
)
from analyzer.errors import BundleError, ExpansionLimitError
from analyzer.streams import CorruptStreamError, Readable
from tests.helpers import read_table

FILES: dict[str, bytes] = {
    "a.log": b"2024-05-01T00:00:00Z alpha\n",
    "sub/b.log": b"2024-05-01T00:00:01Z beta\n" * 3,
    "sub/deeper/c.log": b"2024-05-01T00:00:02Z gamma\n",
    "z.txt": b"",
}
MTIME = 1_700_000_000


# -- helpers ---------------------------------------------------------------------------------


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def tar_info(name: str, data: bytes = b"", **attrs: object) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = MTIME
    for key, value in attrs.items():
        setattr(info, key, value)
    return info, data


def tar_bytes(entries: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(
        fileobj=buf,
        mode=mode,  # type: ignore[call-overload]
        format=tarfile.GNU_FORMAT,
        encoding="utf-8",
        errors="surrogateescape",
    ) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return buf.getvalue()


def files_tar(files: dict[str, bytes], mode: str = "w") -> bytes:
    return tar_bytes([tar_info(name, data) for name, data in files.items()], mode)


def zstd_file(path: Path, data: bytes) -> Path:
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write(data)
    return path


def zip_file(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def build_archive(path: Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` as the archive kind ``path``'s suffix names."""
    name = path.name
    if name.endswith(".zip"):
        return zip_file(path, files)
    if name.endswith((".tar.zst", ".tzst", ".tar.zstd")):
        return zstd_file(path, files_tar(files))
    if name.endswith((".tar.gz", ".tgz")):
        path.write_bytes(files_tar(files, "w:gz"))
        return path
    path.write_bytes(files_tar(files))
    return path


def read_member(member: Member) -> bytes:
    """The member's stored bytes, read while the walk is on it (and the stream closed).

    Read to the end: a member cut short hands out what it has first and raises on the read
    after, as every stream here does."""
    stream = member.open()
    try:
        out = bytearray()
        while chunk := stream.read(1 << 20):
            out += chunk
        return bytes(out)
    finally:
        stream.close()  # type: ignore[attr-defined]


def walk(bundle: Bundle) -> list[tuple[str, str, bytes | str | None]]:
    """(path, status, content for files / detail otherwise), reading inside the loop."""
    out: list[tuple[str, str, bytes | str | None]] = []
    for member in bundle.members():
        if member.status == "file":
            out.append((member.path, member.status, read_member(member)))
        else:
            out.append((member.path, member.status, member.detail))
    return out


def read_chunks(stream: Readable, block: int = 4096) -> tuple[bytes, CorruptStreamError | None]:
    """Read to the end in small reads: the bytes, and the CorruptStreamError that ended it."""
    out = bytearray()
    while True:
        try:
            chunk = stream.read(block)
        except CorruptStreamError as exc:
            return bytes(out), exc
        if not chunk:
            return bytes(out), None
        out += chunk


def decode_all(bundle: Bundle) -> None:
    """Decode every file member through the bundle's budget, as an ingest does."""
    for member in bundle.members():
        if member.status == "file":
            content = content_of(member, bundle.budget)
            try:
                content.read()
            finally:
                content.close()


def by_path(bundle: Bundle) -> dict[str, Member]:
    members: dict[str, Member] = {}
    for member in bundle.members():
        assert member.path not in members or member.status == "damaged"
        members.setdefault(member.path, member)
    return members


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def resource_warnings(action: Callable[[], object]) -> list[str]:
    """ResourceWarnings (unclosed files) raised while running ``action``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


# -- directories -----------------------------------------------------------------------------


def test_directory_members_in_deterministic_order(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    # Created in reverse order: the walk must not depend on creation or directory order.
    write_tree(root, dict(reversed(list(FILES.items()))))
    (root / "B.log").write_bytes(b"upper\n")
    bundle = Bundle([root])
    members = list(bundle.members())
    # Files of a directory (sorted by name) come before its subdirectories (sorted by name).
    assert [m.path for m in members] == [
        "B.log",
        "a.log",
        "z.txt",
        "sub/b.log",
        "sub/deeper/c.log",
    ]
    assert [m.path for m in Bundle([root]).members()] == [m.path for m in members]
    for member in members:
        assert member.status == "file"
        assert member.on_disk is True
        assert member.container is None
        assert member.detail is None
        disk = root / member.path
        assert member.size == disk.stat().st_size
        assert member.mtime == disk.stat().st_mtime
        assert read_member(member) == disk.read_bytes()


def test_directory_paths_are_relative_posix(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", FILES)
    paths = {m.path for m in Bundle([root]).members()}
    assert paths == set(FILES)
    for path in paths:
        assert not path.startswith(("/", "./"))
        assert "\\" not in path
        assert str(tmp_path) not in path


def test_empty_directory_has_no_members(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert list(Bundle([tmp_path / "empty"]).members()) == []


def test_directory_symlink_outside_is_refused_and_inside_is_a_link(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", {"a.log": b"A\n", "sub/b.log": b"B\n"})
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"secret\n")
    (tmp_path / "outdir").mkdir()
    (root / "abs_out").symlink_to(outside)
    (root / "sub" / "rel_out").symlink_to("../../secret.txt")
    (root / "dir_out").symlink_to(tmp_path / "outdir")
    (root / "in").symlink_to("a.log")
    (root / "sub" / "up_in").symlink_to("../a.log")
    members = by_path(Bundle([root]))

    for name in ("abs_out", "sub/rel_out", "dir_out"):
        assert members[name].status == "refused", name
        assert members[name].detail == "symlink points outside the bundle"
        with pytest.raises(BundleError):
            members[name].open()
    assert members["in"].status == "link"
    assert members["in"].detail == "link to a.log (read there)"
    assert members["sub/up_in"].status == "link"
    assert members["sub/up_in"].detail == "link to a.log (read there)"
    # The regular files are still there and readable; no link is followed to a second copy.
    assert read_member(members["a.log"]) == b"A\n"
    assert read_member(members["sub/b.log"]) == b"B\n"
    assert sorted(members) == sorted(
        ["a.log", "abs_out", "dir_out", "in", "sub/b.log", "sub/rel_out", "sub/up_in"]
    )
    assert all(not m.on_disk for m in members.values() if m.status != "file")


def test_directory_fifo_is_refused(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", {"a.log": b"A\n"})
    os.mkfifo(root / "pipe")
    members = by_path(Bundle([root]))
    assert members["pipe"].status == "refused"
    assert members["pipe"].detail == "not a regular file"
    assert members["pipe"].opener is None
    assert read_member(members["a.log"]) == b"A\n"


def test_directory_with_awkward_file_names(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "new\nline.log").write_bytes(b"nl\n")
    (root / os.fsdecode(b"bad\xff.log")).write_bytes(b"bad\n")
    members = by_path(Bundle([root]))
    assert sorted(members) == ["bad\\xff.log", "new\\x0aline.log"]
    for path, member in members.items():
        assert "\n" not in path
        path.encode("utf-8")  # no lone surrogates
        assert member.status == "file"
    assert read_member(members["new\\x0aline.log"]) == b"nl\n"
    assert read_member(members["bad\\xff.log"]) == b"bad\n"


# -- single files and several inputs ---------------------------------------------------------


def test_single_file_input(tmp_path: Path) -> None:
    log = tmp_path / "node-1.log"
    log.write_bytes(b"line\n")
    (member,) = Bundle([log]).members()
    assert (member.path, member.status, member.on_disk, member.size) == (
        "node-1.log",
        "file",
        True,
        5,
    )
    assert read_member(member) == b"line\n"


def test_single_compressed_file_is_a_file_not_an_archive(tmp_path: Path) -> None:
    log = tmp_path / "node-1.log.gz"
    stored = gzip.compress(b"line\n")
    log.write_bytes(stored)
    bundle = Bundle([log])
    (member,) = bundle.members()
    assert (member.path, member.status) == ("node-1.log.gz", "file")
    assert read_member(member) == stored
    content = content_of(member, bundle.budget)
    try:
        assert content.compression == "gzip"
        assert content.read() == b"line\n"
    finally:
        content.close()


def test_several_inputs_are_prefixed_and_duplicates_suffixed(tmp_path: Path) -> None:
    first = write_tree(tmp_path / "one" / "logs", {"a.log": b"1\n"})
    second = write_tree(tmp_path / "two" / "logs", {"a.log": b"2\n"})
    third = write_tree(tmp_path / "three" / "logs", {"a.log": b"3\n"})
    single = tmp_path / "one" / "x.log"
    single.write_bytes(b"x\n")
    tar = build_archive(tmp_path / "two" / "b.tar.gz", {"t.log": b"t\n"})
    got = walk(Bundle([first, second, single, third, tar]))
    assert got == [
        ("logs/a.log", "file", b"1\n"),
        ("logs~2/a.log", "file", b"2\n"),
        ("x.log", "file", b"x\n"),
        ("logs~3/a.log", "file", b"3\n"),
        ("b.tar.gz", "archive", None),
        ("b.tar.gz/t.log", "file", b"t\n"),
    ]


def test_two_zip_inputs_with_the_same_name_are_both_walked(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = zip_file(tmp_path / "a" / "x.zip", {"m.log": b"first\n"})
    two = zip_file(tmp_path / "b" / "x.zip", {"m.log": b"second\n"})
    got = walk(Bundle([one, two]))
    assert got == [
        ("x.zip", "archive", None),
        ("x.zip/m.log", "file", b"first\n"),
        ("x.zip~2", "archive", None),
        ("x.zip~2/m.log", "file", b"second\n"),
    ]


def test_input_prefixes_never_collide(tmp_path: Path) -> None:
    # "d", "d" and "d~2": the second "d" must not take the name the third input already has.
    inputs = []
    for parent, name in (("p", "d"), ("q", "d"), ("r", "d~2")):
        inputs.append(write_tree(tmp_path / parent / name, {"m.log": parent.encode()}))
    paths = [m.path for m in Bundle(inputs).members()]
    assert len(paths) == 3
    assert len(set(paths)) == 3, paths


def test_missing_input_raises_bundle_error_with_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "bundle.tar.gz"
    with pytest.raises(BundleError) as info:
        Bundle([missing])
    assert str(missing) in str(info.value)
    assert info.value.path == str(missing)
    assert "no such file or directory" in str(info.value)


def test_missing_input_among_several(tmp_path: Path) -> None:
    ok = write_tree(tmp_path / "ok", {"a.log": b"a\n"})
    with pytest.raises(BundleError) as info:
        Bundle([ok, tmp_path / "gone"])
    assert info.value.path == str(tmp_path / "gone")


def test_no_input_raises() -> None:
    with pytest.raises(BundleError, match="no input given"):
        Bundle([])


def test_fifo_input_raises(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(BundleError, match="not a file or directory") as info:
        Bundle([tmp_path / "pipe"])
    assert info.value.path == str(tmp_path / "pipe")


# -- archives --------------------------------------------------------------------------------

ARCHIVE_NAMES = ["b.tar", "b.tar.gz", "b.tgz", "b.tar.zst", "b.tzst", "b.zip"]


@pytest.mark.parametrize("name", ARCHIVE_NAMES)
def test_archive_lists_same_members_as_directory(tmp_path: Path, name: str) -> None:
    directory = write_tree(tmp_path / "dir", FILES)
    archive = build_archive(tmp_path / name, FILES)
    dir_members = {m.path: read_member(m) for m in Bundle([directory]).members()}

    bundle = Bundle([archive])
    seen: list[Member] = []
    contents: dict[str, bytes] = {}
    for member in bundle.members():
        seen.append(member)
        if member.status == "file":
            contents[member.path] = read_member(member)  # tar streams: read it now

    head, *inner = seen
    assert (head.path, head.status, head.on_disk) == (name, "archive", True)
    assert head.size == archive.stat().st_size
    assert head.sha256 == sha256_file(archive)
    assert [m.status for m in inner] == ["file"] * len(FILES)
    assert contents == dir_members == FILES
    for member in inner:
        assert member.on_disk is False
        assert member.size == len(FILES[member.path])
    if name.endswith(".zip"):
        assert [m.path for m in inner] == sorted(FILES)
    else:
        assert [m.path for m in inner] == list(FILES)  # archive order
        assert all(m.mtime == MTIME for m in inner)


@pytest.mark.parametrize("name", ARCHIVE_NAMES)
def test_archive_inside_directory_is_prefixed(tmp_path: Path, name: str) -> None:
    root = write_tree(tmp_path / "bundle", {"top.log": b"top\n"})
    (root / "nested").mkdir()
    archive = build_archive(root / "nested" / name, {"a.log": b"A\n", "d/b.log": b"B\n"})
    assert walk(Bundle([root])) == [
        ("top.log", "file", b"top\n"),
        (f"nested/{name}", "archive", None),
        (f"nested/{name}/a.log", "file", b"A\n"),
        (f"nested/{name}/d/b.log", "file", b"B\n"),
    ]
    members = list(Bundle([root]).members())
    assert [m.on_disk for m in members] == [True, True, False, False]
    assert members[1].sha256 == sha256_file(archive)


def test_tar_nested_in_tar(tmp_path: Path) -> None:
    inner = files_tar({"a.log": b"A\n", "d/b.log": b"B\n"}, "w:gz")
    outer = files_tar({"x/inner.tar.gz": inner, "y.log": b"Y\n"})
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "outer.tar").write_bytes(outer)
    got = walk(Bundle([root]))
    assert got == [
        ("outer.tar", "archive", None),
        ("outer.tar/x/inner.tar.gz", "archive", None),
        ("outer.tar/x/inner.tar.gz/a.log", "file", b"A\n"),
        ("outer.tar/x/inner.tar.gz/d/b.log", "file", b"B\n"),
        ("outer.tar/y.log", "file", b"Y\n"),
    ]
    # The nested archive's own hash is known once its walk is over.
    nested = [m for m in Bundle([root]).members() if m.status == "archive"]
    assert nested[1].sha256 == hashlib.sha256(inner).hexdigest()
    assert nested[1].on_disk is False


def test_tar_nested_in_tar_as_single_input(tmp_path: Path) -> None:
    inner = files_tar({"a.log": b"A\n"}, "w:gz")
    path = tmp_path / "outer.tar"
    path.write_bytes(files_tar({"x/inner.tar.gz": inner}))
    assert walk(Bundle([path])) == [
        ("outer.tar", "archive", None),
        ("x/inner.tar.gz", "archive", None),
        ("x/inner.tar.gz/a.log", "file", b"A\n"),
    ]


def test_zip_nested_in_tar_and_tar_nested_in_zip(tmp_path: Path) -> None:
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("z.log", b"Z\n")
        archive.writestr("deep.tar", files_tar({"d.log": b"D\n"}))
    path = tmp_path / "outer.tgz"
    path.write_bytes(files_tar({"in.zip": zipped.getvalue()}, "w:gz"))
    assert walk(Bundle([path])) == [
        ("outer.tgz", "archive", None),
        ("in.zip", "archive", None),
        ("in.zip/deep.tar", "archive", None),
        ("in.zip/deep.tar/d.log", "file", b"D\n"),
        ("in.zip/z.log", "file", b"Z\n"),
    ]


def test_max_depth_limits_nesting(tmp_path: Path) -> None:
    inner = files_tar({"a.log": b"A\n"})
    path = tmp_path / "outer.tar"
    path.write_bytes(files_tar({"inner.tar": inner}))
    assert walk(Bundle([path], BundleLimits(max_depth=1))) == [
        ("outer.tar", "archive", None),
        ("inner.tar", "file", inner),
    ]
    (member,) = Bundle([path], BundleLimits(max_depth=0)).members()
    assert (member.path, member.status) == ("outer.tar", "file")


def test_tar_members_must_be_read_during_iteration(tmp_path: Path) -> None:
    path = tmp_path / "b.tar"
    path.write_bytes(files_tar(FILES))
    kept: list[Member] = []
    for member in Bundle([path]).members():
        if member.status != "file":
            continue
        if kept:
            # A member the stream has moved past cannot be read any more, and says so.
            with pytest.raises(CorruptStreamError, match="cannot be read") as info:
                kept[0].open().read()
            assert info.value.path == kept[0].path
        assert read_member(member) == FILES[member.path]  # read while the walk is on it
        kept.append(member)
    assert [m.path for m in kept] == list(FILES)


def test_non_file_members_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "b.tar"
    path.write_bytes(tar_bytes([tar_info("../x", b"x")]))
    members = list(Bundle([path]).members())
    for member in members:
        with pytest.raises(BundleError, match="not readable"):
            member.open()


def test_archive_kind() -> None:
    assert [archive_kind(n) for n in ARCHIVE_NAMES] == ["tar"] * 5 + ["zip"]
    assert archive_kind("B.TAR.GZ") == "tar"
    assert archive_kind("app.log.gz") is None
    assert archive_kind("app.zst") is None


# -- hostile archives ------------------------------------------------------------------------


def test_hostile_tar_members_are_refused_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "hostile.tar"
    path.write_bytes(
        tar_bytes(
            [
                tar_info("ok1.log", b"one\n"),
                tar_info("../escape.txt", b"bad\n"),
                tar_info("/etc/passwd", b"root\n"),
                tar_info("sub/up2", type=tarfile.SYMTYPE, linkname="../../x"),
                tar_info("abs_link", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
                tar_info("hard", type=tarfile.LNKTYPE, linkname="../x"),
                tar_info("sub/inside", type=tarfile.SYMTYPE, linkname="../ok1.log"),
                tar_info("hard_in", type=tarfile.LNKTYPE, linkname="ok1.log"),
                tar_info("dev", type=tarfile.CHRTYPE, devmajor=1, devminor=3),
                tar_info("fifo", type=tarfile.FIFOTYPE),
                tar_info("block", type=tarfile.BLKTYPE, devmajor=8, devminor=0),
                tar_info("sub", type=tarfile.DIRTYPE),
                tar_info("ok2.log", b"two\n"),
            ]
        )
    )
    escape = "member path escapes the bundle"
    outside = "link points outside the bundle"
    assert walk(Bundle([path])) == [
        ("hostile.tar", "archive", None),
        ("ok1.log", "file", b"one\n"),
        ("../escape.txt", "refused", escape),
        ("/etc/passwd", "refused", escape),
        ("sub/up2", "refused", outside),
        ("abs_link", "refused", outside),
        ("hard", "refused", outside),
        ("sub/inside", "link", "link to ../ok1.log (read there)"),
        ("hard_in", "link", "link to ok1.log (read there)"),
        ("dev", "refused", "not a regular file"),
        ("fifo", "refused", "not a regular file"),
        ("block", "refused", "not a regular file"),
        ("ok2.log", "file", b"two\n"),
    ]


@pytest.mark.parametrize(
    "name",
    ["../escape.txt", "a/../../escape.txt", "/etc/passwd", "C:\\evil.txt", "..\\evil.txt"],
)
def test_each_escaping_tar_name_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "b.tar.gz"
    path.write_bytes(tar_bytes([tar_info(name, b"x"), tar_info("ok.log", b"ok\n")], "w:gz"))
    members = list(Bundle([path]).members())
    assert [(m.path, m.status) for m in members] == [
        ("b.tar.gz", "archive"),
        (name, "refused"),
        ("ok.log", "file"),
    ]
    assert members[1].detail == "member path escapes the bundle"
    assert members[1].opener is None


def test_refused_tar_name_is_shown_escaped(tmp_path: Path) -> None:
    path = tmp_path / "b.tar"
    path.write_bytes(tar_bytes([tar_info("../evil\nname\udcfe", b"x")]))
    refused = list(Bundle([path]).members())[1]
    assert refused.status == "refused"
    assert refused.path == "../evil\\x0aname\\xfe"


def test_tar_names_with_newline_and_invalid_utf8_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "b.tar"
    path.write_bytes(
        tar_bytes(
            [
                tar_info("new\nline.log", b"nl\n"),
                tar_info("bad\udcff\udcfename.log", b"nb\n"),
                tar_info("esc\x1b[31mred.log", b"esc\n"),
            ]
        )
    )
    got = walk(Bundle([path]))[1:]
    assert got == [
        ("new\\x0aline.log", "file", b"nl\n"),
        ("bad\\xff\\xfename.log", "file", b"nb\n"),
        ("esc\\x1b[31mred.log", "file", b"esc\n"),
    ]
    for member_path, _status, _data in got:
        assert "\n" not in member_path
        member_path.encode("utf-8")


def test_hostile_zip_members_are_refused_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    link_out = zipfile.ZipInfo("link_out")
    link_out.external_attr = (stat.S_IFLNK | 0o777) << 16
    link_in = zipfile.ZipInfo("sub/link_in")
    link_in.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("../evil", b"e")
        archive.writestr("/abs", b"e")
        archive.writestr("ok.log", b"ok\n")
        archive.writestr(link_out, b"../../etc/passwd")
        archive.writestr(link_in, b"../ok.log")
        archive.writestr("dir/", b"")
    assert walk(Bundle([path])) == [
        ("b.zip", "archive", None),
        ("../evil", "refused", "member path escapes the bundle"),
        ("/abs", "refused", "member path escapes the bundle"),
        ("link_out", "refused", "link points outside the bundle"),
        ("ok.log", "file", b"ok\n"),
        ("sub/link_in", "link", "link to ../ok.log"),
    ]


def test_zip_bomb_member_is_refused_before_reading(tmp_path: Path) -> None:
    path = zip_file(tmp_path / "b.zip", {"bomb.log": bytes(2_000_000), "ok.log": b"ok\n"})
    with zipfile.ZipFile(path) as archive:
        compressed = archive.getinfo("bomb.log").compress_size
    assert compressed * 200 < 2_000_000
    members: list[Member] = []
    for member in Bundle([path], BundleLimits(floor_bytes=100_000)).members():
        members.append(member)
        if member.status == "file":
            assert (member.path, read_member(member)) == ("ok.log", b"ok\n")
    bomb = members[1]
    assert (bomb.path, bomb.status, bomb.size) == ("bomb.log", "refused", 2_000_000)
    assert bomb.detail is not None
    assert "zip bomb" in bomb.detail
    assert "2,000,000" in bomb.detail
    assert f"{compressed:,}" in bomb.detail
    assert bomb.opener is None
    assert [(m.path, m.status) for m in members] == [
        ("b.zip", "archive"),
        ("bomb.log", "refused"),
        ("ok.log", "file"),
    ]
    # Within the floor, the same member is an ordinary file.
    relaxed = list(Bundle([path], BundleLimits(floor_bytes=4_000_000)).members())
    assert relaxed[1].status == "file"


def test_encrypted_zip_member_is_refused(tmp_path: Path) -> None:
    path = zip_file(tmp_path / "b.zip", {"secret.log": b"s\n", "ok.log": b"ok\n"})
    raw = bytearray(path.read_bytes())
    # Central directory entry of secret.log: signature, then the general purpose flag at +8.
    central = raw.find(b"PK\x01\x02")
    assert raw[central + 46 : central + 46 + len("secret.log")] == b"secret.log"
    raw[central + 8] |= 0x01  # encrypted
    path.write_bytes(bytes(raw))
    assert walk(Bundle([path])) == [
        ("b.zip", "archive", None),
        ("ok.log", "file", b"ok\n"),
        ("secret.log", "refused", "member is encrypted"),
    ]


def test_zip_members_count_against_the_total_cap(tmp_path: Path) -> None:
    # 3 x ~150 KB of text deflates ~10x: inside max_ratio, but 450 KB decoded in all is over a
    # 200 KB bundle cap, exactly as it would be for the same files in a .tar.gz.
    text = b"".join(b"line %d of a compressible log\n" % i for i in range(5000))
    path = zip_file(tmp_path / "b.zip", {f"m{i}.log": text for i in range(3)})
    limits = BundleLimits(max_ratio=1000, floor_bytes=1000, max_total_bytes=200_000)
    bundle = Bundle([path], limits)
    with pytest.raises(ExpansionLimitError) as info:
        decode_all(bundle)
    assert info.value.scope == "bundle"


# -- truncated archives ----------------------------------------------------------------------

RND = random.Random(7)
CHUNK_FILES = {f"f{i}.log": RND.randbytes(40_448) for i in range(6)}  # 512-aligned sizes
STRIDE = 512 + 40_448  # header + data of each member in the tar stream


def _decodable(kind: str, stored: bytes) -> int:
    """How many decoded tar bytes a truncated stored archive can still give."""
    if kind == "tar.gz":
        inflater = zlib.decompressobj(wbits=31)
        return len(inflater.decompress(stored) + inflater.flush())
    return len(stored)


@pytest.mark.parametrize("kind", ["tar", "tar.gz"])
def test_truncated_archive_lists_what_it_can_then_reports_damage(tmp_path: Path, kind: str) -> None:
    full = files_tar(CHUNK_FILES, "w:gz" if kind == "tar.gz" else "w")
    stored = full[: len(full) * 4 // 10]
    path = tmp_path / f"b.{kind}"
    path.write_bytes(stored)
    decoded = _decodable(kind, stored)
    names = list(CHUNK_FILES)
    listed_expected = [n for i, n in enumerate(names) if i * STRIDE + 512 <= decoded]
    complete = [n for i, n in enumerate(names) if (i + 1) * STRIDE <= decoded]
    assert 0 < len(complete) < len(listed_expected) < len(names)

    members: list[Member] = []
    read_ok: dict[str, bytes] = {}
    broken: dict[str, CorruptStreamError] = {}
    for member in Bundle([path]).members():  # no exception escapes the iteration
        members.append(member)
        if member.status == "file":
            try:
                read_ok[member.path] = read_member(member)
            except CorruptStreamError as exc:
                broken[member.path] = exc

    assert members[0].status == "archive"
    assert [m.path for m in members[1:-1]] == listed_expected
    assert read_ok == {n: CHUNK_FILES[n] for n in complete}
    assert sorted(broken) == [n for n in listed_expected if n not in complete]
    damaged = members[-1]
    assert (damaged.path, damaged.status) == (path.name, "damaged")
    assert damaged.detail is not None
    assert damaged.detail.startswith("archive cannot be read on: ")
    # The walk did not finish, but an on-disk archive is still hashed (content hash needs it).
    assert members[0].sha256 == hashlib.sha256(stored).hexdigest()


def test_truncated_tar_gz_without_reading_reports_the_gzip_truncation(tmp_path: Path) -> None:
    full = files_tar(CHUNK_FILES, "w:gz")
    path = tmp_path / "b.tar.gz"
    path.write_bytes(full[: len(full) * 4 // 10])
    members = list(Bundle([path]).members())
    assert [m.status for m in members] == ["archive", "file", "file", "file", "damaged"]
    assert members[-1].detail is not None
    assert "gzip stream is truncated" in members[-1].detail


def test_truncated_member_read_reports_member_relative_position(tmp_path: Path) -> None:
    # The member straddling the cut gives its bytes up to the cut, then CorruptStreamError
    # about *that member* (path and decoded_bytes relative to it, like any other stream).
    full = files_tar(CHUNK_FILES, "w:gz")
    path = tmp_path / "b.tar.gz"
    path.write_bytes(full[: len(full) * 4 // 10])
    decoded = _decodable("tar.gz", path.read_bytes())
    outcome: tuple[bytes, CorruptStreamError | None] | None = None
    for member in Bundle([path]).members():
        if member.path == "f2.log":
            stream = member.open()
            outcome = read_chunks(stream)
            stream.close()  # type: ignore[attr-defined]
    assert outcome is not None
    got, failure = outcome
    assert failure is not None
    assert got == CHUNK_FILES["f2.log"][: len(got)]
    assert len(got) <= decoded - (2 * STRIDE + 512)  # the member's bytes before the cut
    assert failure.path == "f2.log"
    assert failure.decoded_bytes == len(got)


def test_garbage_archive_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    path.write_bytes(b"this is not a zip file at all" * 10)
    members = list(Bundle([path]).members())
    assert [(m.path, m.status) for m in members] == [("b.zip", "archive"), ("b.zip", "damaged")]
    assert members[1].detail is not None
    assert members[1].detail.startswith("archive cannot be read on: ")


def test_bomb_inside_tar_gz_stream_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "b.tar.gz"
    path.write_bytes(files_tar({"zeros.log": bytes(4_000_000)}, "w:gz"))
    limits = BundleLimits(floor_bytes=64 << 10, max_total_bytes=1 << 30)
    members = list(Bundle([path], limits).members())
    assert [m.status for m in members] == ["archive", "damaged"]  # stops at the first chunk
    assert members[-1].detail is not None
    assert "decompression bomb" in members[-1].detail


def test_bundle_cap_stops_the_walk(tmp_path: Path) -> None:
    path = tmp_path / "b.tar.gz"
    path.write_bytes(files_tar({"zeros.log": bytes(1_000_000)}, "w:gz"))
    limits = BundleLimits(max_ratio=1e6, floor_bytes=0, max_total_bytes=100_000)
    with pytest.raises(ExpansionLimitError) as info:
        list(Bundle([path], limits).members())
    assert info.value.scope == "bundle"


# -- safe_relative / display_name ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a/b", "a/b"),
        ("a", "a"),
        ("./a", "a"),
        ("a//b", "a/b"),
        ("a/./b/", "a/b"),
        ("a\\b", "a/b"),
        ("..a/b..", "..a/b.."),
        ("../a", None),
        ("a/../../b", None),
        ("a/../b", None),
        ("..", None),
        ("/abs", None),
        ("//server/share", None),
        ("C:\\x", None),
        ("c:x", None),
        ("a\\..\\b", None),
        ("\\abs", None),
        ("", None),
        (".", None),
        ("./", None),
    ],
)
def test_safe_relative(name: str, expected: str | None) -> None:
    assert safe_relative(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain.log", "plain.log"),
        ("日本/ログ.log", "日本/ログ.log"),
        ("a\nb", "a\\x0ab"),
        ("a\rb\tc", "a\\x0db\\x09c"),
        ("del\x7f", "del\\x7f"),
        ("nul\x00", "nul\\x00"),
        ("bad\udcff", "bad\\xff"),
    ],
)
def test_display_name(name: str, expected: str) -> None:
    shown = display_name(name)
    assert shown == expected
    shown.encode("utf-8")


# -- identities ------------------------------------------------------------------------------


def _set_mtime(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


def test_fingerprint_is_stable_and_tracks_content_and_mtime(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", FILES)
    for file in root.rglob("*"):
        if file.is_file():
            _set_mtime(file, MTIME * 10**9)
    first = Bundle([root]).fingerprint()
    assert Bundle([root]).fingerprint() == first
    assert len(first) == 64

    target = root / "sub" / "b.log"
    _set_mtime(target, (MTIME + 1) * 10**9)
    touched = Bundle([root]).fingerprint()
    assert touched != first

    # Setting the mtime back does not make it look untouched: its ctime moved (an edit that
    # kept the size, its mtime restored, looked unchanged; issue #24).
    _set_mtime(target, MTIME * 10**9)
    restored = Bundle([root]).fingerprint()
    assert restored not in (first, touched)

    target.write_bytes(target.read_bytes() + b"more\n")
    _set_mtime(target, MTIME * 10**9)
    assert Bundle([root]).fingerprint() not in (first, touched, restored)


def test_fingerprint_of_single_file_tracks_mtime(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"x\n")
    _set_mtime(log, MTIME * 10**9)
    first = Bundle([log]).fingerprint()
    assert Bundle([log]).fingerprint() == first
    _set_mtime(log, MTIME * 10**9 + 1)
    assert Bundle([log]).fingerprint() != first


def test_content_hash_equals_content_hash_of_regular_disk_files(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", FILES)
    build_archive(root / "inner.tar.gz", {"t.log": b"t\n"})
    (root / "link").symlink_to("a.log")
    (tmp_path / "outside").write_bytes(b"o\n")
    (root / "out").symlink_to(tmp_path / "outside")
    os.mkfifo(root / "pipe")
    pairs = [(rel, sha256_file(root / rel)) for rel in [*FILES, "inner.tar.gz"]]
    bundle = Bundle([root])
    assert bundle.content_hash() == content_hash_of(pairs)
    # ...and equal to what a walk learns from its on-disk members.
    walked = []
    members = list(bundle.members())
    for member in members:
        if member.on_disk:
            sha = member.sha256 or hashlib.sha256(read_member(member)).hexdigest()
            walked.append((member.path, sha))
    assert content_hash_of(walked) == bundle.content_hash()


def test_content_hash_of_several_inputs_uses_bundle_paths(tmp_path: Path) -> None:
    one = write_tree(tmp_path / "one", {"a.log": b"1\n"})
    single = tmp_path / "x.log"
    single.write_bytes(b"x\n")
    expected = content_hash_of(
        [
            ("one/a.log", hashlib.sha256(b"1\n").hexdigest()),
            ("x.log", hashlib.sha256(b"x\n").hexdigest()),
        ]
    )
    assert Bundle([one, single]).content_hash() == expected


def test_content_hash_ignores_mtimes_but_not_content(tmp_path: Path) -> None:
    first = write_tree(tmp_path / "first", FILES)
    second = write_tree(tmp_path / "second", FILES)
    for file in second.rglob("*"):
        if file.is_file():
            _set_mtime(file, 10**9)
    assert Bundle([first]).fingerprint() != Bundle([second]).fingerprint()
    assert Bundle([first]).content_hash() == Bundle([second]).content_hash()
    (second / "a.log").write_bytes(b"changed\n")
    assert Bundle([first]).content_hash() != Bundle([second]).content_hash()
    (second / "a.log").rename(second / "renamed.log")
    (second / "renamed.log").write_bytes(FILES["a.log"])
    assert Bundle([first]).content_hash() != Bundle([second]).content_hash()


def test_content_hash_of_is_order_independent() -> None:
    pairs = [("b", "2" * 64), ("a", "1" * 64)]
    assert content_hash_of(pairs) == content_hash_of(list(reversed(pairs)))
    expected = hashlib.sha256(f"a\t{'1' * 64}\nb\t{'2' * 64}\n".encode()).hexdigest()
    assert content_hash_of(pairs) == expected
    assert content_hash_of([]) == hashlib.sha256(b"").hexdigest()


# -- file handles ----------------------------------------------------------------------------


def test_walking_a_tar_closes_the_archive_file(tmp_path: Path) -> None:
    path = tmp_path / "b.tar"
    path.write_bytes(files_tar(FILES))
    assert resource_warnings(lambda: list(Bundle([path]).members())) == []


def test_member_stream_of_a_disk_file_can_be_closed(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"x\n")

    def read_and_close() -> None:
        (member,) = Bundle([log]).members()
        stream = member.open()
        assert stream.read() == b"x\n"
        close = getattr(stream, "close", None)
        assert close is not None, "Member.open() gives no way to close the file"
        close()

    assert resource_warnings(read_and_close) == []


# -- end to end through api.ingest -----------------------------------------------------------

LOG = b"2024-05-01T00:00:00Z node-1 starting\n2024-05-01T00:00:05Z node-1 step 1 done\n"


def _case_tables(case: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return read_table(case, "files"), read_table(case, "quarantine"), read_table(case, "rows")


def test_ingest_records_refused_tar_member_and_reads_the_rest(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.tar.gz"
    bundle.write_bytes(
        tar_bytes([tar_info("../escape.txt", b"evil\n"), tar_info("node-1.log", LOG)], "w:gz")
    )
    result = api.ingest([bundle], tmp_path / "case")
    files, quarantine, rows = _case_tables(tmp_path / "case")

    status = dict(zip(files["path"], files["status"], strict=True))
    assert status == {
        "bundle.tar.gz": "archive",
        "../escape.txt": "refused",
        "node-1.log": "read",
    }
    refused = files.filter(pl.col("path") == "../escape.txt").row(0, named=True)
    assert refused["detail"] == "member path escapes the bundle"
    archive = files.filter(pl.col("path") == "bundle.tar.gz").row(0, named=True)
    assert archive["sha256"] == sha256_file(bundle)

    entry = quarantine.filter(pl.col("kind") == "file")
    assert entry["path"].to_list() == ["../escape.txt"]
    assert entry["file_id"].to_list() == [refused["file_id"]]
    assert entry["reason"].to_list() == ["member path escapes the bundle"]

    log_id = files.filter(pl.col("path") == "node-1.log")["file_id"].item()
    assert rows.height == 2
    assert rows["file_id"].to_list() == [log_id, log_id]
    assert rows["line"].to_list() == [1, 2]
    assert rows["message"].to_list() == ["node-1 starting", "node-1 step 1 done"]
    assert result.meta.counts.files_refused == 1
    assert result.meta.counts.rows == 2


def test_ingest_records_gzip_bomb_and_reads_the_other_files(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", {"good.log": LOG, "sub/other.log": LOG})
    (root / "bomb.log.gz").write_bytes(gzip.compress(bytes(4_000_000)))
    limits = BundleLimits(floor_bytes=64 << 10, max_total_bytes=1 << 30)
    api.ingest([root], tmp_path / "case", limits=limits)
    files, quarantine, rows = _case_tables(tmp_path / "case")

    status = dict(zip(files["path"], files["status"], strict=True))
    assert status == {"bomb.log.gz": "partial", "good.log": "read", "sub/other.log": "read"}
    bomb = files.filter(pl.col("path") == "bomb.log.gz").row(0, named=True)
    assert bomb["rows"] == 0
    assert bomb["on_disk"] is True
    assert bomb["sha256"] == sha256_file(root / "bomb.log.gz")

    entries = quarantine.filter(pl.col("path") == "bomb.log.gz")
    assert entries["kind"].to_list() == ["file"]
    assert "decompression bomb" in entries["reason"].item()

    per_file = rows.group_by("file_id").len().sort("file_id")
    good_ids = files.filter(pl.col("status") == "read")["file_id"].sort().to_list()
    assert per_file["file_id"].to_list() == good_ids
    assert per_file["len"].to_list() == [2, 2]


def test_ingest_content_hash_matches_bundle_content_hash(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", {"a.log": LOG})
    build_archive(root / "t.tar.gz", {"b.log": LOG})
    result = api.ingest([root], tmp_path / "case")
    assert result.meta.bundle.content_hash == Bundle([root]).content_hash()
    assert result.meta.bundle.fingerprint == Bundle([root]).fingerprint()


def test_ingest_content_hash_matches_with_a_damaged_archive(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", {"a.log": LOG})
    full = files_tar(CHUNK_FILES, "w:gz")
    (root / "t.tar.gz").write_bytes(full[: len(full) // 2])
    result = api.ingest([root], tmp_path / "case")
    assert result.meta.bundle.content_hash == Bundle([root]).content_hash()


def test_ingest_closes_the_files_it_reads(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "bundle", {"a.log": LOG})
    build_archive(root / "t.tar", {"b.log": LOG})
    assert resource_warnings(lambda: api.ingest([root], tmp_path / "case")) == []
