"""Planted secrets never leave culprit: every format of the redaction corpus, planted on the
cited first-error line, on context lines and in signature captures of the example bundle,
is in none of report.md, findings.json, report.html, the modelarts-zh report, any member of
the handoff (Parquet decoded) or any dashboard page but the SQL box's; the look-alikes a
reader needs verbatim on the cited line stay verbatim. With --no-redact the secrets are
there, which shows the check can fail."""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from pathlib import Path
from urllib.parse import quote

import polars as pl
import pytest
import zstandard
from starlette.testclient import TestClient

from analyzer import api
from analyzer.serve.app import create_app
from tests.conftest import EXAMPLE
from tests.redact.corpus import SECRETS

#: Readable text a reader needs verbatim, planted on the cited first-error line.
VERBATIM = ("c10::Error", "c10::DistBackendError", "libtpu 0.0.17.1", "ckpt@step1000.tar")
#: Formats whose line must be a row of its own (the whole message is the secret).
_OWN_ROW = {"PEM body line on its own row", "last PEM line on its own row"}
#: Formats that take the rest of their text with them (a cookie header, a PEM block cut short).
_LAST = {"Cookie header", "EC key, no END"}

GCLOUD = Path("gcloud/node-and-system-events.json")
JOURNAL = Path("nodes/gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-p4vd/kubelet.journal.txt")
KUBECTL = Path("kubectl/llm-pretrain-slice-0-3-h3j9d.log")
FIRST_ERROR = f"{GCLOUD.as_posix()}:63"
#: A private key a program printed line by line: one row per line.
PEM_ROWS = (
    "-----BEGIN PRIVATE KEY-----",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "Gk2FWmEIfY3zc+8Qx=",
    "-----END PRIVATE KEY-----",
)


def _inline() -> list[str]:
    return [
        s.line
        for s in SECRETS
        if "\n" not in s.line and s.format not in _OWN_ROW and s.format not in _LAST
    ]


def _trailing() -> list[str]:
    """Multi-line secrets, then the ones that take the rest of the text."""
    multi = [s.line for s in SECRETS if "\n" in s.line and s.format not in _LAST]
    return multi + [s.line for s in SECRETS if s.format in _LAST]


def _plant(root: Path) -> None:
    """Every corpus secret into the example bundle: on the first error's line (inside its
    ``status`` capture) with the look-alikes, and on context rows of two other hosts (a
    kernel line whose ``detail`` is captured, the workload's last lines, a PEM key printed
    line by line)."""
    events = json.loads((root / GCLOUD).read_text(encoding="utf-8"))
    for event in events:
        if event.get("protoPayload", {}).get("methodName") == "compute.instances.hostError":
            status = event["protoPayload"]["status"]
            first_line = " ; ".join([status["message"], *VERBATIM, *_inline()])
            status["message"] = "\n".join([first_line, *_trailing()])
    (root / GCLOUD).write_text(json.dumps(events, indent=2) + "\n", encoding="utf-8")

    journal = (root / JOURNAL).read_text(encoding="utf-8").splitlines()
    mce = next(i for i, line in enumerate(journal) if "mce: [Hardware Error]" in line)
    planted = [f"{journal[mce]} {line}" for line in [*_inline(), *_trailing()] if "\n" not in line]
    journal[mce + 1 : mce + 1] = planted
    (root / JOURNAL).write_text("\n".join(journal) + "\n", encoding="utf-8")

    kubectl = (root / KUBECTL).read_text(encoding="utf-8").splitlines()
    own_rows = [s.line for s in SECRETS if s.format in _OWN_ROW]
    # Just after the first error (so among the handoff's context rows and the rows the
    # host's page shows before its first error), then after that error.
    early = [f"2026-11-29T18:20:48.470000000Z {line}" for line in [*PEM_ROWS, *own_rows]]
    late = [f"2026-11-29T18:21:03.000000000Z {line}" for line in _inline()]
    (root / KUBECTL).write_text("\n".join([*early, *kubectl, *late]) + "\n", encoding="utf-8")


#: What must not leave: each secret, and each line of the PEM printed row by row.
def _secrets() -> dict[str, str]:
    found = {s.format: s.secret for s in SECRETS}
    found |= {f"PEM row {n}": line for n, line in enumerate(PEM_ROWS[1:-1], 1)}
    return found


def _leaks(text: str) -> list[str]:
    return [name for name, secret in _secrets().items() if secret in text]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("secrets") / "tpu-heartbeat"
    shutil.copytree(EXAMPLE, root)
    _plant(root)
    return root


@pytest.fixture(scope="module")
def analyzed(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("analyzed") / "incident"
    api.analyze([bundle], out, api.AnalyzeSettings(jobs=1, html=True))
    return out


def _handoff_texts(archive: Path) -> dict[str, str]:
    """Every member of a handoff as text, Parquet decoded."""
    with archive.open("rb") as raw:
        data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read()
    texts = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as members:
        for info in members:
            handle = members.extractfile(info)
            assert handle is not None
            content = handle.read()
            if info.name.endswith(".parquet"):
                frame = pl.read_parquet(io.BytesIO(content))
                texts[info.name] = frame.cast(dict.fromkeys(frame.columns, pl.String)).write_csv()
            else:
                texts[info.name] = content.decode("utf-8", errors="replace")
    return texts


def test_the_planted_rows_are_the_evidence(bundle: Path, tmp_path: Path) -> None:
    """The first error is still the planted line, and without redaction every planted
    secret reaches an output: the checks below can fail."""
    out = tmp_path / "raw"
    result = api.analyze([bundle], out, api.AnalyzeSettings(jobs=1, html=True, redact=False))
    first = result.findings.verdict.first_error
    assert first is not None
    assert f"{first.citation.path}:{first.citation.line}" == FIRST_ERROR
    texts = [(out / name).read_text(encoding="utf-8") for name in ("report.md", "findings.json")]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert set(_leaks(texts[0])) >= {s.format for s in SECRETS if s.format not in _OWN_ROW}
    assert _leaks(page)
    rows = pl.read_parquet(out / "case" / "rows")["message"].str.join("\n").item()
    assert set(_leaks(rows)) == set(_secrets())
    captures = pl.read_parquet(out / "case" / "matches.parquet")["captures"].str.join("\n")
    assert len(_leaks(captures.item())) >= len(_inline())


def test_no_report_leaks_and_the_cited_line_stays_readable(analyzed: Path, tmp_path: Path) -> None:
    for name in ("report.md", "findings.json", "report.html"):
        text = (analyzed / name).read_text(encoding="utf-8")
        assert _leaks(text) == [], name
        assert "[REDACTED:" in text, name
    report = (analyzed / "report.md").read_text(encoding="utf-8")
    findings = api.diagnose_case(analyzed / "case")
    first = findings.verdict.first_error
    assert first is not None and f"{first.citation.path}:{first.citation.line}" == FIRST_ERROR
    for text in VERBATIM:
        assert text in first.message and text in report, text
    zh = api.report(
        analyzed / "case", "md", tmp_path / "zh", api.AnalyzeSettings(template="modelarts-zh")
    )
    assert _leaks(zh.read_text(encoding="utf-8")) == []


def test_no_handoff_member_leaks(analyzed: Path, tmp_path: Path) -> None:
    archive = tmp_path / "incident.tar.zst"
    api.handoff([analyzed / "case"], archive)
    texts = _handoff_texts(archive)
    assert {"case/matches.parquet", "case/rows/evidence.parquet", "report.md"} <= set(texts)
    for name, text in texts.items():
        assert _leaks(text) == [], name
    # The key printed line by line is among the packed rows, redacted.
    assert "[REDACTED:key-material]" in texts["case/rows/evidence.parquet"]
    # The redacted captures still resolve: the handoff re-diagnoses to the same verdict.
    again = api.analyze([archive], tmp_path / "elsewhere")
    assert again.findings.verdict.culprit.host is not None
    assert api.verdict_key(again.findings) == api.verdict_key(api.diagnose_case(analyzed / "case"))


def test_no_dashboard_page_but_the_sql_box_leaks(analyzed: Path) -> None:
    case = api.load_case(analyzed / "case")
    hosts = api.query(case.path, "SELECT DISTINCT host FROM rows WHERE host IS NOT NULL")
    names = [str(h) for h in hosts.column("host").to_pylist()]
    assert len(names) >= 4
    with TestClient(create_app(analyzed)) as client:
        case_id = "case"
        pages = ["/", f"/case/{case_id}/report", f"/case/{case_id}/hosts"]
        pages += [f"/case/{case_id}/hosts/{quote(name, safe='')}" for name in names]
        shown = []
        for page in pages:
            response = client.get(page)
            assert response.status_code == 200, page
            assert _leaks(response.text) == [], page
            shown.append(response.text)
        # The host pages do show the planted rows (redacted).
        assert "[REDACTED:key-material]" in "".join(shown)
        # The SQL box shows the case as stored, and says so.
        form = client.get(f"/case/{case_id}/sql").text
        token = re.search(r'name="token" value="([^"]+)"', form)
        assert token is not None
        raw = client.post(
            f"/case/{case_id}/sql", data={"q": "SELECT message FROM rows", "token": token[1]}
        )
        assert raw.status_code == 200
        assert _leaks(raw.text) and "not redacted" in raw.text
