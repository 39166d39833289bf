"""The catalogue and knowledge pages ship in a wheel (as data under share/culprit), one
data-files entry per family folder."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from analyzer.signatures.catalog import CATALOGUE_DIR, KNOWLEDGE_DIR
from analyzer.signatures.model import FAMILIES
from tests.conftest import REPO


def test_every_family_folder_is_packaged() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    data_files = config["tool"]["setuptools"]["data-files"]
    expected = {f"share/culprit/signatures/{f}": [f"signatures/{f}/*.toml"] for f in FAMILIES}
    expected["share/culprit/knowledge"] = ["knowledge/*.md"]
    assert data_files == expected
    folders = {p.name for p in CATALOGUE_DIR.iterdir() if p.is_dir()}
    assert folders <= set(FAMILIES), f"folders without a family: {folders - set(FAMILIES)}"


def _setuptools_major() -> int:
    if importlib.util.find_spec("setuptools") is None:
        return 0
    return int(importlib.metadata.version("setuptools").split(".")[0])


@pytest.mark.skipif(
    _setuptools_major() < 77,
    reason="building offline needs setuptools >= 77 in this environment (pyproject's build "
    "requirement); pip install 'setuptools>=77' to run it",
)
def test_a_wheel_carries_every_signature_and_page(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("culprit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.split(".data/data/share/culprit/", 1)[1] for n in names if ".data/data/" in n}
    signatures = {f"signatures/{p.parent.name}/{p.name}" for p in CATALOGUE_DIR.glob("*/*.toml")}
    pages = {f"knowledge/{p.name}" for p in KNOWLEDGE_DIR.glob("*.md")}
    assert shipped == signatures | pages
