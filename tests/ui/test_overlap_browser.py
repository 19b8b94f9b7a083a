"""Planned overlap in a real browser (issue 47, item 6): in a campaign of two reviewers per item, the third
reviewer is refused a verdict on an item two others labelled (opened by its address) and their queue gives
them another item; no item gets a third verdict."""
from __future__ import annotations

import pytest
from browser import open_as
from playwright.sync_api import expect
from served_app import ServedApp

from reviewer.services.campaigns import create_campaign
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui


def test_no_third_verdict_while_another_item_lacks_its_second(browser, tmp_path):
    db = tmp_path / "pair.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    items = create_campaign(store, "pair", task="a", reviewers=["ann", "bo", "cy"], per_item=2, limit=4)["items"]
    store.close()  # the server process must own the file
    app = ServedApp(db, tmp_path / "panel.log")
    pages = {name: browser.new_page(viewport={"width": 1440, "height": 900}) for name in ("ann", "bo", "cy")}
    try:
        for name in ("ann", "bo"):  # both are handed the first item and approve it
            page = pages[name]
            open_as(page, app, name, "&session=pair")
            assert f"trajectory={items[0]}" in page.url
            page.keyboard.press("a")
            expect(page.locator(".sr-ack")).to_contain_text("'approve'", timeout=30_000)
        cy = pages["cy"]
        open_as(cy, app, "cy", f"&session=pair&trajectory={items[0]}")  # the first item, by its address
        cy.keyboard.press("a")
        expect(cy.locator(".sr-error")).to_contain_text("per item", timeout=30_000)
        expect(cy.locator(".sr-ack")).not_to_contain_text("'approve'")
        open_as(cy, app, "cy", "&session=pair")  # the campaign: their queue hands them another item
        assert f"trajectory={items[0]}" not in cy.url
        cy.keyboard.press("a")
        expect(cy.locator(".sr-ack")).to_contain_text("'approve'", timeout=30_000)
    finally:
        for page in pages.values():
            page.close()
        app.stop()
    store = Store(db)
    campaign_id = store.sessions.find_session("pair")["id"]
    counts = store.sessions.verdict_counts(campaign_id)
    store.close()
    assert counts[items[0]] == 2 and max(counts.values()) == 2 and sum(counts.values()) == 3
