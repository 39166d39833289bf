"""What each ``[REDACTED:<kind>]`` stands for, and which detector names it (``docs`` and the
tests read this table; a kind no detector names, or a named kind missing here, fails them)."""

from __future__ import annotations

from typing import Final, NamedTuple


class Kind(NamedTuple):
    name: str
    what: str
    #: ``detect-secrets`` (a plugin's regex) or ``culprit`` (analyzer.redact's own).
    source: str


_LIB, _OURS = "detect-secrets", "culprit"

KINDS: Final = (
    Kind("private-key", "a PEM private key block (the body; BEGIN/END lines stay)", _OURS),
    Kind(
        "key-material", "a line that is only base64 key material (a PEM line on its own row)", _OURS
    ),
    Kind(
        "aws-access-key-id", "an AWS access key id (AKIA…, ASIA…) or AWS_ACCESS_KEY_ID value", _LIB
    ),
    Kind("aws-secret-key", "an AWS secret access key", _LIB),
    Kind(
        "aws-session-token", "an AWS session token (X-Amz-Security-Token, AWS_SESSION_TOKEN)", _OURS
    ),
    Kind("aws-signature", "the signature of an S3 pre-signed URL or SigV4 header", _OURS),
    Kind("github-token", "a GitHub token (ghp_, gho_, ghs_, github_pat_…)", _LIB),
    Kind("gitlab-token", "a GitLab token (glpat-…)", _LIB),
    Kind("slack-token", "a Slack token (xoxb-, xoxp-…)", _LIB),
    Kind("slack-webhook", "a Slack incoming-webhook URL", _LIB),
    Kind("openai-key", "an OpenAI API key (sk-…, sk-proj-…)", _LIB),
    Kind("anthropic-key", "an Anthropic API key (sk-ant-…)", _OURS),
    Kind("stripe-key", "a Stripe live key", _LIB),
    Kind("twilio-key", "a Twilio account SID or API key", _LIB),
    Kind("sendgrid-key", "a SendGrid API key", _LIB),
    Kind("mailchimp-key", "a Mailchimp API key", _LIB),
    Kind("npm-token", "an npm token", _LIB),
    Kind("pypi-token", "a PyPI upload token", _LIB),
    Kind("discord-token", "a Discord bot token", _LIB),
    Kind("telegram-token", "a Telegram bot token", _LIB),
    Kind("square-secret", "a Square OAuth secret", _LIB),
    Kind("azure-storage-key", "an Azure storage AccountKey", _LIB),
    Kind("azure-sas-signature", "the sig= of an Azure SAS URL", _OURS),
    Kind("artifactory-token", "a JFrog Artifactory token", _LIB),
    Kind("jwt", "a JSON Web Token", _LIB),
    Kind("kubernetes-token", "a Kubernetes service-account token (a JWT)", _OURS),
    Kind("kubeconfig-client-key", "a kubeconfig client-key-data", _OURS),
    Kind("gcp-api-key", "a Google API key (AIza…)", _OURS),
    Kind("gcp-oauth-token", "a Google OAuth access token (ya29.…)", _OURS),
    Kind("gcp-refresh-token", "a Google OAuth refresh token (1//0…)", _OURS),
    Kind("gcp-client-secret", "a Google OAuth client secret (GOCSPX-…)", _OURS),
    Kind("gcp-sa-key-id", "the private_key_id of a service-account key file", _OURS),
    Kind("gcs-signature", "the X-Goog-Signature of a GCS signed URL", _OURS),
    Kind(
        "obs-signature", "a Huawei Cloud OBS signature (query string or Authorization: OBS)", _OURS
    ),
    Kind("url-signature", "another Signature= of a pre-signed URL", _OURS),
    Kind("huaweicloud-ak", "a Huawei Cloud access key id (HUAWEICLOUD_SDK_AK, OBS AK)", _OURS),
    Kind("huaweicloud-sk", "a Huawei Cloud secret key (HUAWEICLOUD_SDK_SK, OBS SK)", _OURS),
    Kind("hf-token", "a Hugging Face token (hf_…)", _OURS),
    Kind("wandb-api-key", "a Weights & Biases API key", _OURS),
    Kind("databricks-token", "a Databricks token (dapi…)", _OURS),
    Kind("docker-token", "a Docker Hub personal access token", _OURS),
    Kind("password", "a value named password/passwd/pwd (assignment, flag, JSON)", _OURS),
    Kind("secret", "a value named secret (client_secret…)", _OURS),
    Kind("secret-key", "a value named as a secret key (SECRET_KEY, SK…)", _OURS),
    Kind("access-key-id", "a value named as an access key (ACCESS_KEY_ID, AK…)", _OURS),
    Kind("api-key", "a value named as an API key (api_key, X-API-Key…)", _OURS),
    Kind("token", "a value named as a token (token:, access_token=, --token…)", _OURS),
    Kind("credential", "a value named credential(s)", _OURS),
    Kind("basic-auth", "HTTP Basic credentials (Authorization: Basic, a docker auth)", _OURS),
    Kind("bearer-token", "an HTTP bearer token", _OURS),
    Kind("authorization", "another Authorization header value", _OURS),
    Kind("cookie", "a Cookie / Set-Cookie header value", _OURS),
    Kind("url-password", "the password of user:password@ in a URL", _OURS),
    Kind("email", "an e-mail address", _OURS),
    Kind("ip", "an IPv4 address (not a case's own host name)", _OURS),
    Kind("ipv6", "an IPv6 address", _OURS),
)

BY_NAME: Final = {kind.name: kind for kind in KINDS}
