"""The redaction corpus: fake, format-realistic secrets (one per format, each with the kind
its redaction must name) and look-alikes that must come out untouched. Every value here was
made up for this file; none is, or was, a live credential."""

from __future__ import annotations

from typing import NamedTuple


class Secret(NamedTuple):
    format: str
    line: str
    #: The part of ``line`` that must not survive.
    secret: str
    kind: str


class LookAlike(NamedTuple):
    what: str
    line: str


_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ0cmFpbmVyIiwiaWF0IjoxNzk1OTc3MjkwfQ"
    ".Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nT25seTEyMzQ1Ng"
)
# {"alg":"RS256","kid":"k1"} . {"iss":"kubernetes/serviceaccount",
# "kubernetes.io/serviceaccount/namespace":"default",...} . signature
_K8S_TOKEN = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwia3"
    "ViZXJuZXRlcy5pby9zZXJ2aWNlYWNjb3VudC9uYW1lc3BhY2UiOiJkZWZhdWx0Iiwic3ViIjoic3lzdGVtOnNl"
    "cnZpY2VhY2NvdW50OmRlZmF1bHQ6dHJhaW5lciJ9.ZmFrZVNpZ25hdHVyZUJ5dGVzRm9yVGVzdHNPbmx5X2F"
)
_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7fakeKEYmaterial9"

SECRETS: tuple[Secret, ...] = (
    # AWS
    Secret(
        "aws access key id",
        "using key AKIA4HX2LQ7PZ3KMV9TB for s3",
        "AKIA4HX2LQ7PZ3KMV9TB",
        "aws-access-key-id",
    ),
    Secret(
        "aws temporary key id",
        "assumed role: ASIAY34FZKBOKMUTVV7A",
        "ASIAY34FZKBOKMUTVV7A",
        "aws-access-key-id",
    ),
    Secret(
        "AWS_ACCESS_KEY_ID=",
        "env AWS_ACCESS_KEY_ID=AKIAQ3EGTCNQ5XRZ2WLM",
        "AKIAQ3EGTCNQ5XRZ2WLM",
        "aws-access-key-id",
    ),
    Secret(
        "AWS_SECRET_ACCESS_KEY=",
        f"env AWS_SECRET_ACCESS_KEY={_AWS_SECRET}",
        _AWS_SECRET,
        "aws-secret-key",
    ),
    Secret(
        "aws_secret_access_key =",
        "aws_secret_access_key = Zx9Tq2Lm8Rv4Np6Ks1Jw3Hy5Gb7Fd0Cz2Xa4Vb6N",
        "Zx9Tq2Lm8Rv4Np6Ks1Jw3Hy5Gb7Fd0Cz2Xa4Vb6N",
        "aws-secret-key",
    ),
    Secret(
        "boto SecretAccessKey JSON",
        '{"AccessKeyId": "ASIA", "SecretAccessKey": "Pq7Wr9Ts2Uv4Xy6Za8Bc0De1Fg3Hi5Jk7Lm9No2Pq"}',
        "Pq7Wr9Ts2Uv4Xy6Za8Bc0De1Fg3Hi5Jk7Lm9No2Pq",
        "secret-key",
    ),
    Secret(
        "AWS_SESSION_TOKEN=",
        "AWS_SESSION_TOKEN=FwoGZXIvYXdzEJr//////////wEaDHx7Yk3jW9Qp2LmN8SKvAf",
        "FwoGZXIvYXdzEJr//////////wEaDHx7Yk3jW9Qp2LmN8SKvAf",
        "aws-session-token",
    ),
    Secret(
        "S3 presigned signature",
        "GET https://bkt.s3.amazonaws.com/ckpt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=9f3c2a7b1e5d4c8a0b6e2f1d3c5a7b9e0f2d4c6a8b1e3d5f7a9c2b4d6e8f0a1c",
        "9f3c2a7b1e5d4c8a0b6e2f1d3c5a7b9e0f2d4c6a8b1e3d5f7a9c2b4d6e8f0a1c",
        "aws-signature",
    ),
    Secret(
        "S3 presigned security token",
        "url ...&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEHwaCXVzLWVhc3QtMSJHMEUCIQ&x=1",
        "IQoJb3JpZ2luX2VjEHwaCXVzLWVhc3QtMSJHMEUCIQ",
        "aws-session-token",
    ),
    # GitHub, GitLab
    Secret(
        "github classic token",
        "git clone https://x:ghp_4fK9sT2vQ8mN1pL6rW3yZ7aB5cD0eF2gH4jK@github.com/o/r",
        "ghp_4fK9sT2vQ8mN1pL6rW3yZ7aB5cD0eF2gH4jK",
        "github-token",
    ),
    Secret(
        "github token in env",
        "GH_TOKEN set: ghp_Z8xW2vU4tS6rQ8pO0nM2lK4jI6hG8fE0dC2b",
        "ghp_Z8xW2vU4tS6rQ8pO0nM2lK4jI6hG8fE0dC2b",
        "github-token",
    ),
    Secret(
        "github oauth token",
        "token gho_16C7e42F292c6912E7710c838347Ae178B4a used",
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "github-token",
    ),
    Secret(
        "github server token",
        "installation token ghs_9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX",
        "ghs_9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX",
        "github-token",
    ),
    Secret(
        "github fine-grained PAT",
        "auth with github_pat_11AKQ7FZA0xT8mZ3pQ9wLr_4bN6cV8xZ1aS3dF5gH7jK9lQ2wE4rT6yU8iO0pA2sD4fG6hJ8kL0zX2c",
        "github_pat_11AKQ7FZA0xT8mZ3pQ9wLr_4bN6cV8xZ1aS3dF5gH7jK9lQ2wE4rT6yU8iO0pA2sD4fG6hJ8kL0zX2c",
        "github-token",
    ),
    Secret(
        "gitlab PAT",
        "CI used glpat-Xy9zA8bC7dE6fG5hI4jK failing",
        "glpat-Xy9zA8bC7dE6fG5hI4jK",
        "gitlab-token",
    ),
    # Hugging Face, W&B, OpenAI, Anthropic
    Secret(
        "hugging face token",
        "hub login 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 ok",
        "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",
        "hf-token",
    ),
    Secret(
        "HF_TOKEN=",
        "HF_TOKEN=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",
        "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",
        "hf-token",
    ),
    Secret(
        "WANDB_API_KEY=",
        "WANDB_API_KEY=3f9a2c7e1b5d4a8c0e6f2b1d3a5c7e9f0b2d4a6c",
        "3f9a2c7e1b5d4a8c0e6f2b1d3a5c7e9f0b2d4a6c",
        "wandb-api-key",
    ),
    Secret(
        "wandb.login(key=)",
        'wandb.login(key="8c1e5a9d3f7b2c6e0a4d8f2b6c0e4a8d2f6b0c4e")',
        "8c1e5a9d3f7b2c6e0a4d8f2b6c0e4a8d2f6b0c4e",
        "wandb-api-key",
    ),
    Secret(
        "openai project key",
        "OpenAI client sk-proj-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5Kl7No9Qr1Tu3Wx5Za7 init",
        "sk-proj-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5Kl7No9Qr1Tu3Wx5Za7",
        "openai-key",
    ),
    Secret(
        "openai legacy key",
        "key sk-4vT9bN2mQ8wE6rY1uI3oP5aS7dF9gH0jK2lZ4xC6vB8nM1qW rejected",
        "sk-4vT9bN2mQ8wE6rY1uI3oP5aS7dF9gH0jK2lZ4xC6vB8nM1qW",
        "openai-key",
    ),
    Secret(
        "openai key with T3BlbkFJ",
        "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",
        "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",
        "openai-key",
    ),
    Secret(
        "anthropic key",
        "ANTHROPIC key sk-ant-api03-Zx8Cv7Bn6Mq5Wr4Ty3Ui2Op1As0Df9Gh8Jk7Lz",
        "sk-ant-api03-Zx8Cv7Bn6Mq5Wr4Ty3Ui2Op1As0Df9Gh8Jk7Lz",
        "anthropic-key",
    ),
    # Slack and other services (detect-secrets' plugins)
    Secret(
        "slack bot token",
        "notify via xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack-token",
    ),
    Secret(
        "slack user token",
        "xoxp-210987654321-109876543210-112233445566-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "xoxp-210987654321-109876543210-112233445566-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "slack-token",
    ),
    Secret(
        "slack webhook",
        "POST https://hooks.slack.com/services/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 failed",
        "https://hooks.slack.com/services/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",
        "slack-webhook",
    ),
    Secret(
        "stripe live key",
        "billing sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "stripe-key",
    ),
    Secret(
        "sendgrid key",
        "mail 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",
        "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",
        "sendgrid-key",
    ),
    Secret(
        "twilio api key",
        "sms SK2a7f1c9e3b5d4a8c0e6f2b1d3a5c7e9f via",
        "SK2a7f1c9e3b5d4a8c0e6f2b1d3a5c7e9f",
        "twilio-key",
    ),
    Secret(
        "pypi token",
        "upload pypi-AgEIcHlwaS5vcmcCJGE4ZjY3NjBhLTk4ZjAtNGI1Zi1hY2E3LWRkYjkwNjFmNWQ4OQACJXsicGVybWlzc2lvbnMiOiAidXNlciIsICJ2ZXJzaW9uIjogMX0",
        "pypi-AgEIcHlwaS5vcmcCJGE4ZjY3NjBhLTk4ZjAtNGI1Zi1hY2E3LWRkYjkwNjFmNWQ4OQACJXsicGVybWlzc2lvbnMiOiAidXNlciIsICJ2ZXJzaW9uIjogMX0",
        "pypi-token",
    ),
    Secret(
        "npm token",
        "registry token npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 ok",
        "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "npm-token",
    ),
    Secret(
        "azure storage key",
        "DefaultEndpointsProtocol=https;AccountName=ckpt;AccountKey="
        + "Zm9vYmFyYmF6cXV4" * 5
        + "Zm9vYmE=;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4" * 5 + "Zm9vYmE=",
        "azure-storage-key",
    ),
    Secret(
        "azure SAS signature",
        "GET https://acct.blob.core.windows.net/c/x?sv=2022-11-02&sig=Qx7%2Bk9Lm2Np4Rs6Tu8Vw0Yz%3D&se=2026",
        "Qx7%2Bk9Lm2Np4Rs6Tu8Vw0Yz%3D",
        "azure-sas-signature",
    ),
    Secret(
        "databricks token",
        "DATABRICKS host=x dapi0123456789abcdef0123456789abcdef",
        "dapi0123456789abcdef0123456789abcdef",
        "databricks-token",
    ),
    Secret(
        "docker hub PAT",
        "docker login -u bot -p dckr_pat_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk",
        "dckr_pat_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk",
        "docker-token",
    ),
    # JWTs, Kubernetes
    Secret("JWT", f"session {_JWT} expired", _JWT, "jwt"),
    Secret(
        "kubernetes service-account token",
        f"mounted token {_K8S_TOKEN}",
        _K8S_TOKEN,
        "kubernetes-token",
    ),
    Secret(
        "kubeconfig client-key-data",
        "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        "kubeconfig-client-key",
    ),
    Secret(
        "kubeadm bootstrap token",
        "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef",
        "abcdef.0123456789abcdef",
        "token",
    ),
    Secret(
        "kubeconfig user token",
        "  token: 8Zx7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7Cb6",
        "8Zx7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7Cb6",
        "token",
    ),
    # Google Cloud
    Secret(
        "google api key",
        "maps key=AIzaSyD4fK9sT2vQ8mN1pL6rW3yZ7aB5cD0eF2g",
        "AIzaSyD4fK9sT2vQ8mN1pL6rW3yZ7aB5cD0eF2g",
        "gcp-api-key",
    ),
    Secret(
        "google oauth access token",
        "metadata token ya29.a0AfB_byC3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t",
        "ya29.a0AfB_byC3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t",
        "gcp-oauth-token",
    ),
    Secret(
        "google refresh token",
        "stored 1//0gLq8Vx2Zt4Yw6Ub8Sd0Fe2Hg4Jk6Lm8Np0Qr2",
        "1//0gLq8Vx2Zt4Yw6Ub8Sd0Fe2Hg4Jk6Lm8Np0Qr2",
        "gcp-refresh-token",
    ),
    Secret(
        "google oauth client secret",
        "client 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t",
        "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t",
        "gcp-client-secret",
    ),
    Secret(
        "service-account private_key_id",
        '"private_key_id": "4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a",',
        "4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
        "gcp-sa-key-id",
    ),
    Secret(
        "service-account private_key",
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + _PEM_BODY
        + '\\n-----END PRIVATE KEY-----\\n"',
        _PEM_BODY,
        "private-key",
    ),
    Secret(
        "GCS X-Goog-Signature",
        "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=5a1b9c3d7e2f4a6b8c0d1e3f5a7b9c2d4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b",
        "5a1b9c3d7e2f4a6b8c0d1e3f5a7b9c2d4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b",
        "gcs-signature",
    ),
    # Huawei Cloud / OBS / ModelArts
    Secret(
        "HUAWEICLOUD_SDK_AK=",
        "export HUAWEICLOUD_SDK_AK=HPUAQ4Z7XK2MVR9TL3BW",
        "HPUAQ4Z7XK2MVR9TL3BW",
        "huaweicloud-ak",
    ),
    Secret(
        "HUAWEICLOUD_SDK_SK=",
        "export HUAWEICLOUD_SDK_SK=Qm8Zt2Xv6Lp4Rk9Ws1Ny7Hb3Jc5Df0Ge2Ua4Ti6Ok",
        "Qm8Zt2Xv6Lp4Rk9Ws1Ny7Hb3Jc5Df0Ge2Ua4Ti6Ok",
        "huaweicloud-sk",
    ),
    Secret(
        "OBS query Signature=",
        "GET https://bkt.obs.cn-north-4.myhuaweicloud.com/ckpt?AccessKeyId=HPUAQ4Z7XK2MVR9TL3BW&Expires=1795977290&Signature=Zx4%2Bk9Lm2Np4Rs6Tu8Vw0%3D",
        "Zx4%2Bk9Lm2Np4Rs6Tu8Vw0%3D",
        "obs-signature",
    ),
    Secret(
        "OBS Authorization header",
        "Authorization: OBS HPUAQ4Z7XK2MVR9TL3BW:Zk3Xn7Wp1Ty5Qv9Lr2Ms6Bo8Hd0=",
        "HPUAQ4Z7XK2MVR9TL3BW:Zk3Xn7Wp1Ty5Qv9Lr2Ms6Bo8Hd0=",
        "obs-signature",
    ),
    Secret(
        "IAM X-Auth-Token",
        "X-Auth-Token: MIIZPwYJKoZIhvcNAQcCoIIZMDCCGSwCAQExDTALBglghkgBZQMEAgEwgheNBgkqhk",
        "MIIZPwYJKoZIhvcNAQcCoIIZMDCCGSwCAQExDTALBglghkgBZQMEAgEwgheNBgkqhk",
        "token",
    ),
    # Keywords, flags, headers
    Secret(
        "password=",
        "mysql connect user=train password=Tr4in!ng#2026 host=db",
        "Tr4in!ng#2026",
        "password",
    ),
    Secret(
        "--password", "exec trainctl --password Hunter2Pass --user ops", "Hunter2Pass", "password"
    ),
    Secret(
        '"password": JSON',
        '{"user": "ops", "password": "c0rrect horse"}',
        "c0rrect horse",
        "password",
    ),
    Secret("PGPASSWORD=", "env PGPASSWORD=pgS3cretValue", "pgS3cretValue", "password"),
    Secret("token: ", "config token: 7Hq2Wm9Xr4Lt8Vz3Kc6Nb1", "7Hq2Wm9Xr4Lt8Vz3Kc6Nb1", "token"),
    Secret(
        "access_token= in a URL",
        "GET /api/v1/runs?access_token=q8Zt2Xv6Lp4Rk9Ws1Ny7&limit=5",
        "q8Zt2Xv6Lp4Rk9Ws1Ny7",
        "token",
    ),
    Secret(
        "client_secret=",
        "oauth client_secret=Sx8Cv7Bn6Mq5Wr4Ty3Ui2",
        "Sx8Cv7Bn6Mq5Wr4Ty3Ui2",
        "secret",
    ),
    Secret("api_key=", "provider api_key=Kd93mXq72LpZ81vWt", "Kd93mXq72LpZ81vWt", "api-key"),
    Secret(
        "X-API-Key header", "X-API-Key: 5fJ2kL9pQ3rT7vW1xZ4b", "5fJ2kL9pQ3rT7vW1xZ4b", "api-key"
    ),
    Secret(
        "Authorization: Bearer",
        "Authorization: Bearer abcDEF123456789xyzTOKEN",
        "abcDEF123456789xyzTOKEN",
        "bearer-token",
    ),
    Secret(
        "Authorization: Basic",
        "Authorization: Basic dHJhaW5lcjpIdW50ZXIyUGFzcw==",
        "dHJhaW5lcjpIdW50ZXIyUGFzcw==",
        "basic-auth",
    ),
    Secret(
        "Cookie header",
        "Cookie: session=8f2a9c1e7b3d; csrftoken=Zx9Ty8",
        "session=8f2a9c1e7b3d; csrftoken=Zx9Ty8",
        "cookie",
    ),
    Secret(
        "docker config auth",
        '{"auths": {"registry.example.com": {"auth": "dHJhaW5lcjpzM2NyZXRwYXNz"}}}',
        "dHJhaW5lcjpzM2NyZXRwYXNz",
        "basic-auth",
    ),
    # URLs, addresses, keys
    Secret(
        "URL password",
        "upload https://bob:hunter2pass@storage.example.com/ckpt",
        "hunter2pass",
        "url-password",
    ),
    Secret(
        "redis URL without user", "connect redis://:r3disPw@cache:6379/0", "r3disPw", "url-password"
    ),
    Secret(
        "postgres DSN",
        "DATABASE_URL=postgresql://admin:S3cr3tDb@db.internal:5432/runs",
        "S3cr3tDb",
        "url-password",
    ),
    Secret("email", "paged alice.smith@example.com about it", "alice.smith@example.com", "email"),
    Secret("IPv4 with port", "connecting to 10.128.7.42:8476", "10.128.7.42", "ip"),
    Secret(
        "IPv6",
        "peer [fe80::1ff:fe23:4567:890a]:8477 unreachable",
        "fe80::1ff:fe23:4567:890a",
        "ipv6",
    ),
    Secret(
        "RSA private key block",
        "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY + "\n-----END RSA PRIVATE KEY-----",
        _PEM_BODY,
        "private-key",
    ),
    Secret(
        "OpenSSH private key block",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "private-key",
    ),
    Secret(
        "EC key, no END",
        "-----BEGIN EC PRIVATE KEY-----MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5ofAKeFakeKeyOnly",
        "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5ofAKeFakeKeyOnly",
        "private-key",
    ),
    Secret("PEM body line on its own row", _PEM_BODY, _PEM_BODY, "key-material"),
    Secret(
        "last PEM line on its own row",
        "2026-11-29T18:21:02.5Z Gk2FWmEIfY3zc+8Qx=",
        "Gk2FWmEIfY3zc+8Qx=",
        "key-material",
    ),
)

LOOKALIKES: tuple[LookAlike, ...] = (
    # C++ namespaces and error classes
    LookAlike("c10::Error", "RuntimeError: c10::Error: CUDA error: an illegal memory access"),
    LookAlike(
        "c10::DistBackendError",
        "torch.distributed.DistBackendError: c10::DistBackendError: NCCL error",
    ),
    LookAlike(
        "c10d::ProcessGroupNCCL",
        "[c10d::ProcessGroupNCCL] Watchdog caught collective operation timeout",
    ),
    LookAlike("torch_npu c10_npu", "c10_npu::acl::AclrtSynchronizeDeviceWithTimeout failed"),
    LookAlike("xla:: status", "xla::XlaRuntimeError: INTERNAL: Core halted unexpectedly"),
    LookAlike("absl::Status", "absl::StatusOr<std::unique_ptr<xla::PjRtClient>> failed"),
    LookAlike(
        "std::runtime_error", "terminate called after throwing an instance of 'std::runtime_error'"
    ),
    LookAlike("at::cuda", "at::cuda::blas::gemm<float> failed with CUBLAS_STATUS_EXECUTION_FAILED"),
    # versions
    LookAlike("libtpu four-part version", "libtpu 0.0.17.1 initialized"),
    LookAlike("CANN four-part version", "CANN 7.0.0.1 runtime loaded"),
    LookAlike("pinned pip version", "requirement torch==2.5.1.0 satisfied"),
    LookAlike("v-prefixed version", "firmware v7.0.0.1 on device 3"),
    LookAlike("version: field", "driver version: 23.0.3.1"),
    LookAlike("version with suffix", "jaxlib 0.4.35.1-dev20260101"),
    LookAlike("three-part version", "NVIDIA driver 535.104.05, CUDA 12.4"),
    LookAlike("GKE version", "node version v1.29.4-gke.1043002"),
    LookAlike("Ascend package version", "Ascend-cann-toolkit_8.0.RC2.1_linux-aarch64.run"),
    LookAlike("plus-local version", "torch 2.5.1.0+cu124"),
    # file@names and SSH remotes
    LookAlike("checkpoint at a step", "restoring ckpt@step1000.tar from gs://bucket/run"),
    LookAlike("model at an epoch", "saved model@epoch3.safetensors"),
    LookAlike("git SSH remote", "fetching git@github.com:org/trainer.git"),
    LookAlike("npm-style package@version", "installing pkg@1.2.3 and torch@2.5"),
    LookAlike(
        "image digest",
        "pulled gcr.io/proj/trainer@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    ),
    # hex ids, digests, uuids
    LookAlike(
        "sha256 digest", "bundle 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
    ),
    LookAlike(
        "sha256 digest alone", "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
    ),
    LookAlike("git commit", "built from commit 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    LookAlike("pointer", "Segmentation fault at address 0x7f3a2b1c4d50"),
    LookAlike("uuid", "job d041fedb-a35d-4649-a1b8-edc28768373d started"),
    LookAlike("trace id", "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7"),
    LookAlike(
        "insert id",
        "insertId qnwer3e38dfz operation systemevent-1795977290116-5e2aac8c11261-3553f149-42656705",
    ),
    LookAlike("instance id", "instance_id 1437928523886234104 stopped"),
    # pods, nodes, chips, tasks
    LookAlike("pod name", "pod llm-pretrain-slice-0-3-h3j9d OOMKilled"),
    LookAlike("GKE node name", "node gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-p4vd NotReady"),
    LookAlike("EC2 node name", "node ip-10-0-12-34.ec2.internal"),
    LookAlike("ModelArts worker", "modelarts-job-d041fedb-worker-3 exited"),
    LookAlike("TPU chip id", "!!!! FATAL ERROR !!!! for [/dev/accel0 tpu3860:pe3:0]"),
    LookAlike("JAX task name", "/job:jax_worker/replica:0/task:2 heartbeat timeout"),
    LookAlike("PCI bus id", "GPU 00000000:3B:00.0 fell off the bus"),
    LookAlike("MAC address", "eth0 link 42:01:0a:80:00:2a up"),
    LookAlike(
        "klog header",
        "E1129 18:21:02.500000    1233 coordination_service_agent.cc:332] Polled an error",
    ),
    # Ascend
    LookAlike("Ascend error code", "EI0002: The wait execution of the Notify register times out"),
    LookAlike(
        "Ascend retCode",
        "rtStreamSynchronize failed, retCode=0x91, [the model stream execute failed]",
    ),
    LookAlike("HCCL rank", "remote rank [31] timeout, EE9999 inner error"),
    # words that name secrets without being them
    LookAlike("token counts", "step 1000 tokens_per_sec: 123456.7 max_tokens=4096 num_tokens=2048"),
    LookAlike("token count", "token_count=8192 token: 42"),
    LookAlike("tokenizer path", "tokenizer: /models/llama/tokenizer.model"),
    LookAlike("password auth failure", 'FATAL: password authentication failed for user "trainer"'),
    LookAlike("password file flag", "--password-file=/etc/secret/pw --api-key-file /run/key"),
    LookAlike("placeholders", "password=*** token=<redacted> api_key=None secret: ${SECRET}"),
    LookAlike(
        "k8s secret names",
        'MountVolume.SetUp failed for volume "default-token-abc12": secret "regcred" not found',
    ),
    LookAlike("secret_name", "secret_name: trainer-credentials"),
    LookAlike("missing key", "Missing key(s) in state_dict: model.layers.0.weight"),
    LookAlike("bearer prose", "request rejected: Bearer authentication failed"),
    LookAlike(
        "URL without password", "GET https://storage.googleapis.com/bucket/obj gs://bucket/path"
    ),
    LookAlike("time and ports", "18:21:02.500000 localhost:8471 [::1]:8080"),
    LookAlike("python slice", "x[::2] and y[1::3]"),
    LookAlike("file path", "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py"),
    LookAlike("tensor shape", "f32[8,128,4096]{2,1,0:T(8,128)} exceeds HBM"),
    LookAlike("camel-case word alone", "CheckpointManagerInitializedSuccessfully"),
    LookAlike("base64-ish id", "run id 3q2Xt7 resumed"),
    LookAlike("SDK key id name", "HUAWEICLOUD_SDK_AK is not set"),
)
