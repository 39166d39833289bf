"""The library's public face: everything the command line and the dashboard do is one call
here. It re-exports the workflows of :mod:`analyzer.flows` (cases, the catalogue, analysis and
reports, handoffs), of :mod:`analyzer.collect` (bundles collected from live jobs) and of
:mod:`analyzer.replay` (regression replay, the real-log corpus); nothing is implemented in this
module.

>>> from analyzer import api
>>> result = api.ingest(["bundle.tar.gz"], "case/")                  # doctest: +SKIP
>>> api.case_info("case/").meta.counts.rows                           # doctest: +SKIP
>>> api.analyze(["bundle.tar.gz"], "out/", api.AnalyzeSettings(jobs=2))  # doctest: +SKIP
"""

from __future__ import annotations

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
