"""``culprit serve``: a local triage dashboard over one case or a folder of cases.

A Starlette app (:func:`analyzer.serve.app.create_app`) run by uvicorn on localhost. It only
reads: the case list and verdicts, the HTML report, each host's timeline and a read-only SQL
box. Everything it serves is rendered here, with no external requests, so it works air-gapped.
"""

from __future__ import annotations
