"""Pages in Debian's Chromium for the browser tests (tests/ui, tests/security); the `browser` fixture
is in tests/conftest.py."""
from __future__ import annotations

import re

from playwright.sync_api import expect


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


def open_tab(page, title, area=""):
    """Click the tab titled `title` (within `area`, a CSS selector, when titles repeat)."""
    page.locator(f"{area} .bk-tab".strip()).filter(has_text=re.compile(f"^{re.escape(title)}$")).first.click()


def open_as(page, app, reviewer, extra=""):
    """Open the review page as `reviewer` (no login) and wait for the first step; focus the page."""
    page.goto(f"{app.url}?reviewer={reviewer}{extra}", wait_until="domcontentloaded")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=60_000)
    page.locator(".sr-step-view").first.click()  # focus the page, not an input
