"""Real-browser fixtures: a `panel serve reviewer` subprocess and Debian's Chromium via Playwright.

`playwright install` cannot download browsers here; we launch the system `chromium` binary. Where it
is missing the browser tests skip, unless SPECREVIEW_REQUIRE_BROWSER=1 (CI sets it) makes that an error.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from served_app import CHROMIUM_ARGS, ServedApp

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def served_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("served")
    app = ServedApp(tmp / "reviewer.duckdb", tmp / "panel.log")
    yield app
    app.stop()


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("SPECREVIEW_REQUIRE_BROWSER") == "1":
            pytest.fail("Debian's chromium is not installed (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


def new_page(browser, width: int, height: int, console: bool = True):
    """A page in a fresh context; `console_errors` collects page errors (and console errors)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.console_errors = []
    if console:
        pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda err: pg.console_errors.append(str(err)))
    yield pg
    context.close()


@pytest.fixture
def page(browser):
    yield from new_page(browser, 1600, 1000)


@pytest.fixture
def screen(browser):
    """The review screen size the one-screen acceptance names."""
    yield from new_page(browser, 1440, 900, console=False)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
