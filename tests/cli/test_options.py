"""Option defaults: the command line's equal the library's, and none is left unaccounted for.

An option whose default the library also has (a keyword default of :mod:`analyzer.api`, a
field of ``AnalyzeSettings``, ``BundleLimits`` or ``ReadOptions``, the diagnosis ``Settings``) must default to the
very value the library uses, so a default changed in the library cannot silently differ on
the command line. Every other default that is not "unset" (None, False) belongs to the
command line itself and is listed as such.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from analyzer import api, defaults, handoff
from analyzer.bundle import BundleLimits
from analyzer.case.inputs import ReadOptions
from analyzer.cli import diff, query, replay, serve
from analyzer.diagnose.run import Settings
from analyzer.engine import ENGINES
from analyzer.flows.settings import AnalyzeSettings
from analyzer.serve.queries import QueryLimits
from analyzer.signatures.backends import BACKENDS, DEFAULT_BACKEND, backend_named
from tests.cli.commands import command_tree, parameter, walk


def keyword_default(function: Callable[..., Any], name: str) -> Any:
    return inspect.signature(function).parameters[name].default


#: (command, parameter, what the library uses when the caller says nothing).
MIRRORS: list[tuple[tuple[str, ...], str, Any]] = [
    (("ingest",), "max_expansion", BundleLimits().max_ratio),
    (("ingest",), "max_bytes", BundleLimits().max_total_bytes),
    (("ingest",), "max_line_bytes", ReadOptions().max_line_bytes),
    (("ingest",), "force", keyword_default(api.ingest, "force")),
    (("ingest",), "wait", keyword_default(api.ingest, "wait_s")),
    (("ingest",), "wait", keyword_default(api.ingest_shard, "wait_s")),
    (("ingest",), "space_check", keyword_default(api.ingest, "space_check")),
    (("case", "info"), "hosts", keyword_default(api.case_info, "top_hosts")),
    (("match",), "backend", keyword_default(api.match, "backend")),
    (("match",), "backend", keyword_default(api.match_shard, "backend")),
    (("analyze",), "template", AnalyzeSettings().template),
    (("analyze",), "no_redact", not AnalyzeSettings().redact),
    (("analyze",), "skew", AnalyzeSettings().skew_s),
    (("analyze",), "skew", Settings().skew_s),
    (("analyze",), "silence", AnalyzeSettings().silence_s),
    (("analyze",), "silence", Settings().silence_s),
    (("analyze",), "backend", AnalyzeSettings().backend),
    (("analyze",), "engine", AnalyzeSettings().engine),
    (("analyze",), "html", AnalyzeSettings().html),
    (("analyze",), "wait", AnalyzeSettings().wait_s),
    (("analyze",), "space_check", AnalyzeSettings().space_check),
    (("report",), "format_", keyword_default(api.report, "format")),
    (("report",), "template", AnalyzeSettings().template),
    (("report",), "no_redact", not AnalyzeSettings().redact),
    (("handoff",), "context", keyword_default(api.handoff, "context")),
    (("handoff",), "context", handoff.DEFAULT_CONTEXT),
    *[
        ((("collect", platform)), option, getattr(api.RunSettings(), field))
        for platform in ("gke", "modelarts")
        for option, field in (
            ("concurrency", "concurrency"),
            ("timeout", "timeout_s"),
            ("source_cap", "source_cap"),
            ("total_cap", "total_cap"),
            ("attempts", "attempts"),
            ("backoff", "backoff_s"),
        )
    ],
    *[(("collect", p), "no_redact", not api.RunSettings().redact) for p in ("gke", "modelarts")],
    (("serve",), "query_timeout", QueryLimits().timeout_s),
    (("serve",), "query_memory", QueryLimits().memory),
    (("serve",), "max_queries", QueryLimits().max_queries),
]

#: Defaults only the command line has: how it prints, where the dashboard listens, the
#: corpus of the source tree.
CLI_OWNED: list[tuple[tuple[str, ...], str, Any]] = [
    (("case", "info"), "output", "table"),
    (("case", "hosts"), "output", "table"),
    (("query",), "output", "table"),
    (("query",), "max_rows", query.MAX_TABLE_ROWS),
    (("accuracy",), "corpus", replay.REAL_LOG_CORPUS),
    (("serve",), "port", serve.DEFAULT_PORT),
    (("serve",), "host", serve.DEFAULT_HOST),
    (("diff",), "top", diff.DEFAULT_TOP),
]


@pytest.mark.parametrize(
    ("path", "name", "expected"),
    MIRRORS,
    ids=[f"{' '.join(path)}:{name}" for path, name, _ in MIRRORS],
)
def test_option_default_is_the_librarys(path: tuple[str, ...], name: str, expected: Any) -> None:
    assert parameter(path, name).default == expected


@pytest.mark.parametrize(
    ("path", "name", "expected"),
    CLI_OWNED,
    ids=[f"{' '.join(path)}:{name}" for path, name, _ in CLI_OWNED],
)
def test_command_line_defaults(path: tuple[str, ...], name: str, expected: Any) -> None:
    assert parameter(path, name).default == expected


def test_every_default_is_accounted_for() -> None:
    """A new option with a default must say whose default it is (add it to a table above)."""
    listed = {(path, name) for path, name, _ in MIRRORS + CLI_OWNED}
    unlisted = []
    for path, command in walk(command_tree()):
        for param in command.params:
            unset = param.default is None or param.default is False
            if param.name != "help" and not unset and (path, param.name) not in listed:
                unlisted.append(f"culprit {' '.join(path)} {param.opts[0]}={param.default!r}")
    assert unlisted == []


def test_library_registries_agree_with_the_defaults() -> None:
    # The defaults name things that exist, and the registries' "first is the default" holds.
    assert backend_named(defaults.BACKEND).name == DEFAULT_BACKEND == BACKENDS[0].name
    assert ENGINES[0] == defaults.ENGINE
    assert defaults.TEMPLATE in api.TEMPLATES
    assert defaults.REPORT_FORMAT in api.REPORT_FORMATS
