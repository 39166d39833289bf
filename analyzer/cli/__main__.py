"""``python -m analyzer.cli`` runs the ``culprit`` command (as ``python -m analyzer`` does)."""

from __future__ import annotations

from analyzer.cli import main

main()
