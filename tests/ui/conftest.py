"""Real-browser fixtures: a `panel serve reviewer` subprocess and Debian's Chromium via Playwright.

`playwright install` cannot download browsers here; we launch the system `chromium` binary. Where it
is missing the browser tests skip, unless SPECREVIEW_REQUIRE_BROWSER=1 (CI sets it) makes that an error.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from browser import new_page
from served_app import ServedApp

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def served_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("served")
    app = ServedApp(tmp / "reviewer.duckdb", tmp / "panel.log")
    yield app
    app.stop()


@pytest.fixture
def screen(browser):
    """The review screen size the one-screen acceptance names."""
    yield from new_page(browser, 1440, 900, console=False)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
