"""``culprit schema``: the JSON Schemas of culprit's outputs."""

from __future__ import annotations

import json
import sys


def schema_findings() -> None:
    """Print the JSON Schema of findings.json."""
    from analyzer import api

    sys.stdout.write(json.dumps(api.findings_schema(), indent=2, sort_keys=True) + "\n")
