"""Time on item in a real browser (issue 47, item 3): the seconds a verdict is stored with count the page
in use, not the page hidden (another tab, a minimised window)."""
from __future__ import annotations

import pytest
from browser import open_as
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

from reviewer.store import Store

pytestmark = pytest.mark.ui

# the keyboard's marker, inside the shadow roots of Panel's components
ACTIVE_MS = """() => {
  const find = (root) => {
    const hit = root.querySelector('.sr-keyboard');
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) { const h = find(el.shadowRoot); if (h) return h; }
    return null;
  };
  const marker = find(document);
  return marker ? Number(marker.dataset.activeMs ?? -1) : -2;
}"""
# What a browser does when its tab goes to the background: visibilityState 'hidden', then the event.
SET_VISIBILITY = """(state) => {
  Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => state});
  document.dispatchEvent(new Event('visibilitychange'));
  return performance.now();
}"""
HIDDEN_MS = 4000


def test_a_hidden_page_is_not_counted(browser, tmp_path):
    db, first = seeded_db(tmp_path)
    app = ServedApp(db, tmp_path / "panel.log")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        open_as(page, app, "tim", f"&trajectory={first}")
        page.wait_for_function(f"({ACTIVE_MS})() >= 1500", timeout=60_000)  # in use: counted
        assert page.evaluate("document.hasFocus()")
        start = page.evaluate(ACTIVE_MS)
        hidden_at = page.evaluate(SET_VISIBILITY, "hidden")
        page.wait_for_function(f"performance.now() > {hidden_at + HIDDEN_MS}", timeout=60_000)
        # at most the clock's last second before the page went hidden
        assert page.evaluate(ACTIVE_MS) - start <= 1100
        page.evaluate(SET_VISIBILITY, "visible")
        page.wait_for_function(f"({ACTIVE_MS})() >= {start + 2500}", timeout=60_000)
        shown = page.evaluate(ACTIVE_MS)
        wall = page.evaluate("performance.now()") / 1000.0
        page.keyboard.press("a")
        expect(page.locator(".sr-ack")).to_contain_text("'approve'", timeout=30_000)
    finally:
        page.close()
        app.stop()
    store = Store(db)
    stored = store.labels.latest_review(first, "tim")["active_s"]
    store.close()
    # the page's own count at the key (its clock ticks each second), never the hidden seconds
    assert shown / 1000.0 - 1.5 <= stored <= shown / 1000.0 + 1.5
    assert stored <= wall - HIDDEN_MS / 1000.0 + 1.5
