"""The library's public face: everything the command line and the dashboard do is one call
here. It re-exports the workflows of :mod:`analyzer.flows` (cases, the catalogue, analysis and
reports, handoffs), of :mod:`analyzer.collect` (bundles collected from live jobs) and of
:mod:`analyzer.replay` (regression replay, the real-log corpus); nothing is implemented in this
module.

>>> from analyzer import api
>>> result = api.ingest(["bundle.tar.gz"], "case/")                  # doctest: +SKIP
>>> api.case_info("case/").meta.counts.rows                           # doctest: +SKIP
>>> api.analyze(["bundle.tar.gz"], "out/", api.AnalyzeSettings(jobs=2))  # doctest: +SKIP

Names are resolved on first use (PEP 562): ``culprit analyze FILE`` needs the analysis flow,
not the collection planner, the handoff verifier or the replay scorer, and importing all of them
up front cost about a second of start-up. Type checkers and the import contract read the
imports under ``TYPE_CHECKING`` below; ``_EXPORTS`` is the same list at run time
(``tests/test_api.py`` keeps the two in step).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from analyzer.bundle import BundleLimits
    from analyzer.case.info import CaseInfo
    from analyzer.case.inputs import ReadOptions
    from analyzer.collect import (
        CollectResult,
        GkeTarget,
        ModelArtsTarget,
        RunSettings,
        StepResult,
        Verified,
        collect_gke,
        collect_modelarts,
        gke_script,
        modelarts_script,
    )
    from analyzer.collect import verify as verify_collection
    from analyzer.collect import window as collection_window
    from analyzer.diagnose.host_errors import HostErrors
    from analyzer.engine.merge import MergeResult
    from analyzer.engine.shards import PartMeta
    from analyzer.flows.analysis import (
        CASE_SUBDIR,
        analyze,
        diagnose_case,
        findings_schema,
        host_errors,
        report,
        report_html,
    )
    from analyzer.flows.cases import (
        IngestResult,
        case_hosts,
        case_info,
        ingest,
        ingest_shard,
        load_case,
        match,
        match_shard,
        merge,
        query,
    )
    from analyzer.flows.catalogue import (
        LineMatch,
        check_signatures,
        lint_signatures,
        match_line,
        signatures,
    )
    from analyzer.flows.diff import DiffEntry, DiffResult, diff
    from analyzer.flows.handoffs import HandoffResult, handoff, verify_handoff
    from analyzer.flows.handoffs import keygen as handoff_keygen
    from analyzer.flows.results import AnalyzeResult
    from analyzer.flows.settings import AnalyzeSettings, settings
    from analyzer.provenance.compare import HandoffCheck, verdict_key
    from analyzer.replay.accuracy import score_corpus as accuracy
    from analyzer.replay.accuracy import signature_precision
    from analyzer.replay.run import replay_specs as replay
    from analyzer.report.registry import (
        FINDINGS_FILE,
        HTML_FILE,
        REPORT_FILE,
        REPORT_FORMATS,
        TEMPLATES,
    )
    from analyzer.signatures.matching import MatchResult

# public name -> (module, attribute); imported on first access.
_EXPORTS: Final[dict[str, tuple[str, str]]] = {
    "AnalyzeResult": ("analyzer.flows.results", "AnalyzeResult"),
    "AnalyzeSettings": ("analyzer.flows.settings", "AnalyzeSettings"),
    "BundleLimits": ("analyzer.bundle", "BundleLimits"),
    "CASE_SUBDIR": ("analyzer.flows.analysis", "CASE_SUBDIR"),
    "CaseInfo": ("analyzer.case.info", "CaseInfo"),
    "CollectResult": ("analyzer.collect", "CollectResult"),
    "DiffEntry": ("analyzer.flows.diff", "DiffEntry"),
    "DiffResult": ("analyzer.flows.diff", "DiffResult"),
    "FINDINGS_FILE": ("analyzer.report.registry", "FINDINGS_FILE"),
    "GkeTarget": ("analyzer.collect", "GkeTarget"),
    "HTML_FILE": ("analyzer.report.registry", "HTML_FILE"),
    "HandoffCheck": ("analyzer.provenance.compare", "HandoffCheck"),
    "HandoffResult": ("analyzer.flows.handoffs", "HandoffResult"),
    "HostErrors": ("analyzer.diagnose.host_errors", "HostErrors"),
    "IngestResult": ("analyzer.flows.cases", "IngestResult"),
    "LineMatch": ("analyzer.flows.catalogue", "LineMatch"),
    "MatchResult": ("analyzer.signatures.matching", "MatchResult"),
    "MergeResult": ("analyzer.engine.merge", "MergeResult"),
    "ModelArtsTarget": ("analyzer.collect", "ModelArtsTarget"),
    "PartMeta": ("analyzer.engine.shards", "PartMeta"),
    "REPORT_FILE": ("analyzer.report.registry", "REPORT_FILE"),
    "REPORT_FORMATS": ("analyzer.report.registry", "REPORT_FORMATS"),
    "ReadOptions": ("analyzer.case.inputs", "ReadOptions"),
    "RunSettings": ("analyzer.collect", "RunSettings"),
    "StepResult": ("analyzer.collect", "StepResult"),
    "TEMPLATES": ("analyzer.report.registry", "TEMPLATES"),
    "Verified": ("analyzer.collect", "Verified"),
    "accuracy": ("analyzer.replay.accuracy", "score_corpus"),
    "analyze": ("analyzer.flows.analysis", "analyze"),
    "case_hosts": ("analyzer.flows.cases", "case_hosts"),
    "case_info": ("analyzer.flows.cases", "case_info"),
    "check_signatures": ("analyzer.flows.catalogue", "check_signatures"),
    "collect_gke": ("analyzer.collect", "collect_gke"),
    "collect_modelarts": ("analyzer.collect", "collect_modelarts"),
    "collection_window": ("analyzer.collect", "window"),
    "diagnose_case": ("analyzer.flows.analysis", "diagnose_case"),
    "diff": ("analyzer.flows.diff", "diff"),
    "findings_schema": ("analyzer.flows.analysis", "findings_schema"),
    "gke_script": ("analyzer.collect", "gke_script"),
    "handoff": ("analyzer.flows.handoffs", "handoff"),
    "handoff_keygen": ("analyzer.flows.handoffs", "keygen"),
    "host_errors": ("analyzer.flows.analysis", "host_errors"),
    "ingest": ("analyzer.flows.cases", "ingest"),
    "ingest_shard": ("analyzer.flows.cases", "ingest_shard"),
    "lint_signatures": ("analyzer.flows.catalogue", "lint_signatures"),
    "load_case": ("analyzer.flows.cases", "load_case"),
    "match": ("analyzer.flows.cases", "match"),
    "match_line": ("analyzer.flows.catalogue", "match_line"),
    "match_shard": ("analyzer.flows.cases", "match_shard"),
    "merge": ("analyzer.flows.cases", "merge"),
    "modelarts_script": ("analyzer.collect", "modelarts_script"),
    "query": ("analyzer.flows.cases", "query"),
    "replay": ("analyzer.replay.run", "replay_specs"),
    "report": ("analyzer.flows.analysis", "report"),
    "report_html": ("analyzer.flows.analysis", "report_html"),
    "settings": ("analyzer.flows.settings", "settings"),
    "signature_precision": ("analyzer.replay.accuracy", "signature_precision"),
    "signatures": ("analyzer.flows.catalogue", "signatures"),
    "verdict_key": ("analyzer.provenance.compare", "verdict_key"),
    "verify_collection": ("analyzer.collect", "verify"),
    "verify_handoff": ("analyzer.flows.handoffs", "verify_handoff"),
}

__all__ = [
    "CASE_SUBDIR",
    "FINDINGS_FILE",
    "HTML_FILE",
    "REPORT_FILE",
    "REPORT_FORMATS",
    "TEMPLATES",
    "AnalyzeResult",
    "AnalyzeSettings",
    "BundleLimits",
    "CaseInfo",
    "CollectResult",
    "DiffEntry",
    "DiffResult",
    "GkeTarget",
    "HandoffCheck",
    "HandoffResult",
    "HostErrors",
    "IngestResult",
    "LineMatch",
    "MatchResult",
    "MergeResult",
    "ModelArtsTarget",
    "PartMeta",
    "ReadOptions",
    "RunSettings",
    "StepResult",
    "Verified",
    "accuracy",
    "analyze",
    "case_hosts",
    "case_info",
    "check_signatures",
    "collect_gke",
    "collect_modelarts",
    "collection_window",
    "diagnose_case",
    "diff",
    "findings_schema",
    "gke_script",
    "handoff",
    "handoff_keygen",
    "host_errors",
    "ingest",
    "ingest_shard",
    "lint_signatures",
    "load_case",
    "match",
    "match_line",
    "match_shard",
    "merge",
    "modelarts_script",
    "query",
    "replay",
    "report",
    "report_html",
    "settings",
    "signature_precision",
    "signatures",
    "verdict_key",
    "verify_collection",
    "verify_handoff",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    # Cached as a module global: later lookups never come back here.
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
