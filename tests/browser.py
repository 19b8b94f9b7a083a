"""Pages in Debian's Chromium for the browser tests (tests/ui, tests/security); the `browser` fixture
is in tests/conftest.py."""
from __future__ import annotations


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
