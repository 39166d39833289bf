"""Shared fixtures: sample locations, an ingest helper and the optional loghub data."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from analyzer import api
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR, Truth

TESTS = Path(__file__).parent
SAMPLES = TESTS / "samples"
REPO = TESTS.parent
EXAMPLE = REPO / "examples" / "tpu-heartbeat"
LOGHUB = REPO.parent / "shared" / "data" / "loghub"
#: Screenshots of the browser tests (kept after the run; ignored by git).
ARTIFACTS = TESTS / "artifacts"


def pytest_configure(config: pytest.Config) -> None:
    # Parsed signature files are cached on disk (analyzer.signatures.parsed); the suite keeps
    # its own cache instead of the user's, for every process it starts too.
    os.environ["CULPRIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="culprit-test-cache-")


@pytest.fixture
def ingest_case(tmp_path: Path) -> Callable[..., Path]:
    """Ingest inputs into a fresh case directory and return its path."""
    counter = iter(range(1000))

    def run(inputs: Sequence[Path] | Path, **kwargs: object) -> Path:
        paths = [inputs] if isinstance(inputs, Path) else list(inputs)
        out = tmp_path / f"case{next(counter)}"
        api.ingest(paths, out, **kwargs)  # type: ignore[arg-type]
        return out

    return run


@pytest.fixture
def loghub() -> Path:
    """The loghub 2k samples next to the repository, or skip."""
    if not LOGHUB.is_dir():
        pytest.skip(f"loghub samples not found at {LOGHUB} (they live in ../shared)")
    return LOGHUB


def small(hosts: int = 8, seed: int = 0) -> Options:
    """Generator options small enough for the suite: 10 minutes at 12 background lines per
    host and minute."""
    return Options(hosts=hosts, seed=seed, minutes=10.0, rate=12.0)


@dataclass(frozen=True)
class Generated:
    """A generated scenario (seed 1, :func:`small`) and its ingested case."""

    out: Path
    truth: Truth
    case: Path
    ingest: api.IngestResult


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], Generated]:
    """Generate and ingest a scenario once per session, however many tests look at it."""
    cache: dict[tuple[str, int], Generated] = {}

    def get(name: str, hosts: int) -> Generated:
        if (name, hosts) not in cache:
            root = tmp_path_factory.mktemp(f"{name}-{hosts}")
            truth = generate(name, small(hosts, 1), root / "gen")
            result = api.ingest([root / "gen" / BUNDLE_DIR], root / "case")
            cache[name, hosts] = Generated(root / "gen", truth, root / "case", result)
        return cache[name, hosts]

    return get


# -- a real browser (Debian's chromium, driven by Playwright) ----------------------------------


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless chromium; the tests that need it skip, with the reason, when it is missing
    (`.ci/run` installs it: apt-get install chromium)."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"
    )
    executable = _chromium()
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@dataclass
class Page:
    """A browser page and the requests it was refused (everything but ``allowed``)."""

    page: Any
    blocked: list[str]

    def screenshot(self, name: str) -> Path:
        """Save a full-page screenshot as a test artifact."""
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def offline_page(browser: Any) -> Iterator[Callable[..., Page]]:
    """A new page that may load only ``file://`` URLs and the given origins; every other
    request is aborted and recorded in ``blocked``."""
    opened: list[Any] = []

    def make(*allowed: str) -> Page:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        opened.append(context)
        page = context.new_page()
        blocked: list[str] = []

        def route(request_route: Any) -> None:
            url = request_route.request.url
            if url.startswith(("file://", "data:", "about:", *allowed)):
                request_route.continue_()
            else:
                blocked.append(url)
                request_route.abort()

        page.route("**/*", route)
        return Page(page, blocked)

    yield make
    for context in opened:
        context.close()


def serious_violations(page: Any, impacts: tuple[str, ...] = ("serious", "critical")) -> list[str]:
    """axe-core's violations of the given ``impacts`` (serious and critical by default) on
    ``page`` as it stands, one line each (rule, impact, first offending element). axe.min.js comes with the
    ``axe-playwright-python`` package of the test extra and is injected from disk: no network."""
    axe = pytest.importorskip(
        "axe_playwright_python.sync_playwright",
        reason="axe-playwright-python is not installed (pip install -e '.[test]')",
    )
    results = axe.Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']} {v['help']}"
        for v in results.response["violations"]
        if v["impact"] in impacts
    ]
