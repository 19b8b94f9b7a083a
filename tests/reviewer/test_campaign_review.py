"""Issue 47, item 6, through the review state (no browser; the demo's real DuckDB file): three reviewers in a
campaign of two reviewers per item each open what their queue gives them and approve it; no item gets a third
verdict while another lacks its second, and a verdict on an item two others hold is refused on the page."""
from __future__ import annotations

from reviewer.review_state import ReviewState
from reviewer.services.campaigns import create_campaign


def reviewer_in(store, name):
    state = ReviewState(store, reviewer=name)
    assert state.open_campaign("pair")
    state.filters.queue_state = "todo"
    return state


def test_three_reviewers_two_per_item_through_the_review_state(demo_store):
    items = create_campaign(demo_store, "pair", task="a", reviewers=["ann", "bo", "cy"], per_item=2,
                            limit=6)["items"]
    campaign_id = demo_store.sessions.find_session("pair")["id"]
    people = {name: reviewer_in(demo_store, name) for name in ("ann", "bo", "cy")}
    for state in people.values():  # all three open the campaign at once: the third is handed another item
        assert state.open_first()
    assert people["ann"].item.trajectory_id == people["bo"].item.trajectory_id == items[0]
    assert people["cy"].item.trajectory_id == items[1]

    late = ReviewState(demo_store, reviewer="cy")  # cy opens the first item by its address in another tab
    assert late.open_campaign("pair") and late.open_item(trajectory_id=items[0])
    assert late.writer.save("verdict", action="reject") is None and "plans 2 reviewer(s) per item" in late.error

    for _ in range(12):
        for name in ("ann", "cy", "bo", "cy"):  # cy works twice as fast
            state = people[name]
            if state.item is None or state.writer.save("verdict", action="approve") is None:
                continue
            counts = demo_store.sessions.verdict_counts(campaign_id)
            assert max(counts.values()) <= 2, counts
            state.open_first()  # the next item their queue (to do, theirs to take) gives them
    assert demo_store.sessions.verdict_counts(campaign_id) == dict.fromkeys(items, 2)
