"""Whether a handoff archive is what culprit packed, and who packed it.

A handoff (:mod:`analyzer.handoff` packs one) is recognized by its content, not its name
(:mod:`.archive`); every member is checked against ``MANIFEST.json`` and every field of the
manifest against the members (:mod:`.manifest`, :mod:`.contents`); an optional Ed25519
signature over the manifest says which key packed it (:mod:`.signing`); :mod:`.verify` runs
the checks in order and :mod:`.compare` says how a re-diagnosis differs from the packed
findings. The format is documented in ``docs/handoff.md``.
"""

from __future__ import annotations
