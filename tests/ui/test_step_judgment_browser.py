"""Judging steps from the keyboard (issue 47, item 4): `x` on the step on screen stores 'incorrect' with the
tag ticked under it, `c` on the next stores 'correct', both acknowledged and read back from the store."""
from __future__ import annotations

import pytest
from browser import open_as
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

from reviewer.store import Store

pytestmark = pytest.mark.ui


def test_steps_are_judged_with_keys(browser, tmp_path):
    db, first = seeded_db(tmp_path)
    app = ServedApp(db, tmp_path / "panel.log")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        open_as(page, app, "pat", f"&trajectory={first}")
        page.locator(".sr-step-judgment-tags label").first.click()  # the taxonomy's first tag
        page.locator(".sr-step-view").first.click()  # keys to the page again
        page.keyboard.press("x")
        expect(page.locator(".sr-ack")).to_contain_text("step 1 judged incorrect", timeout=30_000)
        page.keyboard.press("j")
        expect(page.locator(".sr-step-view")).to_contain_text("Step 2/", timeout=30_000)
        page.keyboard.press("c")
        expect(page.locator(".sr-ack")).to_contain_text("step 2 judged correct", timeout=30_000)
        expect(page.locator(".sr-step-judgment-target")).to_contain_text("judged correct")
    finally:
        page.close()
        app.stop()
    store = Store(db)
    rows = {r["step_idx"]: r for r in store.step_judgments.step_judgments_for(first, "pat")}
    store.close()
    assert rows[0]["judgment"] == "incorrect" and len(rows[0]["tags"]) == 1
    assert rows[1]["judgment"] == "correct" and list(rows[1]["tags"]) == []
