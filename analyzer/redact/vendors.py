"""Token formats of the clouds and services ML training logs meet that detect-secrets'
plugins do not know: Google Cloud, Huawei Cloud OBS, Kubernetes kubeconfigs, Hugging Face,
Weights & Biases, OpenAI project keys, Anthropic, fine-grained GitHub tokens, Databricks,
Docker Hub, npm, and the signatures of pre-signed URLs (GCS, S3, OBS, Azure SAS)."""

from __future__ import annotations

import re
from typing import Final

from analyzer.redact.detectors import Regex, RegexDetector


def _signature_kind(text: str, match: re.Match[str]) -> str:
    """An OBS, S3 (``AWS4-HMAC-SHA256 … Signature=``) or other URL/header signature."""
    lowered = text.lower()
    if "obs" in lowered or "myhuaweicloud" in lowered:
        return "obs-signature"
    if "amz" in lowered or "aws4" in lowered:
        return "aws-signature"
    return "url-signature"


def _token(kind: str, pattern: str, hint: str, flags: int = 0) -> RegexDetector:
    return RegexDetector(kind, Regex(pattern, flags), hint)


VENDORS: Final = (
    # Google Cloud.
    _token("gcp-api-key", r"(?<![\w-])(?P<s>AIza[0-9A-Za-z_-]{35})(?![\w-])", r"AIza"),
    _token("gcp-oauth-token", r"(?<![\w.-])(?P<s>ya29\.[0-9A-Za-z_.-]{10,})", r"ya29\."),
    _token("gcp-refresh-token", r"(?<![\w/])(?P<s>1//0[0-9A-Za-z_-]{20,})", r"1//0"),
    _token("gcp-client-secret", r"(?P<s>GOCSPX-[0-9A-Za-z_-]{20,})", r"GOCSPX-"),
    _token(
        "gcp-sa-key-id",
        r"private_key_id\\?[\"']?\s*[:=]\s*\\?[\"']?(?P<s>[0-9a-f]{40})",
        r"private_key_id",
    ),
    _token(
        "gcs-signature", r"X-Goog-Signature=(?P<s>[0-9A-Fa-f]{16,})", r"(?i)x-goog-signature", re.I
    ),
    # Amazon S3 pre-signed URLs (access key ids and quoted secrets: detect-secrets).
    _token(
        "aws-signature", r"X-Amz-Signature=(?P<s>[0-9A-Fa-f]{16,})", r"(?i)x-amz-signature", re.I
    ),
    _token(
        "aws-session-token",
        r"X-Amz-Security-Token=(?P<s>[^&\s\"'<>]{16,})",
        r"(?i)x-amz-security-token",
        re.I,
    ),
    # Huawei Cloud OBS: "Authorization: OBS <AK>:<signature>" and query-string signatures
    # (the AK/SK environment variables are keyword assignments: analyzer.redact.keywords).
    _token(
        "obs-signature",
        r"authorization\\?[\"']?\s*[:=]\s*\\?[\"']?OBS\s+(?P<s>[A-Za-z0-9]{10,}:[A-Za-z0-9+/=]{16,})",
        r"(?i)authorization",
        re.I,
    ),
    RegexDetector(
        "url-signature",
        Regex(r"(?<![\w-])Signature=(?P<s>[A-Za-z0-9%+/=_.-]{16,})"),
        r"Signature=",
        check=_signature_kind,
        also=("obs-signature", "aws-signature"),
    ),
    _token("azure-sas-signature", r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{16,})", r"[?&]sig="),
    # Kubernetes: a kubeconfig's client key (service-account tokens are JWTs: library.JWT).
    _token(
        "kubeconfig-client-key",
        r"client-key-data\\?[\"']?\s*:\s*\\?[\"']?(?P<s>[A-Za-z0-9+/=]{16,})",
        r"(?i)client-key-data",
        re.I,
    ),
    # Model hubs, experiment trackers, LLM APIs.
    _token("hf-token", r"(?<![A-Za-z0-9_])(?P<s>hf_[A-Za-z0-9]{30,})(?![A-Za-z0-9_])", r"hf_"),
    _token(
        "wandb-api-key",
        r"wandb[\w.()-]*?key\W{1,4}(?P<s>[0-9a-f]{40})(?![0-9a-f])",
        r"(?i)wandb",
        re.I,
    ),
    _token("anthropic-key", r"(?<![\w-])(?P<s>sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{20,})", r"sk-ant-"),
    _token(
        "openai-key",
        r"(?<![\w-])(?P<s>sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,}))",
        r"sk-",
    ),
    # Source hosting, registries, data platforms.
    _token("github-token", r"(?<![\w])(?P<s>github_pat_[A-Za-z0-9_]{22,})", r"github_pat_"),
    _token("databricks-token", r"(?<![\w])(?P<s>dapi[0-9a-f]{32}(?:-\d)?)(?![\w])", r"dapi"),
    _token("docker-token", r"(?<![\w])(?P<s>dckr_pat_[A-Za-z0-9_-]{20,})", r"dckr_pat_"),
    _token("npm-token", r"(?<![\w])(?P<s>npm_[A-Za-z0-9]{36})(?![\w])", r"npm_"),
)
