"""``python -m analyzer`` runs the ``culprit`` command."""

from __future__ import annotations

from analyzer.cli import main

main()
