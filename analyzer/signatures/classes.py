"""Failure classes: the coarse answer to "what kind of failure was it?".

Every knowledge page belongs to one class (its front matter's ``class``); a verdict's class is
its page's. The classes are the ones ``fixtures/real/README.md`` describes, so a published
excerpt's expected class and a verdict's class are compared in the same words.
"""

from __future__ import annotations

from typing import Final

#: The class of a verdict that names no cause.
UNKNOWN: Final = "unknown"

FAILURE_CLASSES: Final = frozenset(
    {
        "accelerator-oom",
        "host-oom",
        "compile-error",
        "accelerator-init",
        "accelerator-runtime",
        "accelerator-hardware",
        "collective-timeout",
        "collective-network",
        "coordination",
        "preemption",
        "node-infrastructure",
        "checkpoint-storage",
        "data-input",
        "pod-startup",
        "crashloop",
        "eviction",
        "scheduling",
        "device-plugin",
        "kubelet-failure",
        "fatal-signal",
        "python-exception",
        "cluster-config",
        "job-platform",
        UNKNOWN,
    }
)
