"""Walk a bundle safely (:mod:`analyzer.bundle.walk`): its members and their names
(:mod:`~analyzer.bundle.members`), archive members (:mod:`~analyzer.bundle.archives`) and files
on disk (:mod:`~analyzer.bundle.tree`)."""

from __future__ import annotations

from analyzer.bundle.members import (
    COLLECTION_DIR,
    BundleLimits,
    Member,
    MemberStatus,
    archive_kind,
    content_hash_of,
    content_of,
    display_name,
    is_collection_record,
    safe_relative,
)
from analyzer.bundle.walk import Bundle

__all__ = [
    "COLLECTION_DIR",
    "Bundle",
    "BundleLimits",
    "Member",
    "MemberStatus",
    "archive_kind",
    "content_hash_of",
    "content_of",
    "display_name",
    "is_collection_record",
    "safe_relative",
]
