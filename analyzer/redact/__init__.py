"""Redaction: the one layer every output of culprit goes through before it is written or
served (reports, findings, claim texts, report.html, the dashboard's host pages, every
member of a handoff including the signature captures).

* :mod:`~analyzer.redact.library`: vendor token formats from detect-secrets' plugins;
* :mod:`~analyzer.redact.vendors`: culprit's own cloud formats (Google, Huawei Cloud/OBS,
  Kubernetes, Hugging Face, W&B, OpenAI…);
* :mod:`~analyzer.redact.keywords`: values named as secrets (``password=``, ``--token``,
  ``Authorization:``);
* :mod:`~analyzer.redact.network`: URL passwords, e-mails, IPs, and their look-alikes;
* :mod:`~analyzer.redact.blocks`: private keys across lines;
* :mod:`~analyzer.redact.engine`: the :class:`Redactor` that applies them;
* :mod:`~analyzer.redact.kinds`: what each ``[REDACTED:<kind>]`` stands for.

A redaction replaces the value only and names its kind (``password=[REDACTED:password]``),
so the line stays readable; citations (path, line, row id) never change.
"""

from __future__ import annotations

from analyzer.redact.engine import VERBATIM, Redactor, marker

__all__ = ["VERBATIM", "Redactor", "marker"]
