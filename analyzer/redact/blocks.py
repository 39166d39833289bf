"""Private keys, which span lines: a PEM block inside one text (a folded record, a JSON
string with ``\\n`` escapes) from its BEGIN line to its END line or the end of the text, and
the lines of a block that a log split into rows of their own, each of which is nothing but a
run of base64."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from analyzer.redact.detectors import Regex, RegexDetector, Span, entropy

PEM: Final = RegexDetector(
    "private-key",
    Regex(
        # The line breaks around the body (or their JSON escapes) stay.
        r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----(?:\s|\\n)*"
        r"(?P<s>.*?)(?:\s|\\n)*(?=-----END (?P=label)PRIVATE KEY|\Z)",
        re.DOTALL,
    ),
    r"PRIVATE KEY",
)

#: A line that is one run of base64, maybe after a timestamp.
_LINE: Final = Regex(r"(?m)^[ \t]*(?:\S+[ \t]+)?(?P<s>[A-Za-z0-9+/]{8,}={0,2})[ \t]*$")
#: Full lines of a PEM body are 64 (OpenSSH: 70) characters; shorter unpadded runs of this
#: entropy are too easily names.
_MIN_CHARS: Final = 40
_MIN_ENTROPY: Final = 4.3


@dataclass(frozen=True)
class KeyMaterial:
    """A line of base64 key material on its own: at least 40 characters of high entropy, or a
    padded run (``…==``, the last line of a block)."""

    kinds: tuple[str, ...] = ("key-material",)
    #: The line may begin and end with JSON escapes or quotes (a signature capture).
    hint: str = (
        r"(?m)(?:^|\\n|\")(?:[ \t]|\\t)*(?:\S+(?:[ \t]|\\t)+)?"
        r"[A-Za-z0-9+/]{8,}={0,2}(?:[ \t]|\\t)*(?:$|\\n|\\r|\")"
    )

    def find(self, text: str) -> Iterator[Span]:
        for match in _LINE.finditer(text):
            value = match.group("s")
            body = value.rstrip("=")
            if re.fullmatch(r"[0-9a-fA-F]+|[A-Za-z]+|[0-9]+", body) or (
                value.startswith("/") and value.count("/") >= 3
            ):
                continue
            padded = value.endswith("=") and len(body) >= 6 and entropy(body) >= 2.5
            if padded or (len(value) >= _MIN_CHARS and entropy(value) >= _MIN_ENTROPY):
                yield Span(*match.span("s"), "key-material")
