"""The default engine: everything in this process (and its ingest worker processes)."""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from analyzer.case.layout import CaseMeta
from analyzer.case.meta import build_meta
from analyzer.case.store import Case
from analyzer.case.writer import CaseWriter
from analyzer.engine.remote import localize
from analyzer.engine.shards import IngestJob
from analyzer.ingest.pipeline.progress import Progress
from analyzer.ingest.pipeline.run import IngestRun
from analyzer.signatures.backends import Backend
from analyzer.signatures.catalog import Catalogue
from analyzer.signatures.matching import match_case


@dataclass(frozen=True)
class LocalEngine:
    """Ingest with ``jobs`` worker processes; match with the backend's own threads."""

    name: str = "local"

    def ingest(self, job: IngestJob, target: Path, *, jobs: int, progress: Progress) -> CaseMeta:
        with localize(job.inputs, job.limits, scratch=job.scratch) as prepared:
            writer = CaseWriter(target)
            try:
                IngestRun(
                    prepared.bundle,
                    writer,
                    job.options,
                    job.reader,
                    progress,
                    jobs=jobs,
                ).run()
                return writer.commit(
                    lambda files: build_meta(
                        prepared.inputs, prepared.fingerprint, job.settings, files
                    )
                )
            except BaseException:
                writer.abort()
                raise

    def match(self, case: Case, catalogue: Catalogue, backend: Backend) -> None:
        match_case(case, catalogue, backend)

    def session(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()
