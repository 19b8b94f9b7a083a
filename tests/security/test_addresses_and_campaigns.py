"""Finding 9: an address naming an unknown campaign or trajectory says so (it does not silently show
something else); a label on an item outside the campaign is refused, not stored as the campaign's."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def test_a_label_on_an_item_outside_the_campaign_is_refused(tmp_path, wait_for_background_renders):
    store = Store(tmp_path / "c.duckdb")
    seed_demo_if_empty(store)
    ids = [r["trajectory_id"] for r in store.queue.queue_items(limit=5)]
    store.sessions.create_session("spring", "verdicts", ids[:2], ["ann"])
    state = ReviewState(store, reviewer="ann")
    assert state.open_campaign("spring")
    before = store.labels.reviews_for(ids[3])
    assert state.open_item(trajectory_id=ids[3])  # opened by address, but not a campaign item
    assert state.writer.save("verdict", action="approve") is None and "not part of campaign 'spring'" in state.error
    assert state.writer.save("score", score=3) is None
    assert store.labels.reviews_for(ids[3]) == before == []
    assert state.open_item(trajectory_id=ids[0]) and state.writer.save("verdict", action="approve") is not None
    wait_for_background_renders()
    store.close()


@pytest.mark.ui
def test_an_unknown_address_says_so(browser, tmp_path):
    db, _ = seeded_db(tmp_path)
    app = ServedApp(db, tmp_path / "panel.log")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{app.url}?reviewer=ann&session=nope&trajectory=not-an-id", wait_until="domcontentloaded")
        error = page.locator(".sr-error")
        expect(error).to_contain_text("No audit campaign named 'nope'", timeout=60_000)
        expect(error).to_contain_text("not-an-id is not in the database")
        expect(error).to_contain_text("Showing the first item of the queue instead")
    finally:
        context.close()
        app.stop()
