"""The Conflicts tab's list: a click names its conflict by key, and the detail and the resolver follow it."""
from __future__ import annotations

from reviewer.components.conflicts import ConflictQueue
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def test_a_click_chooses_the_conflict_it_names(tmp_path):
    store = Store(tmp_path / "conflicts.duckdb")
    seed_demo_if_empty(store)
    rows = [r for r in store.queue.queue_items(limit=100) if r["task"] != "verify"][:2]
    for row in rows:  # two reviewers disagree on two items
        store.labels.add_review(row["trajectory_id"], "ann", "approve")
        store.labels.add_review(row["trajectory_id"], "bo", "reject")
    merger = ConflictQueue(state=ReviewState(store, reviewer="cy", blind=False))  # open review: all listed
    merger.refresh()
    assert {i["item_id"] for i in merger.items} == {r["trajectory_id"] for r in rows}
    assert merger.selected == 0 and merger._table.selected == 0
    second = merger.items[1]
    merger._table._handle_msg({"key": f"trajectory:{second['item_id']}"})  # the browser's message for a click
    assert merger.current is second and merger._table.selected == 1
    assert str(second.get("object_id") or second["item_id"]) in merger._detail.object
    merger._table._handle_msg({"key": "trajectory:not-a-conflict"})
    assert merger.current is second  # nothing else chosen
    store.close()


def test_the_list_pages_through_conflicts_oldest_first_and_says_how_many(tmp_path, monkeypatch):
    """A page of conflicts at a time (every conflict of a large store is neither read nor sent), the
    count above it, and the page moves back when resolutions leave fewer."""
    monkeypatch.setattr("reviewer.components.conflicts.CONFLICT_PAGE", 2)
    store = Store(tmp_path / "pages.duckdb")
    seed_demo_if_empty(store)
    rows = [r for r in store.queue.queue_items(limit=100) if r["task"] != "verify"][:5]
    for row in rows:
        store.labels.add_review(row["trajectory_id"], "ann", "approve")
        store.labels.add_review(row["trajectory_id"], "bo", "reject")
    merger = ConflictQueue(state=ReviewState(store, reviewer="cy", blind=False))  # open review: all listed
    merger.refresh()
    seen = [i["item_id"] for i in merger.items]
    assert merger.total == 5 and len(seen) == 2 and "1-2 of 5 open conflicts" in merger._count.object
    assert merger._older.disabled and not merger._newer.disabled
    merger._newer.clicks += 1
    merger._newer.clicks += 1
    assert merger.page == 2 and len(merger.items) == 1 and "5-5 of 5" in merger._count.object
    assert merger._newer.disabled and not merger._older.disabled
    last = merger.items[0]["item_id"]
    assert last not in seen
    for row in rows[:2]:  # two resolved: three left, two pages; the third no longer exists
        store.reviews.add_resolution("trajectory", row["trajectory_id"], "mia", "reject", merger_comment="bad data")
    merger.refresh()
    assert merger.page == 1 and [i["item_id"] for i in merger.items][-1] == last
    assert "3-3 of 3 open conflicts" in merger._count.object
    store.close()


def test_a_hidden_conflicts_tab_rereads_when_shown_not_after_every_verdict(tmp_path):
    """A verdict saved in the Review tab re-reads the Conflicts list only while that tab is on screen
    (`state.main_tab`); hidden, it is re-read when it is opened again (LazyTab), so `a` does not pay for it."""
    store = Store(tmp_path / "hidden.duckdb")
    seed_demo_if_empty(store)
    rows = [r for r in store.queue.queue_items(limit=100) if r["task"] != "verify"][:3]
    for row in rows:
        store.labels.add_review(row["trajectory_id"], "ann", "approve")
    state = ReviewState(store, reviewer="cy")
    merger = ConflictQueue(state=state)
    merger.refresh()
    assert merger.total == 0
    state.main_tab = "review"  # the page's tabs: the Review tab on screen
    state.open_item(trajectory_id=rows[0]["trajectory_id"])
    assert state.writer.save("verdict", action="reject") is not None  # a conflict with ann
    assert merger.total == 0  # not re-read while hidden
    state.main_tab = "conflicts"
    merger.refresh()  # what opening the tab does (layouts.audit.LazyTab.open)
    assert merger.total == 1
    state.open_item(trajectory_id=rows[1]["trajectory_id"])
    assert state.writer.save("verdict", action="reject") is not None
    assert merger.total == 2  # on screen: re-read after the verdict
    store.close()
