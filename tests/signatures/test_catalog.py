"""Loading signature folders: every problem at once, each with its file and line."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzer.errors import SignatureError
from analyzer.signatures import catalog
from analyzer.signatures.catalog import collect, load
from analyzer.signatures.model import FAMILIES
from tests.signatures.conftest import signature_text

MINIMUM_CATALOGUE = 150


def test_the_packaged_catalogue_loads_and_is_complete() -> None:
    catalogue = load()
    assert len(catalogue) >= MINIMUM_CATALOGUE
    codes = [s.code for s in catalogue.signatures]
    assert len(set(codes)) == len(codes)
    assert {s.role for s in catalogue.signatures} == {"root", "secondary", "context", "noise"}
    # every family of the model has signatures
    assert {s.family for s in catalogue.signatures} == set(FAMILIES)


def test_a_valid_extra_folder_loads_after_the_catalogue(folder: Callable[..., Path]) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    catalogue = load([extra], builtin=False)
    assert [s.code for s in catalogue.signatures] == ["COORD-T-001"]
    assert catalogue.find("test-widget-failed").signature.groups == ("chip",)
    with pytest.raises(SignatureError, match="no signature has code or name"):
        catalogue.find("nothing")


def test_a_file_edited_between_loads_is_read_again(folder: Callable[..., Path]) -> None:
    # Loads are cached by a file's text: an edit that keeps the size and the modification
    # time (a restored mtime, a coarse clock) must still be seen.
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    path = extra / "coordination" / "test-widget-failed.toml"
    before = path.stat()
    assert load([extra], builtin=False).signatures[0].regex.endswith(r"(?P<chip>\d+)")
    path.write_text(signature_text(regex=r"widget failed on chip (?P<chip>\w+)"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert load([extra], builtin=False).signatures[0].regex.endswith(r"(?P<chip>\w+)")


def test_every_problem_is_reported_with_file_and_line(folder: Callable[..., Path]) -> None:
    extra = folder(
        {
            "coordination/broken.toml": 'code = "COORD-T-009"\nname = [\n',
            "coordination/bad-role.toml": signature_text(name="bad-role", number=2).replace(
                'role = "root"', 'role = "cause"'
            ),
            "coordination/wrong-name.toml": signature_text(number=3, name="other-name"),
            "gke/test-widget-failed.toml": signature_text(number=4),
            "coordination/test-widget-failed.toml": signature_text(number=4),
            "stray.toml": signature_text(number=5, name="stray"),
        }
    )
    _, problems = collect([extra])
    text = "\n".join(str(p) for p in problems)
    assert "extra/coordination/broken.toml:3: not valid TOML" in text
    assert "extra/coordination/bad-role.toml:7: role:" in text
    assert "wrong-name.toml:2: file is named 'wrong-name.toml'; name it other-name.toml" in text
    assert (
        "extra/gke/test-widget-failed.toml:4: family 'coordination' is not the folder 'gke'" in text
    )
    assert "code 'COORD-T-004' is already used by" in text
    assert "name 'test-widget-failed' is already used by" in text
    assert "stray.toml: signature files live in <family>/ folders" in text
    with pytest.raises(SignatureError, match=r"problem\(s\) in the signature catalogue"):
        load([extra], builtin=False)


def test_a_code_carries_its_family_prefix(folder: Callable[..., Path]) -> None:
    extra = folder({"gke/test-widget-failed.toml": signature_text(family="gke")})
    _, problems = collect([extra])
    assert [p.message for p in problems] == [
        "code 'COORD-T-001' does not start with GKE- (its family)"
    ]
    assert problems[0].line == 1


def test_a_missing_folder_is_a_problem(tmp_path: Path) -> None:
    _, problems = collect([tmp_path / "nowhere"])
    assert [p.message for p in problems] == ["not a signature folder"]


def test_the_digest_is_sha256_of_the_files_bytes_in_catalogue_order(
    folder: Callable[..., Path],
) -> None:
    # CRLF line ends: the text reads them as \n (as read_text does), the digest keeps the
    # bytes as they are on disk.
    crlf = signature_text(number=2, name="other-widget").replace("\n", "\r\n")
    extra = folder(
        {
            "coordination/test-widget-failed.toml": signature_text(),
            "gke/other-widget.toml": crlf.replace("coordination", "gke").replace(
                "COORD-T", "GKE-T"
            ),
        }
    )
    catalogue = load([extra], builtin=False)
    files = [entry.path for entry in catalogue.entries]
    assert catalogue.digest == hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    for entry in catalogue.entries:
        assert entry.text == entry.path.read_text(encoding="utf-8")
        assert entry.data == entry.path.read_bytes()
    assert "\r" not in catalogue.entries[1].text
    assert catalogue.entries[1].line_of("regex") == 12


def test_a_file_that_is_not_utf8_is_reported_as_read_text_says(
    folder: Callable[..., Path],
) -> None:
    extra = folder({"coordination/test-widget-failed.toml": signature_text()})
    path = extra / "coordination" / "test-widget-failed.toml"
    # Past read_text's first chunk: its decoder counts positions from the chunk.
    path.write_bytes(signature_text().encode() + b"#" * 9000 + b"\xff\n")
    with pytest.raises(UnicodeDecodeError) as expected:
        path.read_text(encoding="utf-8")
    _, problems = collect([extra])
    assert [p.message for p in problems] == [f"cannot read: {expected.value}"]


def test_the_files_are_those_glob_finds_in_the_same_order(tmp_path: Path) -> None:
    # The listing replaced ``sorted(folder.glob("*/*.toml"))`` (and ``*.toml`` for strays):
    # hidden names, links, a folder named like a file and other cases found as glob finds them.
    root = tmp_path / "signatures"
    for name in ("b/z.toml", "b/a.toml", "a/.hidden.toml", "a/x.TOML", "a/y.toml.bak", "top.toml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    (root / "b" / "dir.toml").mkdir()
    (root / "dir.toml").mkdir()
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.toml").write_text("")
    (root / "linked").symlink_to(root / "b")
    (root / "a" / "link.toml").symlink_to(root / "b" / "a.toml")
    (root / "a" / "dangling.toml").symlink_to(root / "nowhere.toml")
    strays, files = catalog._listing(root)
    assert [root / name for name in strays] == sorted(p for p in root.glob("*.toml") if p.is_file())
    assert [root / family / name for family, name in files] == sorted(
        p for p in root.glob("*/*.toml") if p.is_file()
    )
    assert catalog._listing(tmp_path / "missing") == ([], [])
