"""``culprit collect``: build a bundle from a live job, with commands a customer can audit.

A collection is a :class:`~analyzer.collect.plan.Plan` (:mod:`.plan`): one step per command,
built from what the discovery commands found (:mod:`.gke`: pods, nodes, instances, with the
Cloud Logging queries of :mod:`.logging_filter` over the window of :mod:`.window`;
:mod:`.modelarts`: the job's details and tasks). The plan is run into a bundle folder
(:mod:`.runner`, one command at a time by :mod:`.process`, outputs redacted by
:mod:`.redaction`) or printed as a bash script (:mod:`.script`); both write the record of
:mod:`.record` (plan, results, manifest) that ``culprit collect verify`` checks.
:mod:`.collection` puts these together.
"""

from __future__ import annotations

from analyzer.collect.collection import (
    CollectResult,
    collect_gke,
    collect_modelarts,
    gke_script,
    modelarts_script,
)
from analyzer.collect.gke import GkeTarget
from analyzer.collect.modelarts import ModelArtsTarget
from analyzer.collect.record import StepResult, Verified, verify
from analyzer.collect.runner import Progress, RunSettings
from analyzer.collect.window import window

__all__ = [
    "CollectResult",
    "GkeTarget",
    "ModelArtsTarget",
    "Progress",
    "RunSettings",
    "StepResult",
    "Verified",
    "collect_gke",
    "collect_modelarts",
    "gke_script",
    "modelarts_script",
    "verify",
    "window",
]
