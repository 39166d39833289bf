"""Walk a bundle safely (:mod:`analyzer.bundle.walk`): its members and their names
(:mod:`~analyzer.bundle.members`), archive members (:mod:`~analyzer.bundle.archives`) and files
on disk (:mod:`~analyzer.bundle.tree`)."""

from __future__ import annotations

from analyzer.bundle.members import (
    BundleLimits,
    Member,
    MemberStatus,
    archive_kind,
    content_hash_of,
    content_of,
    display_name,
    safe_relative,
)
from analyzer.bundle.walk import Bundle

__all__ = [
    "Bundle",
    "BundleLimits",
    "Member",
    "MemberStatus",
    "archive_kind",
    "content_hash_of",
    "content_of",
    "display_name",
    "safe_relative",
]
