"""Addresses and personal identifiers: passwords in URLs, e-mail addresses, IPv4 and IPv6.

Each has a look-alike in training logs that must stay readable, and each look-alike is
refused here rather than listed anywhere else:

* a four-part version is not an IPv4 address: ``libtpu 0.0.17.1``, ``CANN 7.0.0.1``,
  ``torch==2.5.1.0``, ``v7.0.0.1``, ``0.0.17.1-rc1`` (a version word or sign before it, a
  version suffix after it, or a leading zero);
* a C++ scope is not an IPv6 address: ``c10::Error``, ``c10d::ProcessGroupNCCL`` (a
  candidate must stand alone, as a word, and hold a digit);
* a file or a package at a step or version is not an e-mail: ``ckpt@step1000.tar``,
  ``torch@2.5``, and neither is an SSH remote ``git@github.com:org/repo``.
"""

from __future__ import annotations

import re
from typing import Final

from analyzer.redact.detectors import Regex, RegexDetector
from analyzer.redact.keywords import words

#: Words after which a dotted quad is a version (case-insensitive, ``:``/``=`` allowed).
VERSION_WORDS: Final = (
    "version|ver|v|release|rel|build|revision|rev|libtpu|libtpu-nightly|cann|driver|"
    "firmware|fw|sdk|toolkit|runtime|cuda|cudnn|nccl|hccl|torch|torch_npu|torch-npu|torch_xla|"
    "pytorch|jax|jaxlib|tensorflow|tf|mindspore|ascend|npu-smi|kernel|python|package|pkg|"
    "image|tag|chart|helm|gke|cos|ubuntu|debian|centos|euleros|openeuler"
)
_VERSION_BEFORE: Final = Regex(
    rf"(?i)(?:^|[^\w-])(?:{VERSION_WORDS}|[\w-]*?[-_]?version|[\w-]*?[-_]ver)[ \t]*[:=]?[ \t]*$"
)
#: File extensions that end ``name@step.ext`` (a checkpoint, not a mailbox).
FILE_EXTENSIONS: Final = words(
    "tar gz tgz zst zip bz2 xz pt pth ckpt bin safetensors json yaml yml toml txt log csv "
    "parquet npz npy h5 hdf5 pb onnx msgpack pkl pickle orbax index data om air mindir py sh "
    "whl so png jpg"
)


def _ipv4_kind(text: str, match: re.Match[str]) -> str | None:
    quad = match.group("s")
    parts = quad.split(".")
    if any(int(p) > 255 or (len(p) > 1 and p[0] == "0") for p in parts):
        return None
    start, end = match.span("s")
    before, after = text[:start], text[end:]
    if before.endswith(("==", ">=", "<=", "~=", "!=")):
        return None
    if before[-1:] in "-_" and before[-2:-1].isalpha():
        return None
    if re.match(r"[-+](?:[A-Za-z]|cu\d|rc)|\.(?:post|dev|rc)", after):
        return None
    if _VERSION_BEFORE.search(before[-48:]):
        return None
    return "ip"


def _ipv6_kind(text: str, match: re.Match[str]) -> str | None:
    """An address holds a digit and either three groups or one of three digits or more
    (``fe80::1``); ``y[1::3]`` is a slice."""
    address = match.group("s")
    groups = [g for g in address.split(":") if g]
    if not any(c.isdigit() for c in address):
        return None
    return "ipv6" if len(groups) >= 3 or any(len(g) >= 3 for g in groups) else None


def _email_kind(text: str, match: re.Match[str]) -> str | None:
    address = match.group("s")
    local, domain = address.rsplit("@", 1)
    if domain.rsplit(".", 1)[-1].lower() in FILE_EXTENSIONS:
        return None
    if local == "git" and text[match.end("s") : match.end("s") + 1] == ":":
        return None
    return "email"


_HEX4: Final = r"[0-9A-Fa-f]{1,4}"

NETWORK: Final = (
    RegexDetector(
        "url-password",
        # scheme://user:password@host; the user may be empty (redis://:password@host).
        Regex(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\"'<>]*:(?P<s>[^/\s@\"'<>]+)@"),
        r"://[^/\s@]*:[^/\s@]+@",
    ),
    RegexDetector(
        "email",
        Regex(
            r"(?<![\w.%+-])(?P<s>[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
            r"\.[A-Za-z]{2,24})(?![\w-])"
        ),
        r"@",
        check=_email_kind,
    ),
    RegexDetector(
        "ipv6",
        Regex(
            rf"(?<![\w:.])(?P<s>(?:{_HEX4}:){{7}}{_HEX4}"
            rf"|(?:{_HEX4}:){{1,6}}:(?:{_HEX4}:){{0,5}}{_HEX4})(?![\w:]|\.\d)"
        ),
        r"[0-9A-Fa-f]::?[0-9A-Fa-f]",
        check=_ipv6_kind,
    ),
    RegexDetector(
        "ip",
        Regex(r"(?<![\w.])(?P<s>\d{1,3}(?:\.\d{1,3}){3})(?![\w]|\.\d)"),
        r"[0-9]\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]",
        check=_ipv4_kind,
    ),
)
