"""The façade resolves its names lazily: the run-time table, the imports type checkers read
and ``__all__`` must name the same objects, and importing it must stay cheap."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer import api

API_SOURCE = Path(api.__file__)


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    tree = ast.parse(API_SOURCE.read_text(encoding="utf-8"))
    found: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                for alias in statement.names:
                    found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


def test_table_matches_the_imports_type_checkers_read() -> None:
    assert _type_checking_imports() == api._EXPORTS
    assert sorted(api.__all__) == sorted(api._EXPORTS)


@pytest.mark.parametrize("name", sorted(api._EXPORTS))
def test_every_name_is_its_module_object(name: str) -> None:
    module, attribute = api._EXPORTS[name]
    assert getattr(api, name) is getattr(importlib.import_module(module), attribute)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = api.no_such_name
    assert not hasattr(api, "no_such_name")


def test_dir_lists_the_public_names() -> None:
    assert set(api.__all__) <= set(dir(api))


def test_import_loads_no_workflow() -> None:
    # A fresh interpreter: this one has imported everything already.
    code = (
        "import sys; from analyzer import api; "
        "print(sorted(m for m in sys.modules if m.startswith(('analyzer.', 'polars', "
        "'pyarrow', 'duckdb', 'detect_secrets'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded = ast.literal_eval(out)
    assert loaded == ["analyzer.api"]
