"""detect-secrets' plugins are imported only when a text gets past their hints."""

from __future__ import annotations

import subprocess
import sys

from analyzer.redact.engine import Redactor
from analyzer.redact.library import PLUGINS


def test_plugins_resolve_to_their_regexes() -> None:
    for detector in PLUGINS:
        # Every plugin names a class that exists and has the regexes it selects.
        list(detector.find("nothing secret here"))


def test_no_detect_secrets_import_until_a_candidate() -> None:
    code = (
        "import sys\n"
        "from analyzer.redact.engine import Redactor\n"
        "import polars as pl\n"
        "r = Redactor()\n"
        "r.series(pl.Series(['step 1 completed loss=0.5', 'rank 3 ready']))\n"
        "assert not any(m.startswith('detect_secrets') for m in sys.modules), 'eager'\n"
        "assert r('key AKIAIOSFODNN7EXAMPLE') == 'key [REDACTED:aws-access-key-id]'\n"
        "assert 'detect_secrets' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_jwt_still_checked_by_detect_secrets() -> None:
    token = (
        "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0."
        "c2lnbmF0dXJlc2lnbmF0dXJl"
    )
    assert Redactor()(f"token {token}") == "token [REDACTED:kubernetes-token]"
